"""`surveyctl adjust FILE`: submit transactions for reconciliation (spec 4.10).

An adjustment moves money, so the command shows what it will submit and asks first; without
a terminal to ask on, it needs `--yes`, and on a protected environment also `--env NAME`.
Declining exits 1 with nothing sent. `--dry-run` shows the same preview and sends nothing, so
an adjustment can be reviewed (in CI too) before it is submitted.

The answer cannot be asked for again, so nothing is sent before it can be kept: `--output` is
reserved beside its target first (`surveyctl.ops.answer_file`), and the submission is
journalled before it leaves and settled when the answer comes (`surveyctl.ops.adjust_journal`).
SIGINT, SIGTERM and SIGHUP while the request is in flight wait for the answer and record it
(exit 130, 143 or 129). The next `adjust` of transactions an earlier submission carried shows
that submission (its answer, or, when the answer never arrived, what the service's transaction
records tell) and sends them again only with `--resubmit`; `surveyctl adjustments` lists every
submission.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from surveyctl.cli import confirm
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import SURVEY_ID, FilePath, SpelledCommand, spelled, yes_help
from surveyctl.errors import SurveyctlError
from surveyctl.ops.adjust import (
    STATUS_NAMES,
    AdjustmentUpload,
    ReadBack,
    check_survey_path,
    load_upload,
    read_back,
    submit,
)
from surveyctl.ops.adjust_journal import AdjustmentJournal, AdjustmentRecord
from surveyctl.ops.answer_file import AnswerFile
from surveyctl.safety import Interrupted, Interrupts
from surveyctl.signals import tell_from_handler

# Room reserved for the answer: its summary, and an entry per survey (about 600 bytes each).
ANSWER_BYTES = 16 * 1024
ANSWER_BYTES_PER_SURVEY = 2 * 1024
SHOWN_IDS = 10


@click.command(name="adjust", cls=SpelledCommand)
@click.argument("file", type=FilePath(dir_okay=False, path_type=Path))
@click.option(
    "--yes",
    is_flag=True,
    help=yes_help("Submit", always_asks=True),
)
@click.option(
    "--survey",
    "survey_id",
    type=SURVEY_ID,  # survey ids are positive: -1 would reach a path of its own
    metavar="SURVEY_ID",
    help="Submit through the per-survey path for this survey id (the file's survey, if it "
    "names one).",
)
@click.option(
    "--out",
    "--output",
    "output",
    type=FilePath(path_type=Path),
    metavar="FILE",
    help="Also write the service's full answer as JSON to this file.",
)
@click.option(
    "--resubmit",
    is_flag=True,
    help="Submit again transactions that an earlier adjustment from here carried (answered, "
    "or with its answer lost: it may have been made).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be submitted (and any earlier submission of the same transactions) "
    "and submit nothing.",
)
@pass_context
def adjust(
    ctx: CliContext,
    file: Path,
    yes: bool,
    survey_id: int | None,
    output: Path | None,
    resubmit: bool,
    dry_run: bool,
) -> None:
    """Submit the transactions listed in FILE (CSV or JSON) for adjustment."""
    if dry_run and output is not None:
        raise click.UsageError(
            f"{spelled('output')} keeps the service's answer, and a dry run gets none: leave "
            "one of them out"
        )
    upload = load_upload(file)
    check_survey_path(upload, survey_id, file)  # before anything is reserved or sent
    if dry_run:
        _preview(ctx, upload, survey_id, resubmit=resubmit)
        click.echo("Dry run: nothing was submitted.", err=True)
        return
    reserved = None
    if output is not None:  # the answer must not be lost once money moved
        size = ANSWER_BYTES + ANSWER_BYTES_PER_SURVEY * len(upload.per_survey)
        reserved = AnswerFile.reserve(output, spelled("output"), size)
    try:
        _submit(ctx, file, upload, survey_id, reserved, yes=yes, resubmit=resubmit)
    finally:
        if reserved is not None:
            reserved.discard()


def _submit(
    ctx: CliContext,
    file: Path,
    upload: AdjustmentUpload,
    survey_id: int | None,
    reserved: AnswerFile | None,
    *,
    yes: bool,
    resubmit: bool,
) -> None:
    client = ctx.client()  # names the environment before anything is asked
    of_survey = f" of survey {survey_id}" if survey_id is not None else ""
    action = (
        f"submit {len(upload.transaction_ids)} transaction(s){of_survey} for adjustment "
        "(money moves)"
    )
    if not confirm.terminal():
        # A protected environment not named with --env and approved is refused whatever the
        # service would say, so before the read-back of earlier submissions asks it anything.
        confirm_write(ctx, action, approved=yes, can_ask=False)
    journal, earlier, console = _preview(ctx, upload, survey_id, resubmit=resubmit)
    with Interrupts(_interrupted) as signals:
        try:
            if not confirm_write(ctx, action, approved=yes, always_asks=True):
                raise SurveyctlError("nothing submitted: the adjustment was declined")
            signals.finish_in_flight()
        except KeyboardInterrupt:
            raise Interrupted(
                "adjust interrupted before anything was sent; nothing was submitted",
                signals.exit_code,
            ) from None
        pairs = [(t, upload.surveys.get(t)) for t in upload.transaction_ids]
        record = journal.sending(file, pairs, survey_id, [r.ref for r in earlier])
        if signals.stop.is_set():
            journal.settle(record, "withdrawn", reason="interrupted before it was sent")
            raise Interrupted(
                "adjust interrupted before the request was sent; nothing was submitted",
                signals.exit_code,
            )
        response, unrecorded = submit(client, journal, record, upload, survey_id)
    render_summary(response, console)  # the adjustment id reaches stdout before anything else
    if unrecorded is not None:
        raise SurveyctlError(
            f"adjustment {response.get('adjustment_id', '?')} was submitted (see above), but "
            f"its answer could not be recorded: {unrecorded}"
        )
    if reserved is not None:
        try:
            reserved.write(json.dumps(response, indent=2) + "\n")
        except OSError as exc:
            raise SurveyctlError(
                f"adjustment {response.get('adjustment_id', '?')} was submitted and its answer "
                f"is recorded (surveyctl adjustments --show {record.ref[:8]}), but "
                f"{spelled('output')} {reserved.path} could not be written: "
                f"{(exc.strerror or str(exc)).lower()}"
            ) from exc
    if signals.stop.is_set():
        raise Interrupted(
            f"adjust interrupted: the adjustment in flight was answered and recorded "
            f"({response.get('adjustment_id', '?')})",
            signals.exit_code,
        )


def _preview(
    ctx: CliContext,
    upload: AdjustmentUpload,
    survey_id: int | None,
    *,
    resubmit: bool,
) -> tuple[AdjustmentJournal, list[AdjustmentRecord], Console]:
    """What a submission of `upload` would do, shown before anything is sent: the earlier
    submissions of the same transactions (refused unless --resubmit, as a real run refuses
    them), then the surveys and counts. The journal and those records, for the submission."""
    client = ctx.client()
    journal = AdjustmentJournal.of(ctx.config(), ctx.environment())
    console = make_console()
    earlier = journal.overlapping(upload.transaction_ids)
    for record in earlier:
        show_earlier(record, journal, client, console)
    busy = [r for r in earlier if r.in_flight]
    if busy:
        raise SurveyctlError(
            f"nothing submitted: adjustment {busy[0].ref[:8]} of some of these transactions is "
            f"being submitted now by process {busy[0].process.get('pid')}"
        )
    if earlier and not resubmit:
        submitted = set().union(*(r.ids for r in earlier))
        carried = [t for t in upload.transaction_ids if t in submitted]
        raise SurveyctlError(
            f"nothing submitted: {len(carried)} of these {len(upload.transaction_ids)} "
            f"transaction(s) were submitted already by {len(earlier)} earlier adjustment(s) "
            "(see above); to submit them again anyway, pass --resubmit"
        )
    render_preview(upload, console, survey_id)
    return journal, earlier, console


def show_earlier(record: AdjustmentRecord, journal: AdjustmentJournal, client, console):
    """Says what is known of an earlier submission of some of the same transactions."""
    if record.outcome != "answered":
        show_unresolved(record, journal, client, console)
        return
    answer = record.answer or {}
    console.print(
        f"adjustment {record.ref[:8]} of {record.file} ({len(record.transactions)} "
        f"transaction(s), sent {record.at}) was answered: adjustment "
        f"{answer.get('adjustment_id', '?')}, status {answer.get('status', '?')}."
    )


def show_unresolved(record: AdjustmentRecord, journal: AdjustmentJournal, client, console):
    """Says what is known of a submission whose answer never arrived, reading back its
    transactions from the service (the finding is journalled)."""
    count = len(record.transactions)
    console.print(
        f"adjustment {record.ref[:8]} of {record.file} ({count} transaction(s), sent "
        f"{record.at}) "
        + (
            f"is being submitted now by process {record.process.get('pid')}."
            if record.in_flight
            else "got no answer"
            + (f": {record.reason}" if record.reason else " (the command was stopped)")
            + "."
        )
    )
    if record.in_flight:
        return
    found = read_back(client.get_transaction, record.transactions, record.survey_path)
    journal.settle(record, "checked", check=found.to_json())
    console.print(outcome_sentence(record))


def outcome_sentence(record: AdjustmentRecord) -> str:
    """What the last read-back of an unresolved submission tells, in one sentence."""
    found = ReadBack.from_json(record.check) or ReadBack(0, 0, len(record.transactions))
    checked, reconciled = found.checked, found.reconciled
    verdict = found.verdict
    if verdict == "unknown":
        why = (
            f"its transactions could not be read back ({found.error})"
            if found.error
            else "the file named no survey for its transactions, so the service cannot be "
            "asked about them"
        )
        return f"Its outcome is unknown: {why}. {_carried(record)}"
    if verdict == "likely made":
        return (
            f"The service shows all {checked} transaction(s) read back as reconciled: the "
            "adjustment most likely reached it."
        )
    if verdict == "likely not made":
        return (
            f"None of the {checked} transaction(s) read back shows as reconciled: the "
            "adjustment most likely did not reach the service (or is still pending)."
        )
    return (
        f"{reconciled} of the {checked} transaction(s) read back show as reconciled: the "
        f"outcome is unclear (some may have been reconciled before). {_carried(record)}"
    )


def _carried(record: AdjustmentRecord) -> str:
    ids = record.ids
    shown = ", ".join(ids[:SHOWN_IDS]) + (", ..." if len(ids) > SHOWN_IDS else "")
    return (
        f"It carried {len(ids)} transaction(s): {shown} (all of them: `surveyctl "
        f"adjustments --show {record.ref[:8]}`)."
    )


def _interrupted(signal_name: str, first: bool) -> None:
    """Told from inside the signal handler (`tell_from_handler`)."""
    tell_from_handler(
        f"\n{signal_name} received: the adjustment in flight is answered and recorded before "
        "surveyctl stops.\n"
        if first
        else f"{signal_name} received again: still waiting for the adjustment's answer.\n"
    )


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


def render_preview(
    upload: AdjustmentUpload, console: Console, survey_id: int | None = None
) -> None:
    """What is about to be submitted: the number of transactions per survey. With `--survey`
    every transaction goes to that survey's path, whether the file names a survey or not
    (`check_survey_path` has refused a file naming another one)."""
    total = len(upload.transaction_ids)
    per_survey = dict(upload.per_survey)
    if survey_id is not None:
        per_survey = {survey_id: total}
    surveys = sorted((s for s in per_survey if s is not None))
    path = f" through the path of survey {survey_id}" if survey_id is not None else ""
    console.print(f"{total} transaction(s) will be submitted for adjustment{path}:")
    table = plain_table()
    table.add_column("survey")
    table.add_column("transactions", justify="right")
    for survey in surveys:
        table.add_row(str(survey), str(per_survey[survey]))
    if None in per_survey:
        table.add_row("(survey not named in the file)", str(per_survey[None]))
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
    counters = plain_table(show_header=False)
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
        table = plain_table(title="per survey", title_justify="left")
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
