"""`surveyctl adjustments`: every adjustment submitted from here, and how each one ended.

The list comes from the local journal (`surveyctl.ops.adjust_journal`): each submission with
its time, file, number of transactions and outcome (the service's adjustment id and status,
its refusal, or that its answer never arrived). For a submission whose answer never arrived
the service is asked what it shows of its transactions (unless `--offline`), and what it says
is recorded. `--show REF` prints one submission in full, as JSON: its transactions and answer
(REF: the list's ref or its start, or the adjustment id the service gave).
"""

from __future__ import annotations

import json

import click

from surveyctl.cli.adjust import show_unresolved
from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.errors import SurveyctlError
from surveyctl.ops.adjust import ReadBack
from surveyctl.ops.adjust_journal import AdjustmentJournal, AdjustmentRecord


@click.command(name="adjustments")
@click.option("--show", "ref", metavar="REF", help="Print one submission in full, as JSON.")
@click.option(
    "--offline",
    is_flag=True,
    help="Do not ask the service about submissions whose answer never arrived.",
)
@pass_context
def adjustments(ctx: CliContext, ref: str | None, offline: bool) -> None:
    """List the adjustments submitted from this project and how each one ended."""
    # Named even when the journal alone answers: the listing of one environment must not be
    # taken for another's.
    ctx.announce()
    environment = ctx.environment()
    journal = AdjustmentJournal.of(ctx.config(), environment)
    if ref is not None:
        found = journal.matching(ref)
        if len(found) > 1:
            raise SurveyctlError(
                f"{ref!r} starts the refs of {len(found)} adjustments in {journal.path}: give "
                "more of it"
            )
        if not found:
            raise SurveyctlError(
                f"no adjustment {ref!r} in {journal.path}: give a ref the list shows (or its "
                "start) or the adjustment id adjust printed"
            )
        click.echo(json.dumps(found[0].to_json(), indent=2, ensure_ascii=False))
        return
    records = journal.records()
    console = make_console()
    if not records:
        # A message, not a row: on stderr, as `state list` says it has none, so that a script
        # reading the list reads nothing.
        click.echo(
            f"No adjustment was submitted to environment {environment.name!r} from here.", err=True
        )
        return
    unresolved = [r for r in records if r.unresolved]
    if unresolved and not offline:
        client = ctx.client()
        for record in unresolved:
            show_unresolved(record, journal, client, console)
    table = plain_table()
    for column in ("ref", "sent", "transactions", "outcome", "file"):
        table.add_column(column, justify="right" if column == "transactions" else "left")
    for record in records:
        table.add_row(
            record.ref[:8], record.at, str(len(record.transactions)), _outcome(record), record.file
        )
    console.print(table)


def _outcome(record: AdjustmentRecord) -> str:
    if record.outcome == "answered":
        answer = record.answer or {}
        return f"adjustment {answer.get('adjustment_id', '?')}, status {answer.get('status', '?')}"
    if record.outcome == "refused":
        return f"refused: {record.reason}"
    if record.outcome == "withdrawn":
        return "not sent (interrupted first)"
    if record.outcome == "superseded":
        return "answer lost; submitted again later"
    if record.in_flight:
        return f"being submitted now (process {record.process.get('pid')})"
    found = ReadBack.from_json(record.check)
    if found is None:
        return "answer lost; not read back yet"
    return f"answer lost; {found.verdict} ({found.reconciled} of {found.checked} reconciled)"
