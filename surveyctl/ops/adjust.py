"""Reconciliation adjustments (spec 2.12, 4.10): read the ids to submit, preview, summarise.

The input is a CSV (a `transaction_id` or `Transaction ID` column, or one id per line) or a
JSON list (of ids, or of {transaction_id} objects as the API takes them). A `survey_id` or
`Survey ID` column/key, when present, lets the preview say which surveys the upload touches:
an export of `surveyctl transactions list` can be edited down and submitted as it is.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from surveyctl.errors import Location, SurveyctlError

ID_COLUMNS = ("transaction_id", "Transaction ID")
SURVEY_COLUMNS = ("survey_id", "Survey ID")
PENDING = 1
STATUS_NAMES = {PENDING: "Pending"}

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


class AdjustmentInputError(SurveyctlError):
    """The file of transactions to adjust cannot be read."""


@dataclass(frozen=True)
class AdjustmentUpload:
    """The distinct transaction ids to submit, and how many the file named per survey."""

    transaction_ids: list[str]
    per_survey: dict[int | None, int]
    duplicates: int = 0


def load_upload(path: Path) -> AdjustmentUpload:
    """Reads `path` (.json, else CSV); AdjustmentInputError names the file, line and field."""
    try:
        raw = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise AdjustmentInputError(f"{path}: cannot read the file: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise AdjustmentInputError(f"{path}: the file is not UTF-8 text") from exc
    pairs = _from_json(path, raw) if path.suffix.lower() == ".json" else _from_csv(path, raw)
    ids: list[str] = []
    seen: set[str] = set()
    per_survey: Counter = Counter()
    for transaction_id, survey_id in pairs:
        if transaction_id in seen:
            continue
        seen.add(transaction_id)
        ids.append(transaction_id)
        per_survey[survey_id] += 1
    if not ids:
        raise AdjustmentInputError(f"{path}: the file names no transactions")
    return AdjustmentUpload(ids, dict(per_survey), duplicates=len(pairs) - len(ids))


def _from_csv(path: Path, raw: str) -> list[tuple[str, int | None]]:
    reader = csv.reader(raw.splitlines())
    rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    if not rows:
        return []
    header = [cell.strip() for cell in rows[0][1]]
    id_column = next((header.index(c) for c in ID_COLUMNS if c in header), None)
    if id_column is None:
        if all(len(row) == 1 for _, row in rows):
            return [(_id(path, line, row[0]), None) for line, row in rows]
        raise AdjustmentInputError(
            "the CSV header needs a transaction_id (or 'Transaction ID') column",
            Location(str(path), rows[0][0]),
        )
    survey_column = next((header.index(c) for c in SURVEY_COLUMNS if c in header), None)
    pairs = []
    for line, row in rows[1:]:
        pairs.append(
            (_id(path, line, _cell(row, id_column)), _survey(path, line, _cell(row, survey_column)))
        )
    return pairs


def _cell(row: list[str], column: int | None) -> str:
    return row[column] if column is not None and column < len(row) else ""


def _from_json(path: Path, raw: str) -> list[tuple[str, int | None]]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AdjustmentInputError(
            f"not valid JSON: {exc.msg}", Location(str(path), exc.lineno)
        ) from exc
    if not isinstance(data, list):
        raise AdjustmentInputError(
            "the JSON must be a list of transaction ids or {transaction_id} objects",
            Location(str(path), 1),
        )
    pairs = []
    for index, item in enumerate(data, start=1):
        where = f"item {index}"
        if isinstance(item, str):
            pairs.append((_id(path, 0, item, where), None))
        elif isinstance(item, dict):
            transaction = item.get("transaction_id", item.get("Transaction ID"))
            survey = item.get("survey_id", item.get("Survey ID"))
            pairs.append((_id(path, 0, transaction, where), _survey(path, 0, survey, where)))
        else:
            raise AdjustmentInputError(f"{path}: {where} is neither an id nor an object")
    return pairs


def _id(path: Path, line: int, value: object, where: str = "") -> str:
    if not isinstance(value, str) or not value.strip():
        raise _error(path, line, where, "transaction_id is missing or empty")
    return value.strip()


def _survey(path: Path, line: int, value: object, where: str = "") -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise _error(path, line, where, f"survey id {value!r} is not an integer") from None


def _error(path: Path, line: int, where: str, message: str) -> AdjustmentInputError:
    if line:
        return AdjustmentInputError(message, Location(str(path), line))
    return AdjustmentInputError(f"{path}: {where}: {message}")


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
