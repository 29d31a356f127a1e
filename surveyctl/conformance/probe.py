"""The verdicts of a conformance run and the request helper its checks share.

A check sends requests through `Probe.call`, which returns every answer (status, JSON body,
headers) instead of raising on an error status: an error probe wants the refusal, and a
check reports what it saw either way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from surveyctl.api import ApiClient, paths
from surveyctl.api.reading import decode_json, error_fields
from surveyctl.api.secrets import redact_clipped
from surveyctl.api.transport import RETRY_STATUSES
from surveyctl.errors import SurveyctlError
from surveyctl.numbers import as_number

HOLDS = "holds"
DIFFERS = "differs"
NOT_CHECKED = "not checked"
# Every status a probe wants to see rather than have raised.
ANY_STATUS = tuple(range(100, 600))
_SEEN_LIMIT = 200


def read_numbers(value: Any) -> Any:
    """`value` with every number written as text read as a number ("11" is 11, "" is None),
    at any depth: the client reads the service's numbers so (docs/api-assumptions.md), so a
    check comparing two answers, or an answer with a number, must not call them different."""
    if isinstance(value, dict):
        return {key: read_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [read_numbers(item) for item in value]
    return as_number(value)


def same_reading(first: Any, second: Any) -> bool:
    """Whether two values of the service's answers are the same once their numbers are read."""
    return read_numbers(first) == read_numbers(second)


class Unanswered(SurveyctlError):
    """The service answered a probe 429, 502, 503 or 504 after every retry: it did not answer
    the question, so the assumption is not checked (not "differs")."""


class Unread(SurveyctlError):
    """A read of the draft that a check needs was refused or gave no survey: the check reports
    that answer ("differs"), rather than reading an empty survey as one whose fields are all
    cleared or absent."""


@dataclass(frozen=True)
class Outcome:
    """A check's verdict (holds, differs, not checked) and what was seen."""

    verdict: str
    seen: str = ""


def holds(seen: str = "") -> Outcome:
    return Outcome(HOLDS, seen)


def differs(seen: str) -> Outcome:
    return Outcome(DIFFERS, seen)


def not_checked(why: str) -> Outcome:
    return Outcome(NOT_CHECKED, why)


def expect(condition: bool, seen: str) -> Outcome:
    """Holds when `condition`; either way `seen` says what the service answered."""
    return holds(seen) if condition else differs(seen)


@dataclass(frozen=True)
class Row:
    """One line of the report: an assumption, where it comes from, and the verdict."""

    id: str
    assumption: str
    source: str
    verdict: str
    seen: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Answer:
    """One answer of the service, as a probe sees it."""

    method: str
    shown: str  # "PUT /surveys/10001"
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> int | None:
        return error_fields(self.body)[0] if isinstance(self.body, dict) else None

    @property
    def message(self) -> str:
        """The error body's message under any name the client reads it by."""
        return error_fields(self.body)[1] if isinstance(self.body, dict) else ""

    def describe(self) -> str:
        """`PUT /surveys/10001 answered 400 (code 1004): unknown field ...`, clipped."""
        text = f"{self.method} {self.shown} answered {self.status}"
        if self.code is not None:
            text += f" (code {self.code})"
        if not self.ok and self.message:
            text += f": {self.message}"
        return redact_clipped(text, _SEEN_LIMIT - 3)  # "..." makes a cut text _SEEN_LIMIT long


def unanswered_raised(answer: Answer) -> Answer:
    """`answer`, or Unanswered when it is a refusal to answer at all (rate limit, gateway, an
    unavailable service, still so after the client's retries): a check must not read it as
    the service's answer to the question asked."""
    if answer.status in RETRY_STATUSES:
        raise Unanswered(f"the service did not answer: {answer.describe()}")
    return answer


@dataclass
class Probe:
    """The client and the draft under test, shared by the checks of one run."""

    client: ApiClient
    locale: str
    survey_id: int | None = None
    create_body: dict | None = None
    created: dict | None = None

    def call(
        self,
        method: str,
        path: paths.Path,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Answer:
        response = self.client.request(method, path, body=body, params=params, expected=ANY_STATUS)
        # Read as the client reads its answers, and a text body redacted before it is cut: a
        # key cut in half would no longer be recognised, and half of it would be shown.
        try:
            payload = decode_json(response.content) if response.content else None
        except ValueError:
            payload = redact_clipped(response.text, _SEEN_LIMIT, "")
        answer = Answer(
            method, f"{path.path}", response.status_code, payload, dict(response.headers)
        )
        return unanswered_raised(answer)

    def survey(self) -> dict:
        """The draft as GET answers it now; Unread when the read fails."""
        answer = self.call("GET", paths.survey(self.draft_id))
        if not (answer.ok and isinstance(answer.body, dict)):
            raise Unread(f"{answer.describe()}, no survey to look at")
        return answer.body

    @property
    def draft_id(self) -> int:
        if self.survey_id is None:
            raise LookupError("no draft")
        return self.survey_id

    def put_body(self, **changes: Any) -> dict:
        """The draft's create body with `changes` (a value None leaves the field out)."""
        body = dict(self.create_body or {})
        for key, value in changes.items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
        return body
