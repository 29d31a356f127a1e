"""`surveyctl adjust FILE`: submit transactions for reconciliation (spec 4.10).

An adjustment moves money, so the command shows what it will submit and asks first; without
a terminal to ask on, it needs `--yes`, and on a protected environment also `--env NAME`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.console import console as make_console
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.ops.adjust import STATUS_NAMES, AdjustmentUpload, load_upload
from surveyctl.safety import check_output_path


def _interactive() -> bool:
    return sys.stdin.isatty()


@click.command(name="adjust")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--yes",
    is_flag=True,
    help="Submit without asking (needed without a terminal; a protected environment also "
    "needs --env NAME).",
)
@click.option(
    "--survey",
    "survey_id",
    type=int,
    help="Submit through the per-survey path for this survey id.",
)
@click.option(
    "--out",
    "--output",
    "output",
    type=click.Path(path_type=Path),
    help="Also write the service's full answer as JSON to this file.",
)
@pass_context
def adjust(
    ctx: CliContext, file: Path, yes: bool, survey_id: int | None, output: Path | None
) -> None:
    """Submit the transactions listed in FILE (CSV or JSON) for adjustment."""
    if output is not None:
        check_output_path(output, "--output")  # the answer must not be lost once money moved
    upload = load_upload(file)
    client = ctx.client()  # names the environment before anything is asked
    console = make_console()
    render_preview(upload, console)
    action = f"submit {len(upload.transaction_ids)} transaction(s) for adjustment (money moves)"
    if not confirm_write(ctx, action, approved=yes, always_asks=True, can_ask=_interactive()):
        click.echo("nothing submitted", err=True)
        return
    response = client.adjust(upload.transaction_ids, survey_id=survey_id)
    if output is not None:
        output.write_text(json.dumps(response, indent=2) + "\n", encoding="utf-8")
    render_summary(response, console)


# summary counters shown to people, in this order (spec 2.12 names).
COUNTERS = (
    "transactions",
    "eligible",
    "completes",
    "rejected",
    "test",
    "alreadyReconciled",
    "invalid",
    "currentCompletes",
    "previouslyRejectedCompletes",
    "acceptingCompletesInCurrentUpload",
    "rejectingCompletesInCurrentUpload",
    "resultingCompletes",
    "totalRawCompletes",
    "totalRejects",
)
SURVEY_COUNTERS = ("transactions", "completes", "rejected", "alreadyReconciled", "invalid")


def render_preview(upload: AdjustmentUpload, console: Console) -> None:
    """What is about to be submitted: the number of transactions per survey."""
    total = len(upload.transaction_ids)
    surveys = sorted((s for s in upload.per_survey if s is not None))
    console.print(f"{total} transaction(s) will be submitted for adjustment:")
    table = Table(box=None, pad_edge=False)
    table.add_column("survey")
    table.add_column("transactions", justify="right")
    for survey in surveys:
        table.add_row(str(survey), str(upload.per_survey[survey]))
    if None in upload.per_survey:
        table.add_row("(survey not named in the file)", str(upload.per_survey[None]))
    console.print(table)
    if upload.duplicates:
        console.print(f"{upload.duplicates} repeated id(s) in the file are submitted once.")


def render_summary(response: dict, console: Console) -> None:
    """The adjustment's status, overall counters, reject percentage and per-survey table."""
    status = response.get("status")
    description = response.get("statusDescription") or STATUS_NAMES.get(status, "unknown")
    console.print(
        f"adjustment {response.get('adjustment_id', '?')}: status {status} ({description})"
    )
    summary = response.get("summary") or {}
    counters = Table(box=None, pad_edge=False, show_header=False)
    counters.add_column("counter")
    counters.add_column("value", justify="right")
    for name in COUNTERS:
        if name in summary:
            counters.add_row(name, str(summary[name]))
    console.print(counters)
    if "rejectPercentage" in summary:
        console.print(f"reject percentage: {summary['rejectPercentage']} %")
    per_survey = summary.get("summaryPerSurvey") or []
    if per_survey:
        table = Table(box=None, pad_edge=False, title="per survey", title_justify="left")
        table.add_column("survey")
        for name in SURVEY_COUNTERS:
            table.add_column(name, justify="right")
        table.add_column("reject %", justify="right")
        table.add_column("validCap")
        for item in per_survey:
            table.add_row(
                str(item.get("surveyId", "?")),
                *(str(item.get(name, "")) for name in SURVEY_COUNTERS),
                str(item.get("rejectPercentage", "")),
                str(item.get("validCap", "")),
            )
        console.print(table)
