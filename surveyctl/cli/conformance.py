"""`surveyctl conformance`: where the user's account differs from what surveyctl assumes.

The command is the thin face of `surveyctl.conformance`: it checks the output path, asks by
the approval rule (it writes one draft survey), runs the checks with Ctrl-C, SIGTERM and SIGHUP
turned into an orderly stop that still removes the draft, and prints the table.
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from surveyctl.cli import confirm
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import FilePath, format_option, yes_help
from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message
from surveyctl.jsontext import dumps
from surveyctl.safety import Interrupted, Interrupts, OutputPathError, check_output_path


@functools.cache
def _widths() -> tuple[int, int, int]:
    """The widths of the id, source and result columns: the rows are printed as each check
    ends, so the columns are as wide as the longest of every assumption there is."""
    from surveyctl.conformance import assumptions, probe

    rows = [(a.id, a.source) for a in (*assumptions.BEFORE_DRAFT, *assumptions.ON_DRAFT)]
    rows += [(assumptions.REMOVED[0], assumptions.REMOVED[2]), ("assumption", "source")]
    rows += [(row[0], row[2]) for row in assumptions.NOT_CHECKED]
    verdicts = (probe.HOLDS, probe.DIFFERS, probe.NOT_CHECKED, "result")
    return max(len(r[0]) for r in rows), max(len(r[1]) for r in rows), max(map(len, verdicts))


@click.command("conformance")
@click.option("--locale", default="en_US", show_default=True, help="Locale of the draft survey.")
@click.option(
    "--out",
    "--output",
    "output",
    type=FilePath(dir_okay=False, path_type=Path),
    help="Also write the report as JSON to FILE (to attach to a bug report).",
)
@format_option("text", "json", help="How to show the report.")
@click.option("--yes", is_flag=True, help=yes_help("Go ahead"))
@pass_context
def conformance_command(
    ctx: CliContext, locale: str, output: Path | None, output_format: str, yes: bool
) -> None:
    """Check surveyctl's assumptions about the API on the environment's account, with one
    draft survey that is never launched and is deleted at the end."""
    from surveyctl.conformance import (
        ConformanceBusy,
        LeftoverStuck,
        NotTheDraft,
        check_locale,
        draft_left_error,
        journal_for,
        left_behind,
        run_conformance,
    )

    if output is not None:
        check_output_path(output, "--output")
    environment = ctx.environment()
    action = (
        f"create one draft survey on environment {environment.name!r} to check surveyctl's "
        "assumptions, and delete it at the end"
    )
    if not confirm.terminal():
        # No answer of the service could make the run allowed: refused before any request.
        confirm_write(ctx, action, approved=yes, can_ask=False)
    client = ctx.client()
    check_locale(client, environment.name, locale)  # a typo is refused before anyone is asked
    if not confirm_write(ctx, action, approved=yes):
        raise SurveyctlError("nothing was checked")
    journal = journal_for(ctx.config().work_dir, environment.name)
    show = _print_row if output_format == "text" else None
    if show is not None:
        _print_header()
    interrupts = Interrupts()
    try:
        with interrupts:
            report = run_conformance(client, journal, environment.name, locale=locale, on_row=show)
    except KeyboardInterrupt:
        raise Interrupted(
            f"conformance check interrupted; {left_behind(journal)}", interrupts.exit_code
        ) from None
    except (LeftoverStuck, NotTheDraft, ConformanceBusy):  # no draft of this run is left
        raise
    except SurveyctlError as exc:
        # A service lost mid-run: say what stopped it and what it leaves on the account.
        raise SurveyctlError(f"{exc}; {left_behind(journal)}") from None
    if output_format == "json":
        click.echo(dumps(report.as_dict()))
    else:
        _print_summary(report)
    if output is not None:  # after the report is shown: a full disk does not lose the run
        try:
            report.write_json(output)
        except OSError as exc:
            where = f"write --output {output}"
            raise OutputPathError(
                f"{os_error_message(exc, output, where)}; the report is above"
            ) from None
    left = draft_left_error(report, journal)
    if left is not None:
        raise SurveyctlError(left)


def _print_header() -> None:
    click.echo(_line("assumption", "source", "result", "seen"))


def _print_row(row) -> None:
    click.echo(_line(row.id, row.source, row.verdict, row.seen))


def _line(first: str, source: str, verdict: str, seen: str) -> str:
    widths = _widths()
    cells = (first.ljust(widths[0]), source.ljust(widths[1]), verdict.ljust(widths[2]))
    return " | ".join((*cells, seen)).rstrip()


def _print_summary(report) -> None:
    if report.leftover is not None and report.leftover.survey_id is not None:
        click.echo(f"An earlier run's draft {report.leftover.survey_id} was {report.leftover.how}.")
    if report.draft is not None and report.draft.survey_id is not None and report.draft.gone:
        click.echo(f"The draft {report.draft.survey_id} was {report.draft.how}.")
    list_mod_on = report.as_dict()["list_carries_mod_on"]
    click.echo(
        "The survey list carries mod_on: "
        + {True: "yes", False: "no (a plan reads every survey)", None: "not checked"}[list_mod_on]
    )
    click.echo(
        f"{report.count('holds')} hold, {report.count('differs')} differ, "
        f"{report.count('not checked')} not checked."
    )
