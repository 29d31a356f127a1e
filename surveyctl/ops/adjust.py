"""Reconciliation adjustments (spec 2.12, 4.10): read the ids to submit, submit them
journalled (`submit`), and read back what the service shows of one whose answer was lost.

The input is a CSV (a `transaction_id` or `Transaction ID` column, or one id per line) or a
JSON list (of ids, or of {transaction_id} objects as the API takes them). A `survey_id` or
`Survey ID` column/key, when present, lets the preview say which surveys the upload touches:
an export of `surveyctl transactions list` can be edited down and submitted as it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from surveyctl.errors import ApiError, Location, SurveyctlError
from surveyctl.ops.adjust_journal import AdjustmentJournal, AdjustmentRecord, JournalError
from surveyctl.ops.uploads import Upload, read_upload

ID_COLUMNS = ("transaction_id", "Transaction ID")
SURVEY_COLUMNS = ("survey_id", "Survey ID")
# The first line of a one-column file that is a heading, not an id: submitted, it would be
# shown and counted as a transaction (compared as `_heading` writes them).
ONE_COLUMN_HEADINGS = {"transactionid", "transactionids", "transaction", "transactions", "id"}
PENDING = 1
STATUS_NAMES = {PENDING: "Pending"}


class AdjustmentInputError(SurveyctlError):
    """The file of transactions to adjust cannot be read."""


@dataclass(frozen=True)
class AdjustmentUpload:
    """The distinct transaction ids to submit, how many the file named per survey, and the
    survey the file names for each id (None when it names none)."""

    transaction_ids: list[str]
    per_survey: dict[int | None, int]
    duplicates: int = 0
    surveys: dict[str, int | None] = field(default_factory=dict)


def load_upload(path: Path) -> AdjustmentUpload:
    """Reads `path` (.json, else CSV); AdjustmentInputError names the file, line and field."""
    upload = read_upload(path, AdjustmentInputError, csv_suffix=path.suffix.lower() != ".json")
    listed = _from_csv(upload) if upload.csv else _from_json(upload)
    ids: list[str] = []
    first_line: dict[str, int] = {}
    per_survey: Counter = Counter()
    surveys: dict[str, int | None] = {}
    for line, transaction_id, survey_id in listed:
        if transaction_id in first_line:
            _check_repeat(upload, line, transaction_id, survey_id, surveys, first_line)
            continue
        first_line[transaction_id] = line
        ids.append(transaction_id)
        surveys[transaction_id] = survey_id
        per_survey[survey_id] += 1
    if not ids:
        raise AdjustmentInputError(f"{path}: the file names no transactions")
    return AdjustmentUpload(ids, dict(per_survey), len(listed) - len(ids), surveys)


def _check_repeat(
    upload: Upload,
    line: int,
    transaction_id: str,
    survey_id: int | None,
    surveys: dict[str, int | None],
    first_line: dict[str, int],
) -> None:
    """A repeated id is submitted once; one repeated under another survey is refused, as the
    file contradicts itself and the preview could count it under the wrong survey."""
    earlier = surveys[transaction_id]
    if survey_id is None or earlier is None or survey_id == earlier:
        return
    raise AdjustmentInputError(
        f"transaction {transaction_id} is listed for survey {survey_id} here and for survey "
        f"{earlier} on line {first_line[transaction_id]}",
        upload.where(line),
    )


def check_survey_path(upload: AdjustmentUpload, survey_id: int | None, path: Path) -> None:
    """Refuses `--survey` when the file names another survey for some of its transactions.

    The per-survey path sends every transaction to `survey_id`, while the preview shows the
    surveys the file names: when they differ, what is shown and asked for is not what is sent.
    """
    if survey_id is None:
        return
    others = sorted(s for s in upload.per_survey if s is not None and s != survey_id)
    if not others:
        return
    count = sum(upload.per_survey[s] for s in others)
    named = f"survey {others[0]}" if len(others) == 1 else f"surveys {', '.join(map(str, others))}"
    raise AdjustmentInputError(
        f"--survey {survey_id} differs from the {named} that {path} names for {count} "
        "transaction(s); nothing submitted: leave out --survey, or submit only the "
        f"transactions of survey {survey_id}"
    )


def _from_csv(upload: Upload) -> list[tuple[int, str, int | None]]:
    rows = upload.items
    if not rows:
        return []
    if rows[0].value[0].lstrip().startswith(("[", "{")):
        # No heading or id starts so: read as one id per line, a JSON list on one line would
        # be submitted whole as one transaction id.
        raise AdjustmentInputError(
            f"the file holds JSON, and a name not ending in .json is read as CSV: name it "
            f"{upload.path.stem}.json (nothing was submitted)",
            upload.where(rows[0].line),
        )
    header = [_heading(cell) for cell in rows[0].value]
    where = upload.where(rows[0].line)
    id_column = _column(rows[0].value, ID_COLUMNS, where, "CSV header", "columns")
    if id_column is None:
        if all(len(row.value) == 1 for row in rows):
            if header[0] in ONE_COLUMN_HEADINGS:
                rows = rows[1:]
            return [(row.line, _id(upload, row.line, row.value[0]), None) for row in rows]
        raise AdjustmentInputError(
            "the CSV header needs a transaction_id (or 'Transaction ID') column", where
        )
    survey_column = _column(rows[0].value, SURVEY_COLUMNS, where, "CSV header", "columns")
    return [
        (
            row.line,
            _id(upload, row.line, _cell(row.value, id_column)),
            _survey(upload, row.line, _cell(row.value, survey_column)),
        )
        for row in rows[1:]
    ]


def _heading(cell: str) -> str:
    """A column heading as compared: spreadsheets and people write `Transaction ID`,
    `transaction_id`, `TRANSACTION-ID` or `transactionId` for one column."""
    return "".join(c for c in cell.casefold() if c.isalnum())


def _column(
    written: list, names: tuple[str, ...], where: Location, what: str, things: str
) -> int | None:
    """The place of the one heading (or key) of `written` that is one of `names` as
    `_heading` compares them; two such are refused, as which of them holds the transactions to
    adjust would be a guess."""
    wanted = {_heading(name) for name in names}
    found = [index for index, cell in enumerate(written) if _heading(str(cell)) in wanted]
    if len(found) > 1:
        shown = " and ".join(f"{written[i]!r}" for i in found)
        raise AdjustmentInputError(
            f"the {what} has {len(found)} {names[0]} {things}, {shown}; keep one (nothing was "
            "submitted)",
            where,
        )
    return found[0] if found else None


def _cell(row: list[str], column: int | None) -> str:
    return row[column] if column is not None and column < len(row) else ""


def _from_json(upload: Upload) -> list[tuple[int, str, int | None]]:
    pairs = []
    for item in upload.items:
        value = item.value
        if isinstance(value, str):
            pairs.append((item.line, _id(upload, item.line, value), None))
        elif isinstance(value, dict):
            where = upload.where(item.line)
            transaction = _key(value, ID_COLUMNS, where)
            survey_id = _survey(upload, item.line, _key(value, SURVEY_COLUMNS, where))
            pairs.append((item.line, _id(upload, item.line, transaction), survey_id))
        else:
            raise AdjustmentInputError(
                "the item is neither a transaction id nor a {transaction_id} object",
                upload.where(item.line),
            )
    return pairs


def _key(item: dict, names: tuple[str, ...], where: Location) -> object:
    """The value of the one key of `item` that is one of `names` as `_heading` compares them:
    a program writes `surveyId` where the export wrote `Survey ID`, and a survey left unread
    would let `--survey` send the transactions through another survey's path."""
    column = _column(list(item), names, where, "item", "keys")
    return None if column is None else list(item.values())[column]


def _id(upload: Upload, line: int, value: object) -> str:
    if value is not None and not isinstance(value, str):
        # A JSON number is no transaction id (they are text), and "missing" would mislead.
        raise AdjustmentInputError(
            f"transaction_id {value!r} is not text (write it in quotes)", upload.where(line)
        )
    if not value or not value.strip():
        raise AdjustmentInputError("transaction_id is missing or empty", upload.where(line))
    return value.strip()


def _survey(upload: Upload, line: int, value: object) -> int | None:
    """The survey a row names: a positive integer, as survey ids are (the read-back of a lost
    adjustment puts it in a path, where -1 or 0 would reach another resource)."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise AdjustmentInputError(
            f"survey_id {value!r} is not a survey id (a positive integer)", upload.where(line)
        )
    return int(text)


# How many transactions of an adjustment whose answer was lost are read back, at most.
READ_BACK_LIMIT = 50


@dataclass(frozen=True)
class ReadBack:
    """What the service shows of the transactions an adjustment carried: how many were read
    (`checked`), how many show a reconciliation (`reconciled`), how many could not be read
    back because no survey is known for them (`unknown`), and why a read failed."""

    checked: int
    reconciled: int
    unknown: int
    error: str = ""

    @property
    def verdict(self) -> str:
        """ "likely made" when every transaction read back shows a reconciliation, "likely not
        made" when none does, "unclear" when some do (they may have been reconciled before),
        "unknown" when none could be read back."""
        if not self.checked:
            return "unknown"
        if self.reconciled == self.checked:
            return "likely made"
        return "likely not made" if self.reconciled == 0 else "unclear"

    @classmethod
    def from_json(cls, data: dict | None) -> ReadBack | None:
        if not data:
            return None
        return cls(
            int(data.get("checked", 0)),
            int(data.get("reconciled", 0)),
            int(data.get("unknown", 0)),
            str(data.get("error") or ""),
        )

    def to_json(self) -> dict:
        return {
            "checked": self.checked,
            "reconciled": self.reconciled,
            "unknown": self.unknown,
            "error": self.error,
        }


def read_back(
    get_transaction, transactions: list[tuple[str, int | None]], survey_path: int | None
) -> ReadBack:
    """Reads back up to READ_BACK_LIMIT transactions of an adjustment whose answer was lost.

    The service offers no way to read an adjustment, but each transaction record carries its
    Reconciliation Status (0 before any adjustment): so a survey known for a transaction (from
    the file, or the per-survey path) lets its state be read. `get_transaction(survey_id,
    transaction_id)` is the client's call; a failure ends the read-back with its reason.
    """
    known = [(t, survey_path or s) for t, s in transactions if (survey_path or s) is not None]
    checked = reconciled = 0
    error = ""
    for transaction, survey in known[:READ_BACK_LIMIT]:
        try:
            record = get_transaction(survey, transaction)
        except SurveyctlError as exc:
            error = str(exc)
            break
        checked += 1
        reconciled += _reconciled(record)
    return ReadBack(checked, reconciled, len(transactions) - len(known), error)


def _reconciled(record: dict) -> bool:
    try:
        status = int(record.get("Reconciliation Status") or 0)
    except (TypeError, ValueError):
        status = 0
    return status != 0 or bool(record.get("Reconciliation Date"))


def submit(
    client,
    journal: AdjustmentJournal,
    record: AdjustmentRecord,
    upload: AdjustmentUpload,
    survey_id: int | None,
) -> tuple[dict, JournalError | None]:
    """Sends the adjustment journalled as `record` and settles the record whatever happens:
    answered; refused (the service answered 4xx: nothing was made, the error is raised);
    lost (5xx, reset, timeout: it may have been made; a SurveyctlError says so). Returns the
    answer and the problem that kept it out of the journal, if any (the caller shows the
    answer all the same)."""
    try:
        response = client.adjust(upload.transaction_ids, survey_id=survey_id)
    except ApiError as exc:
        # Only a 4xx says that the service did not take it; an answer it gave with another
        # status but that cannot be read (a 200 whose body is not JSON) came after it was made.
        if 400 <= exc.status < 500:
            journal.settle(record, "refused", reason=str(exc))
            raise
        journal.settle(record, "lost", reason=str(exc))
        raise SurveyctlError(_lost_message(record, str(exc))) from exc
    except SurveyctlError as exc:
        journal.settle(record, "lost", reason=str(exc))
        raise SurveyctlError(_lost_message(record, str(exc))) from exc
    answer = response if isinstance(response, dict) else {"answer": response}
    try:
        journal.settle(record, "answered", answer=answer)
    except JournalError as exc:
        return answer, exc
    return answer, None


def _lost_message(record: AdjustmentRecord, reason: str) -> str:
    return (
        f"the adjustment may have been made, but its answer was lost ({reason}); it is "
        f"recorded as {record.ref[:8]}: `surveyctl adjustments` reads back what the service "
        "shows of it"
    )
