"""The one draft survey a conformance run makes, and the journal that lets the next run remove
it whatever ended this one.

The journal (`.surveyctl/conformance/<environment>.json`) is written, and synced, before the
create is sent (with the draft's unique title) and again once the answer names its id; it is
cleared only when the draft is gone. A run killed at any point therefore leaves at most one
draft and a journal naming it: the next run removes it first, by its id, or by its title from
the list of drafts when the kill came before the create's answer.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from surveyctl.api import ApiClient, paths
from surveyctl.api.reading import as_int
from surveyctl.api.transport import RETRY_STATUSES
from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.files import os_error_message, write_atomically

DRAFT = 11
JOURNAL_BYTES = 64_000  # the journal holds one small entry
CLOSED = 44
# The title says what the survey is to anyone who meets it in the account's list.
TITLE_PREFIX = "surveyctl conformance check"
# An address that resolves nowhere (RFC 2606): no respondent can ever reach a page of it.
NOWHERE = "https://conformance.invalid/never-launched?tid=[%%transaction_id%%]"


def draft_title() -> str:
    """A title no person mistakes for a real survey, unique to one run."""
    return f"{TITLE_PREFIX} {secrets.token_hex(4)} - draft, never launched, delete me"


# The titles `draft_title` makes, and no others: the journal is a file in the project, where a
# pull request could commit one naming a real survey by its id and its own title.
_DRAFT_TITLE = re.compile(
    re.escape(TITLE_PREFIX) + " [0-9a-f]{8} - draft, never launched, delete me", re.ASCII
)


def draft_body(title: str, locale: str) -> dict[str, Any]:
    """The create body of the draft: the required fields only (public facts), one complete,
    gender qualifications and two quotas for the quota checks."""
    gender = {"qualification_code": 211, "condition_codes": ["111", "112"]}
    return {
        "survey_title": title,
        "survey_category_code": 231,
        "survey_localization": locale,
        "completes_required": 1,
        "expected_ir": 50,
        "expected_loi": 5,
        "live_url": NOWHERE,
        "field_time": 1,
        "qualifications": [gender],
        "quotas": [
            {
                "buyer_quota_id": f"conformance-{name}",
                "required_count": 1,
                "criteria": [{"qualification_code": 211, "condition_codes": [code]}],
            }
            for name, code in (("male", "111"), ("female", "112"))
        ],
    }


@dataclass
class DraftJournal:
    """The record of a run's draft survey, in one small JSON file."""

    path: Path

    def read(self) -> dict[str, Any] | None:
        # Imported here: the reader loads PyYAML, which `conformance --help` need not.
        from surveyctl.yamlsafe import Limits, YamlProblem, read_text

        if not os.path.lexists(self.path):
            return None
        try:
            # Bounded, and regular files only: the journal is a file of the project, and a link
            # committed in its place to /dev/zero would otherwise be read for ever.
            limits = Limits("conformance journal", JOURNAL_BYTES, 0)
            entry = json.loads(read_text(self.path, limits))
        except (YamlProblem, ValueError) as exc:  # a YamlProblem's text is its summary
            reason = f"cannot read the conformance journal: {exc}"
            raise SurveyctlError(f"{self.path}: {reason}") from exc
        return entry if isinstance(entry, dict) and entry.get("title") else None

    def write(self, entry: dict[str, Any]) -> None:
        """Replaces the journal atomically and durably: it must outlive a kill -9. A write that
        fails (a full disk) leaves the journal as it was and no temporary file beside it."""
        try:
            write_atomically(self.path, json.dumps(entry), durable=True)
        except OSError as exc:
            raise SurveyctlError(
                os_error_message(exc, self.path, "write the conformance journal")
            ) from exc

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    @contextmanager
    def held(self, environment: str) -> Iterator[None]:
        """This run's hold on the journal, for the whole run: a second run of the environment
        in the project would take the first one's draft for a leftover and remove it mid-run,
        then overwrite the journal that names it. An OS lock: a killed run leaves none."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.path.with_name(self.path.name + ".lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise ConformanceBusy(
                f"another `surveyctl conformance` of environment {environment!r} is running in "
                f"this project (its draft is recorded in {self.path}); nothing was checked: run "
                "again when it has ended"
            ) from None
        try:
            yield
        finally:
            lock.release()


class ConformanceBusy(SurveyctlError):
    """Another conformance run of the environment holds the project's journal."""


@dataclass
class Removal:
    """What removing a draft did: `gone` when it is deleted (or was not found); `refused` when
    the service answered the DELETE with a refusal, rather than not answering it (429, 502,
    503, 504 after every retry, which the next run tries again)."""

    survey_id: int | None
    gone: bool
    how: str  # "deleted", "not found", or why it could not be removed
    refused: bool = False


def create_draft(client: ApiClient, journal: DraftJournal, locale: str) -> tuple[dict, dict]:
    """Creates the draft, journalled before and after; its create body and the answer."""
    title = draft_title()
    journal.write({"title": title, "started_at": time.time(), "ps_survey_id": None})
    body = draft_body(title, locale)
    created = client.create_survey(body)
    journal.write({"title": title, "started_at": time.time(), "ps_survey_id": _id(created)})
    return body, created


def remove_draft(client: ApiClient, survey_id: int) -> Removal:
    """Deletes the draft. Nothing else is tried when the service refuses: a draft moves only
    to live (11->22, docs/api-assumptions.md "Status update"), never to closed, and launching
    it would spend money; left as a draft it draws no traffic and costs nothing, so a person
    is told to remove it (`refused_draft`)."""
    try:
        client.request("DELETE", paths.survey(survey_id), expected=(200, 202, 204))
    except ApiError as exc:
        if exc.status == 404:
            return Removal(survey_id, True, "not found")
        return Removal(survey_id, False, str(exc), refused=exc.status not in RETRY_STATUSES)
    return Removal(survey_id, True, "deleted")


def refused_draft(survey_id: int | None, journal: DraftJournal) -> str:
    """What a person must know of a draft whose DELETE the service refused, to end the sentence
    of an error: which survey is left, that it costs nothing as it is, and how to be rid of it
    (the journal is kept, so that no run makes a second draft unseen)."""
    return (
        f"the draft {survey_id} is left on the account; it was never launched, so it draws no "
        "traffic and costs nothing (surveyctl does not close it instead: a draft's only "
        f"status move is to live, which spends money). Delete survey {survey_id} where the "
        f"account's surveys are managed, then delete {journal.path}: until then each "
        "`surveyctl conformance` tries the DELETE again first and stops before any check if it "
        "is refused"
    )


def settle_leftover(client: ApiClient, journal: DraftJournal) -> Removal | None:
    """Removes the draft of an earlier run that did not finish; None when there was none."""
    entry = journal.read()
    if entry is None:
        return None
    title = entry["title"]
    if not (isinstance(title, str) and _DRAFT_TITLE.fullmatch(title)):
        raise NotTheDraft(
            f"{journal.path} names the draft {title!r}, a title no conformance run gives its "
            "draft: surveyctl did not write this journal; nothing was deleted, closed or "
            f"checked; delete {journal.path}"
        )
    survey_id = entry.get("ps_survey_id")
    if isinstance(survey_id, int):
        if not _is_the_draft(client, journal, survey_id, title):
            journal.clear()
            return Removal(survey_id, True, "not found")
    else:
        # Killed before the create's answer: the draft, if made, is found by its title.
        found = [
            _id(survey)
            for survey in client.list_surveys(DRAFT, targeting=False)
            if survey.get("survey_title") == title
        ]
        if not found:
            journal.clear()
            return Removal(None, True, "never created")
        survey_id = found[0]
    removal = remove_draft(client, survey_id)
    if removal.gone:
        journal.clear()
    return removal


def _is_the_draft(client: ApiClient, journal: DraftJournal, survey_id: int, title: str) -> bool:
    """Whether the survey the journal names is still there and is the draft (False when it is
    gone). A survey of that id with another title is someone's real survey (the journal
    outlived a reset sandbox, or the environment now points at another service): it is never
    deleted or closed in the draft's place (NotTheDraft)."""
    try:
        survey = client.get_survey(survey_id)
    except ApiError as exc:
        if exc.status == 404:
            return False
        if exc.status != 403:
            raise
        shown = "not this account's (403)"
    else:
        status = survey.get("ps_survey_status")
        if survey.get("survey_title") == title and status in (DRAFT, CLOSED):
            # A draft is never launched; 44: an earlier version of surveyctl closed its draft
            # when the DELETE was refused (where the service lets a draft be closed).
            return True
        shown = f"titled {survey.get('survey_title')!r}"
        if survey.get("survey_title") == title:
            shown += f" and has status {status}, which no draft of a conformance run reaches"
    raise NotTheDraft(
        f"{journal.path} names survey {survey_id} as the draft {title!r} of an earlier "
        f"conformance run, but survey {survey_id} is {shown}: it was left alone and nothing "
        f"was checked; remove that draft where it was made, then delete {journal.path}"
    )


class NotTheDraft(SurveyctlError):
    """The survey an earlier run's journal names is not that run's draft: a person decides."""


def left_behind(journal: DraftJournal) -> str:
    """What the journal says a run leaves on the account, to end the sentence of an error: a
    person must know what is left and that the next run removes it."""
    entry = journal.read()
    if entry is None:
        return "no draft is left"
    survey_id = entry.get("ps_survey_id")
    what = (
        f"the draft {survey_id} is left"
        if isinstance(survey_id, int)
        else f"a draft titled {entry['title']!r} may be left"
    )
    return (
        f"{what} on the account, recorded in {journal.path}: the next `surveyctl conformance` "
        "removes it"
    )


def _id(survey: dict) -> int:
    value = as_int(survey.get("ps_survey_id"))  # also written as text, as the client reads it
    if value is None:
        raise SurveyctlError("the create answer carries no ps_survey_id: the draft is unknown")
    return value
