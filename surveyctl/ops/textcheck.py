"""The open-ended response check (spec 2.11, 4.7): read answers, send batches, read flags.

Answers come from a JSON file (a list of {question_id, text}, or {"questions": [...]}) or a
CSV file with the columns question_id and text. The service takes at most 20 answers per call,
so they are sent in batches of 20 and the results joined back to the answers by question_id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.errors import Location, SurveyctlError
from surveyctl.numbers import as_number
from surveyctl.ops.uploads import Upload, read_upload

BATCH_SIZE = 20

# result field of the service -> the name shown to people, in display order.
FLAGS: tuple[tuple[str, str], ...] = (
    ("duplicate_response", "duplicate"),
    ("language_mismatch", "language mismatch"),
    ("ai_generated_response", "machine-generated"),
    ("incoherent_response", "incoherent"),
    ("coretext_api_fail", "check failed"),
)


class AnswersError(SurveyctlError):
    """The answers file cannot be read as a list of question_id/text pairs."""


@dataclass(frozen=True)
class Answer:
    """One free-text answer to check, with the line it came from."""

    question_id: str
    text: str
    line: int = 0


@dataclass(frozen=True)
class AnswerFlags:
    """The check's verdict on one answer: every flag by its service field name."""

    question_id: str
    text: str
    flags: dict[str, int]

    @property
    def raised(self) -> list[str]:
        """The names of the flags that are set (value other than 0)."""
        return [label for key, label in FLAGS if self.flags.get(key)]

    def as_dict(self) -> dict:
        return {"question_id": self.question_id, "text": self.text, **self.flags}


def load_answers(path: Path) -> list[Answer]:
    """Answers from `path` (.json or .csv); AnswersError names the file, line and field."""
    is_csv = path.suffix.lower() == ".csv"
    upload = read_upload(path, AnswersError, csv_suffix=is_csv, wrapper="questions")
    answers = _from_csv(upload) if is_csv else _from_json(upload)
    if not answers:
        raise AnswersError(f"{path}: the file holds no answers")
    seen: dict[str, int] = {}
    for answer in answers:
        if answer.question_id in seen:
            raise AnswersError(
                f"question_id {answer.question_id!r} appears twice (first on line "
                f"{seen[answer.question_id]})",
                Location(str(path), answer.line),
            )
        seen[answer.question_id] = answer.line
    return answers


def _from_csv(upload: Upload) -> list[Answer]:
    if not upload.items:
        return []
    header = [cell.strip() for cell in upload.items[0].value]
    missing = {"question_id", "text"} - set(header)
    if missing:
        raise AnswersError(
            f"the CSV header needs the columns question_id and text (missing: "
            f"{', '.join(sorted(missing))})",
            upload.where(upload.items[0].line),
        )
    answers = []
    for row in upload.items[1:]:
        cells = dict(zip(header, row.value, strict=False))
        answers.append(_answer(upload.path, row.line, cells.get("question_id"), cells.get("text")))
    return answers


def _from_json(upload: Upload) -> list[Answer]:
    answers = []
    for index, item in enumerate(upload.items):
        if not isinstance(item.value, dict):
            raise AnswersError(
                f"answer {index + 1} is not a {{question_id, text}} object",
                upload.where(item.line),
            )
        value = item.value
        answers.append(_answer(upload.path, item.line, value.get("question_id"), value.get("text")))
    return answers


def _answer(path: Path, line: int, question_id: object, text: object) -> Answer:
    where = Location(str(path), line)
    if isinstance(question_id, int) and not isinstance(question_id, bool):
        question_id = str(question_id)
    if not isinstance(question_id, str) or not question_id.strip():
        raise AnswersError("question_id is missing or empty", where)
    if not isinstance(text, str):
        raise AnswersError(f"text of question {question_id!r} is missing or not a string", where)
    return Answer(question_id.strip(), text, line)


class CheckStopped(SurveyctlError):
    """A batch failed after others were checked: the verdicts so far, and the answers left.

    The service remembers every text it has checked (a text seen again in the survey is a
    duplicate), so the answers already checked must not be sent again: the caller shows their
    verdicts and names the answers left."""

    def __init__(self, results: list[AnswerFlags], left: list[Answer], cause: SurveyctlError):
        self.results = results
        self.left = left
        line = f" (from line {left[0].line} on)" if left[0].line else ""
        super().__init__(
            f"the check stopped after {len(results)} of {len(results) + len(left)} answer(s): "
            f"{cause}; the {len(left)} answer(s) left{line} were not checked: send only those "
            "again, as the service has seen the others and may flag them as duplicates"
        )


def batches(answers: list[Answer], size: int = BATCH_SIZE) -> Iterator[list[Answer]]:
    """Consecutive slices of at most `size` answers."""
    for start in range(0, len(answers), size):
        yield answers[start : start + size]


def check_answers(
    client: ApiClient, transaction_id: str, answers: list[Answer]
) -> list[AnswerFlags]:
    """Checks every answer, one call per batch of 20; results in the order of the answers.

    An answer the service leaves out of its result is reported with `coretext_api_fail` set,
    so a missing verdict never reads as a clean one. A batch that fails after others were
    checked raises CheckStopped with their verdicts.
    """
    results: list[AnswerFlags] = []
    for batch in batches(answers):
        try:
            body = client.text_check(
                transaction_id, [{"question_id": a.question_id, "text": a.text} for a in batch]
            )
        except SurveyctlError as exc:
            if not results:
                raise  # nothing was checked: the error alone says it all
            raise CheckStopped(results, answers[len(results) :], exc) from exc
        by_id = {
            str(item.get("question_id")): item
            for item in (body.get("data") or [])
            if isinstance(item, dict)
        }
        for answer in batch:
            item = by_id.get(answer.question_id)
            flags = {key: _flag(item, key) for key, _ in FLAGS}
            if item is None:
                flags["coretext_api_fail"] = 1
            results.append(AnswerFlags(answer.question_id, answer.text, flags))
    return results


def _flag(item: dict | None, key: str) -> int:
    """A flag as 0 or 1, however the service spells it: 1, true, or as text ("1", "0",
    "true", ""), as it writes other numbers (public facts); "0" is not set, though a
    non-empty string."""
    value = (item or {}).get(key, 0)
    if isinstance(value, str):
        text = value.strip().lower()
        value = {"true": 1, "false": 0, "yes": 1, "no": 0}.get(text, as_number(text))
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return int(value != 0)
    return int(bool(value))
