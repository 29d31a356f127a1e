"""`surveyctl surveys list`: the account's surveys, marked when this environment manages them.

\b
surveyctl surveys list                          # drafts, live and paused surveys
surveyctl surveys list --status live,paused --unmanaged
surveyctl surveys list --status all --format csv > surveys.csv
"""

from __future__ import annotations

import sys

import click
from rich.console import Console

from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import WholeSummaries, format_option, raw_cells_option
from surveyctl.jsontext import dumps
from surveyctl.ops.rows import make_writer
from surveyctl.reconcile.discovery import ROW_FIELDS, ListedSurvey, list_surveys
from surveyctl.statuses import CLOSED, DRAFT, LIVE, PAUSED, SURVEY_STATUSES

# Surveys that can still change; closed ones only when asked for.
DEFAULT_STATUSES = "draft,live,paused"
ALL_STATUSES = (DRAFT, LIVE, PAUSED, CLOSED)


def survey_statuses(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    """A click callback reading `live,paused`, `22,33` or `all` as status codes."""
    codes: list[int] = []
    for part in (p.strip().lower() for p in value.split(",") if p.strip()):
        if part == "all":
            codes.extend(ALL_STATUSES)
        elif part in SURVEY_STATUSES:
            codes.append(SURVEY_STATUSES[part])
        elif part.isdigit() and int(part) in ALL_STATUSES:
            codes.append(int(part))
        else:
            names = ", ".join(SURVEY_STATUSES)
            raise click.BadParameter(f"{part!r} is not a survey status: use {names} or all")
    if not codes:
        raise click.BadParameter("name at least one status")
    return tuple(dict.fromkeys(codes))


STATUS_HELP = "Survey statuses, comma-separated: draft, live, paused, closed (or codes), or all."


def statuses_option(help: str = STATUS_HELP):
    """--status of the account's surveys (surveys list, import --all-unmanaged)."""
    return click.option(
        "--status",
        "statuses",
        default=DEFAULT_STATUSES,
        show_default=True,
        callback=survey_statuses,
        help=help,
    )


status_option = statuses_option()


@click.group(name="surveys", cls=WholeSummaries)
def surveys() -> None:
    """The account's surveys in the marketplace."""


@surveys.command(name="list")
@status_option
@click.option("--unmanaged", is_flag=True, help="Only surveys this environment does not manage.")
@format_option("table", "json", "csv", "tsv")
@raw_cells_option
@pass_context
def list_command(
    ctx: CliContext,
    statuses: tuple[int, ...],
    unmanaged: bool,
    output_format: str,
    raw_cells: bool,
) -> None:
    """Every survey of the account in the statuses of --status (all pages), with the address
    under which this environment manages it; `import --all-unmanaged` adopts the others."""
    state = ctx.state_store().load()
    listed = list_surveys(ctx.client(), state, statuses)
    managed = sum(1 for survey in listed if survey.managed_as)
    if unmanaged:
        listed = [survey for survey in listed if survey.managed_as is None]
    if output_format == "json":
        click.echo(dumps([s.row() for s in listed]))
    elif output_format in ("csv", "tsv"):
        # The writer of `transactions list`: a title a spreadsheet would run as a formula is
        # made inert, and one holding a line break stays in its row.
        writer = make_writer(output_format, sys.stdout, raw_cells)
        writer.begin(list(ROW_FIELDS))
        writer.rows([s.row() for s in listed])
        writer.end()
    else:
        _table(listed)
    environment = ctx.environment().name
    if unmanaged:
        summary = f"{len(listed)} unmanaged survey(s) listed; {managed} more are managed"
    else:
        summary = f"{len(listed)} survey(s) listed, {managed} of them managed"
    click.echo(f"{summary} in environment {environment}.", err=True)


def _table(listed: list[ListedSurvey], console: Console | None = None) -> None:
    """The surveys as a table on `console` (the shared one: piped, nothing is cut). On a narrow
    terminal only the title and the address wrap; ids, statuses, locales and prices stay whole.
    """
    if not listed:
        # Nothing on stdout: the count on stderr says so, and a script reads an empty list.
        return
    console = console or make_console()
    rows = [
        (
            str(survey.ps_survey_id),
            survey.status_name,
            survey.title,
            survey.localization or "",
            "" if survey.completes_required is None else str(survey.completes_required),
            "" if survey.offer_price is None else f"{survey.offer_price:g}",
            survey.managed_as or "-",
        )
        for survey in listed
    ]
    # GOAL, not COMPLETES: the column is completes_required, and a live survey's reader took
    # "COMPLETES 400" for 400 completes made (`status` shows those against the goal).
    headers = ("ID", "STATUS", "TITLE", "LOCALE", "GOAL", "PRICE", "MANAGED AS")
    wrapping = {"TITLE", "MANAGED AS"}
    table = plain_table()
    for index, name in enumerate(headers):
        if name in wrapping:
            table.add_column(name, overflow="fold")
        else:  # short values a reader copies (ids) or scans: as wide as the widest
            widest = max(len(name), *(len(row[index]) for row in rows))
            table.add_column(name, no_wrap=True, min_width=widest)
    for row in rows:
        table.add_row(*row)
    console.print(table)
