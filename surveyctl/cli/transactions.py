"""`surveyctl transactions list|get|set-status`: a survey's respondent sessions (spec 4.4,
4.5, and the transaction status call of the public facts).

`list` reads every page and writes rows as they arrive, so a survey of any size exports in
flat memory. Progress goes to stderr; stdout (or --output) holds only the data. `set-status`
records a respondent's final status, which decides what the buyer pays: it shows what it will
send and asks first; without a terminal to ask on, it needs `--yes`. A status set, or whose
answer was lost, is recorded in the environment's history (`surveyctl state history`).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from surveyctl.api.transport import may_have_been_processed
from surveyctl.cli import confirm
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import note_quoting_the_service, plain_table, redraws
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import (
    NAME_AT_LEAST_ONE,
    SURVEY_ID,
    FilePath,
    SpelledCommand,
    WholeSummaries,
    format_option,
    int_list,
    quota_id_list,
    raw_cells_option,
    spelled,
    status_code,
    yes_help,
)
from surveyctl.errors import ApiError, ConnectionFailed, SurveyctlError
from surveyctl.jsontext import dumps
from surveyctl.ops import status_history
from surveyctl.ops.final_status import what_it_pays, what_it_was_said_to_cost
from surveyctl.ops.rows import FORMATS, RowWriter, make_writer
from surveyctl.ops.transactions import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    ExportProgress,
    TransactionQuery,
    export,
    iter_pages,
)
from surveyctl.render.values import printable
from surveyctl.safety import OutputFile, check_output_path
from surveyctl.state.status_changes import MADE, MADE_ANSWER_LOST, MAYBE_MADE, StatusSet
from surveyctl.statuses import OPEN_TRANSACTION_STATUSES, RETURN_STATUSES, transaction_status_name
from surveyctl.statuses import RETURN_STATUS_NAMES as STATUS_NAMES

# The columns a person wants on a terminal; csv/json/jsonl carry every key.
TABLE_COLUMNS: tuple[tuple[str, int], ...] = (
    ("Transaction ID", 38),
    ("Respondent Status Code", 6),
    ("Respondent Status Description", 30),
    ("Supplier ID", 8),
    ("PS Entry DateTime", 20),
    ("Respondent LOI", 6),
    ("Reconciliation Status", 6),
)


@dataclass
class TableWriter:
    """A table with fixed column widths, printed page by page so the columns line up."""

    console: Console
    _header_done: bool = False
    _columns: tuple[tuple[str, int], ...] = field(default=TABLE_COLUMNS)

    def begin(self, columns: list[str]) -> None:
        pass

    def rows(self, page: list[dict]) -> None:
        table = plain_table(show_header=not self._header_done)
        for name, width in self._columns:
            if self.console.is_terminal:  # fixed widths keep the pages aligned on screen
                table.add_column(name, width=width, no_wrap=True, overflow="ellipsis")
            else:  # piped: never cut a value (`--format tsv` for exact columns); as wide as
                # its header on every page, so that pages without one line up with the first
                table.add_column(name, min_width=max(width, len(name)), no_wrap=True)
        for row in page:
            table.add_row(*(_cell(row.get(name)) for name, _ in self._columns))
        self.console.print(table)
        self._header_done = True

    def end(self) -> None:
        # No rows, no table: the count on stderr says there were none, and stdout (or the
        # --output file) stays empty for a script, as the other list commands leave it.
        pass


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _status_list(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    """A click callback reading `complete,term`, `21,18` or a mix as status codes; the names
    are those of set-status, and any code goes (16 and 19 are sessions still open)."""
    codes: list[int] = []
    for part in (p.strip() for p in (value or "").split(",") if p.strip()):
        code = status_code(part)
        if code is None:
            names = ", ".join(RETURN_STATUSES)
            raise click.BadParameter(
                f"{part!r} is not a transaction status: use a code (such as 16,19) or {names}"
            )
        codes.append(code)
    if value is not None and not codes:
        raise click.BadParameter(NAME_AT_LEAST_ONE)
    return tuple(dict.fromkeys(codes))


@click.group(name="transactions", cls=WholeSummaries)
def transactions() -> None:
    """Read a survey's transactions (respondent sessions)."""


@transactions.command(name="list", cls=SpelledCommand)
@click.argument("survey_id", type=SURVEY_ID)
@click.option(
    "--status",
    callback=_status_list,
    help="Statuses, comma-separated: codes (21,18) or names (complete, overquota, term, "
    "quality, security).",
)
@click.option(
    "--supplier",
    "--supplier-ids",
    "supplier",
    callback=int_list,
    help="Only the transactions of these suppliers: ids, comma-separated, e.g. 12,13.",
)
@format_option("table", *FORMATS)
@click.option(
    "--out",
    "--output",
    "output",
    type=FilePath(path_type=Path),
    metavar="FILE",
    help="Write to this file instead of stdout.",
)
@click.option(
    "--page-size",
    # The sandbox's (and docs/api-assumptions.md's) largest `limit`: a larger one is a 400.
    type=click.IntRange(1, MAX_PAGE_SIZE),
    metavar="N",
    default=DEFAULT_PAGE_SIZE,
    show_default=True,
    help="Transactions per request (`limit`, at most 1000).",
)
@raw_cells_option
@pass_context
def list_transactions(
    ctx: CliContext,
    survey_id: int,
    status: tuple[int, ...],
    supplier: tuple[int, ...],
    output_format: str,
    output: Path | None,
    page_size: int,
    raw_cells: bool,
) -> None:
    """Every transaction of SURVEY_ID, all pages, written as they arrive."""
    if output is not None:
        check_output_path(output, spelled("output"))
    client = ctx.client()
    query = TransactionQuery(survey_id, status, supplier, page_size)
    with ExitStack() as stack:
        if output is None:
            out = sys.stdout
        else:
            out = stack.enter_context(OutputFile(output, spelled("output")))
        writer: RowWriter = (
            TableWriter(make_console(out))
            if output_format == "table"
            else make_writer(output_format, out, raw_cells)
        )
        report = stack.enter_context(_ProgressReporter())
        final = export(iter_pages(client, query), writer, report)
    where = f" to {output}" if output else ""
    click.echo(f"{final.rows} transaction(s) in {final.page} page(s){where}", err=True)
    if final.left_out and output_format in ("csv", "tsv"):
        click.echo(
            # The keys are the service's words: a terminal must not act on what they hold.
            f"Warning: records after the first page carry field(s) "
            f"{printable(', '.join(final.left_out))}, "
            f"which are not {output_format} columns (the columns are the first page's fields); "
            "--format json or jsonl carries every field",
            err=True,
        )


class _ProgressReporter:
    """A rich progress bar on a terminal, else one plain line per page, both on stderr."""

    def __enter__(self):
        self._bar: Progress | None = None
        if redraws():
            self._bar = Progress(
                TextColumn("pages"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rows]} rows"),
                console=make_console(stderr=True),
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("pages", total=None, rows=0)
        return self

    def __call__(self, state: ExportProgress) -> None:
        if self._bar is not None:
            self._bar.update(
                self._task, completed=state.page, total=state.total_pages, rows=state.rows
            )
        else:
            click.echo(f"page {state.page}/{state.total_pages}: {state.rows} rows", err=True)

    def __exit__(self, *exc_info) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)


@transactions.command(name="get")
@click.argument("survey_id", type=SURVEY_ID)
@click.argument("transaction_id")
@pass_context
def get_transaction(ctx: CliContext, survey_id: int, transaction_id: str) -> None:
    """One transaction record, as JSON."""
    record = ctx.client().get_transaction(survey_id, transaction_id)
    click.echo(dumps(record))


def _final_status(value: str) -> int:
    """A return status by code (`21`) or name (`complete`); one sentence when it is neither."""
    code = status_code(value)
    if code not in STATUS_NAMES:
        known = ", ".join(f"{c} {name}" for c, name in sorted(STATUS_NAMES.items()))
        raise SurveyctlError(f"--status {value!r} is not a final status: use one of {known}")
    return code


def _quota_ids(value: str) -> list[str]:
    ids = quota_id_list(value)
    if ids is None:
        raise SurveyctlError(f"--quota-id {value!r} has an empty buyer_quota_id")
    return ids


def _check_open(record: dict, survey_id: int, transaction_id: str) -> None:
    """Refuses, before asking, a session that has ended: the service gives a final status
    only to one still in the buyer's survey (16) or dropped (19)."""
    current = _code(record.get("Respondent Status Code"))
    if current is None or current in OPEN_TRANSACTION_STATUSES:
        return
    name = transaction_status_name(current)
    raise SurveyctlError(
        f"transaction {transaction_id} of survey {survey_id} already has the final status "
        f"{current}{f' ({name})' if name else ''}; only a session still in your survey (16) or "
        f"dropped (19) can be given one: `surveyctl transactions list {survey_id} --status 16,19`"
    )


def _code(value: object) -> int | None:
    """A status code as the record carries it: a number, or its text ("21"), as the service
    sends some numeric fields of a record; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.isascii() and text.isdigit() else None


@transactions.command(name="set-status")
@click.argument("survey_id", type=SURVEY_ID)
@click.argument("transaction_id")
@click.option("--status", "status_text", required=True,
              help="Final status: 21 complete, 17 overquota, 18 term, 20 quality, 30 security "
                   "(code or name).")  # fmt: skip
@click.option("--quota-id", default="",
              help="QLC: buyer_quota_id values a complete counts in, comma-separated.")  # fmt: skip
@click.option("--sqlc", is_flag=True,
              help="Supplier-level QLC: --quota-id names supplier quota ids.")  # fmt: skip
@click.option("--yes", is_flag=True, help=yes_help("Send", always_asks=True))
@pass_context
def set_status(
    ctx: CliContext,
    survey_id: int,
    transaction_id: str,
    status_text: str,
    quota_id: str,
    sqlc: bool,
    yes: bool,
) -> None:
    """Record the final status of TRANSACTION_ID in SURVEY_ID (it wins over a return link).

    Only a session still in your survey (status 16) or dropped (19) can be given one:
    `surveyctl transactions list SURVEY_ID --status 16,19` lists them.
    """
    status = _final_status(status_text)
    quota_ids = _quota_ids(quota_id)
    if sqlc and not quota_ids:
        raise SurveyctlError("--sqlc needs --quota-id")
    action = f"record status {status} for transaction {transaction_id} (it decides what is paid)"
    ctx.announce()
    ctx.config().actor_name()  # a name the history cannot keep is refused before any change
    if not confirm.terminal():
        # Without a terminal no answer of the service can make the write allowed, so the
        # refusal (a protected environment not named with --env, or no --yes) comes before
        # the transaction is read.
        confirm_write(ctx, action, approved=yes, always_asks=True, can_ask=False)
    client = ctx.client()  # names the environment before anything is asked
    record = client.get_transaction(survey_id, transaction_id)
    _check_open(record, survey_id, transaction_id)
    if quota_ids:
        _check_quota_ids(client.get_survey(survey_id), quota_ids, sqlc)
    counted = f", counted in quota(s) {', '.join(quota_ids)}" if quota_ids else ""
    pays = what_it_pays(record, status)
    click.echo(
        f"Transaction {transaction_id} of survey {survey_id} will get status {status} "
        f"({STATUS_NAMES[status]}){counted}. A status set this way is final."
        + (f" {pays}" if pays else "")
    )
    if not confirm_write(ctx, action, approved=yes, always_asks=True):
        # Declined: exit 1, as apply, status and adjust do, so a script sees nothing was done.
        raise SurveyctlError(f"transaction {transaction_id} was not changed; nothing sent")
    what = partial(
        StatusSet,
        survey_id,
        status,
        from_status=_code(record.get("Respondent Status Code")),
        transaction_id=transaction_id,
        cost=what_it_was_said_to_cost(record, status),
    )
    # A signal from here on waits for the answer and the record (ops/status_history.py).
    with status_history.in_flight("transactions set-status"):
        try:
            client.set_transaction_status(survey_id, transaction_id, status, quota_ids, sqlc=sqlc)
            outcome = MADE
        except (ApiError, ConnectionFailed) as exc:
            if not may_have_been_processed(exc):
                raise
            # The call is never sent again (a second final status is refused, and a person
            # may have meant another); the record is read back to say which way it went.
            if _status_now(client, survey_id, transaction_id) != status:
                maybe = _maybe_recorded(exc, survey_id, transaction_id, status)
                _record(ctx, what(MAYBE_MADE), failing=maybe)  # raises `maybe`
            note_quoting_the_service(
                f"surveyctl: the answer of the status call was lost ({exc}); the transaction, "
                f"read back, has status {status}"
            )
            outcome = MADE_ANSWER_LOST
        click.echo(f"Recorded: transaction {transaction_id} has status {status}.")
        _record(ctx, what(outcome))


def _record(ctx: CliContext, what: StatusSet, failing: SurveyctlError | None = None) -> None:
    """Adds the final status to the environment's history (docs/operations.md), then raises
    `failing` if there is one. When the record fails, the status is not said to be unset: one
    sentence says it is set (or may be) and not recorded, with exit 1, as an adjustment whose
    answer could not be recorded."""
    environment = ctx.environment().name
    status_history.record_or_say(
        ctx.state_store, environment, "transactions set-status", what, failing
    )


def _status_now(client, survey_id: int, transaction_id: str) -> int | None:
    """The transaction's status as read back now; None when it cannot be read."""
    try:
        record = client.get_transaction(survey_id, transaction_id)
    except (ApiError, ConnectionFailed):
        return None
    return _code(record.get("Respondent Status Code"))


def _check_quota_ids(survey: dict, quota_ids: list[str], sqlc: bool) -> None:
    """Refuses --quota-id where the marketplace would not count the complete in those quotas:
    a survey without QLC counts it where the respondent screened in (spec 4.12 rule 1), and an
    id of no quota is refused by the service. Checked before the question, which names them."""
    survey_id = survey.get("ps_survey_id")
    if not (survey.get("qlc") or {}).get("enable"):
        raise SurveyctlError(
            f"--quota-id: survey {survey_id} has no QLC (qlc.enable is false), so a complete "
            "counts in the quotas the respondent screened into, not in those named; leave "
            "--quota-id out"
        )
    quotas = survey.get("quotas") or []
    known = {q.get("buyer_quota_id") for q in quotas}
    if sqlc:  # spec 2.4 and 4.12 rule 2 name either id: the service takes both
        known |= {q.get("buyer_quota_supplier_id") for q in quotas}
    unknown = [q for q in quota_ids if q not in known]
    if unknown:
        listed = ", ".join(sorted(str(q.get("buyer_quota_id")) for q in quotas))
        raise SurveyctlError(
            f"--quota-id {', '.join(unknown)}: no quota of survey {survey_id} has that id "
            f"(its buyer_quota_ids: {listed or 'none'})"
        )


def _maybe_recorded(
    exc: ApiError | ConnectionFailed, survey_id: int, transaction_id: str, status: int
) -> SurveyctlError:
    """A lost answer whose read-back did not show the status (or failed): the call may still
    land, so the person is told how to see whether it did, rather than left to think nothing
    happened."""
    return SurveyctlError(
        f"status {status} of transaction {transaction_id} may have been recorded, but the answer "
        f"was lost ({exc}): `surveyctl transactions get {survey_id} {transaction_id}` shows its "
        "status, and set-status refuses a session that has one"
    )
