"""Reconciliation adjustments (spec 2.12, 4.10): read the ids to submit, preview, summarise.

The input is a CSV (a `transaction_id` or `Transaction ID` column, or one id per line) or a
JSON list (of ids, or of {transaction_id} objects as the API takes them). A `survey_id` or
`Survey ID` column/key, when present, lets the preview say which surveys the upload touches:
an export of `surveyctl transactions list` can be edited down and submitted as it is.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from surveyctl.errors import SurveyctlError
from surveyctl.ops.uploads import Upload, read_upload

ID_COLUMNS = ("transaction_id", "Transaction ID")
SURVEY_COLUMNS = ("survey_id", "Survey ID")
PENDING = 1
STATUS_NAMES = {PENDING: "Pending"}


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
    upload = read_upload(path, AdjustmentInputError, csv_suffix=path.suffix.lower() != ".json")
    pairs = _from_csv(upload) if upload.csv else _from_json(upload)
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


def _from_csv(upload: Upload) -> list[tuple[str, int | None]]:
    rows = upload.items
    if not rows:
        return []
    header = [cell.strip() for cell in rows[0].value]
    id_column = next((header.index(c) for c in ID_COLUMNS if c in header), None)
    if id_column is None:
        if all(len(row.value) == 1 for row in rows):
            return [(_id(upload, row.line, row.value[0]), None) for row in rows]
        raise AdjustmentInputError(
            "the CSV header needs a transaction_id (or 'Transaction ID') column",
            upload.where(rows[0].line),
        )
    survey_column = next((header.index(c) for c in SURVEY_COLUMNS if c in header), None)
    return [
        (
            _id(upload, row.line, _cell(row.value, id_column)),
            _survey(upload, row.line, _cell(row.value, survey_column)),
        )
        for row in rows[1:]
    ]


def _cell(row: list[str], column: int | None) -> str:
    return row[column] if column is not None and column < len(row) else ""


def _from_json(upload: Upload) -> list[tuple[str, int | None]]:
    pairs = []
    for item in upload.items:
        value = item.value
        if isinstance(value, str):
            pairs.append((_id(upload, item.line, value), None))
        elif isinstance(value, dict):
            transaction = value.get("transaction_id", value.get("Transaction ID"))
            survey = value.get("survey_id", value.get("Survey ID"))
            pairs.append((_id(upload, item.line, transaction), _survey(upload, item.line, survey)))
        else:
            raise AdjustmentInputError(
                "the item is neither a transaction id nor a {transaction_id} object",
                upload.where(item.line),
            )
    return pairs


def _id(upload: Upload, line: int, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AdjustmentInputError("transaction_id is missing or empty", upload.where(line))
    return value.strip()


def _survey(upload: Upload, line: int, value: object) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise AdjustmentInputError(
            f"survey id {value!r} is not an integer", upload.where(line)
        ) from None
