"""One conformance run: remove an earlier run's leftover draft, check the assumptions that need
no survey, create one draft, check the rest on it, remove it, and report every row.

The draft is removed in a `finally`, so a failure or an interrupt (KeyboardInterrupt, which
`safety.Interrupts` also raises for SIGTERM and SIGHUP) still removes it; a kill -9 leaves the
journal, and the next run removes the draft first (`draft.settle_leftover`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from surveyctl.api import ApiClient, paths
from surveyctl.api.reading import RepeatedPage, UntrustedPage
from surveyctl.api.secrets import redact
from surveyctl.api.transport import RETRY_STATUSES
from surveyctl.conformance import assumptions
from surveyctl.conformance.draft import (
    DraftJournal,
    Removal,
    create_draft,
    left_behind,
    refused_draft,
    remove_draft,
    settle_leftover,
)
from surveyctl.conformance.probe import (
    ANY_STATUS,
    DIFFERS,
    HOLDS,
    NOT_CHECKED,
    Outcome,
    Probe,
    Row,
    Unanswered,
    Unread,
    differs,
    expect,
    not_checked,
)
from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.files import write_atomically

STATUSES = (11, 22, 33, 44)


@dataclass
class Report:
    """Every row of a run, what was done with an earlier leftover, and with this run's draft."""

    environment: str
    rows: list[Row] = field(default_factory=list)
    leftover: Removal | None = None
    draft: Removal | None = None
    started_at: float = field(default_factory=time.time)

    def count(self, verdict: str) -> int:
        return sum(1 for row in self.rows if row.verdict == verdict)

    def row(self, row_id: str) -> Row:
        return next(row for row in self.rows if row.id == row_id)

    def as_dict(self) -> dict:
        return {
            "environment": self.environment,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started_at)),
            "summary": {v: self.count(v) for v in (HOLDS, DIFFERS, NOT_CHECKED)},
            "list_carries_mod_on": self._list_mod_on(),
            "leftover_draft": _removal(self.leftover),
            "draft": _removal(self.draft),
            "rows": [row.as_dict() for row in self.rows],
        }

    def _list_mod_on(self) -> bool | None:
        row = next((r for r in self.rows if r.id == "list-mod_on"), None)
        return None if row is None or row.verdict == NOT_CHECKED else row.verdict == HOLDS

    def write_json(self, path: Path) -> None:
        """OSError when the file cannot be written (it is then left as it was). Durable: the
        report says what a live service answered on that day, and a run to make it again
        creates a draft on the account."""
        write_atomically(path, json.dumps(self.as_dict(), indent=2) + "\n", durable=True)


class LeftoverStuck(SurveyctlError):
    """An earlier run's draft the service refuses to remove: a person must remove it."""


def journal_for(work_dir: Path, environment: str) -> DraftJournal:
    """The journal of an environment's conformance draft, under the project's .surveyctl/."""
    return DraftJournal(work_dir / "conformance" / f"{environment}.json")


def check_locale(client: ApiClient, environment: str, locale: str) -> None:
    """SurveyctlError when the service has no attribute catalogue for `locale` (it answers 400
    or 404, as `catalog.Catalog` reads it): every check in that locale would then "differ",
    blaming the service for a mistyped --locale."""
    answer = Probe(client, locale).call("GET", paths.attributes(), params={"localization": locale})
    if answer.status in (400, 404):
        raise SurveyctlError(
            f"environment {environment!r} has no attribute catalogue for locale {locale!r}, "
            f"so nothing was checked: {answer.describe()}"
        )


def run_conformance(
    client: ApiClient,
    journal: DraftJournal,
    environment: str,
    *,
    locale: str = "en_US",
    on_row: Callable[[Row], None] | None = None,
) -> Report:
    """Runs every check on `client`'s account and returns the report; the draft it makes is
    removed before it returns or raises. `locale` is one `check_locale` accepted. One run of
    an environment at a time in a project (ConformanceBusy otherwise)."""
    with journal.held(environment):
        return _run(client, journal, environment, locale, on_row)


def _run(
    client: ApiClient,
    journal: DraftJournal,
    environment: str,
    locale: str,
    on_row: Callable[[Row], None] | None,
) -> Report:
    report = Report(environment)

    def record(assumption_id: str, text: str, source: str, outcome: Outcome) -> None:
        # What a check saw quotes the service's answers (a header's value, a title), which
        # may repeat the key: the report is shown and written, never with it.
        row = Row(assumption_id, text, source, outcome.verdict, redact(outcome.seen))
        report.rows.append(row)
        if on_row is not None:
            on_row(row)

    report.leftover = settle_leftover(client, journal)
    if report.leftover is not None and not report.leftover.gone:
        raise LeftoverStuck(_leftover_stuck(report.leftover, journal))
    probe = Probe(client, locale)
    for assumption in assumptions.BEFORE_DRAFT:
        record(assumption.id, assumption.text, assumption.source, _checked(assumption, probe))
    try:
        probe.create_body, probe.created = create_draft(client, journal, locale)
        probe.survey_id = probe.created["ps_survey_id"]
        for assumption in assumptions.ON_DRAFT:
            record(assumption.id, assumption.text, assumption.source, _checked(assumption, probe))
    except ApiError as exc:
        why = f"the draft could not be created: {exc}"
        for assumption in assumptions.ON_DRAFT:
            record(assumption.id, assumption.text, assumption.source, not_checked(why))
    finally:
        if probe.survey_id is not None or journal.read() is not None:
            report.draft = _remove(client, journal, probe.survey_id)
    record(*assumptions.REMOVED, _removed_outcome(client, report.draft))
    for assumption_id, text, source, why in assumptions.NOT_CHECKED:
        record(assumption_id, text, source, not_checked(why))
    return report


def _leftover_stuck(leftover: Removal, journal: DraftJournal) -> str:
    """Why the run stops before any check: the earlier run's draft is still there."""
    said = (
        f"the draft {leftover.survey_id} of an earlier conformance run cannot be removed "
        f"({leftover.how}); nothing was checked"
    )
    if leftover.refused:
        return f"{said}: {refused_draft(leftover.survey_id, journal)}"
    # Not answered (after every retry): the next run tries the DELETE again.
    return f"{said}: run again when the service answers; {left_behind(journal)}"


def _checked(assumption: assumptions.Assumption, probe: Probe) -> Outcome:
    """The check's outcome; a service error that ends a check is a difference it saw."""
    try:
        return assumption.check(probe)
    except Unanswered as exc:
        return not_checked(str(exc))
    except (Unread, UntrustedPage, RepeatedPage) as exc:  # an answer no reader can trust
        return differs(str(exc))
    except ApiError as exc:
        if exc.status in RETRY_STATUSES:  # no answer about the assumption (after retries)
            return not_checked(f"the service did not answer: {exc}")
        return differs(str(exc))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # An answer of a shape no check expects is a difference too, not a crash of the run.
        return differs(f"unexpected answer: {type(exc).__name__}: {exc}")


def _remove(client: ApiClient, journal: DraftJournal, survey_id: int | None) -> Removal:
    """Removes the run's draft; a service that cannot be reached leaves it to the journal
    (and the next run) without hiding the error that ended this one."""
    try:
        removal = remove_draft(client, survey_id) if survey_id is not None else None
        if removal is None:  # the create's answer never came: found by its title, if made
            removal = settle_leftover(client, journal) or Removal(None, True, "never created")
    except SurveyctlError as exc:
        return Removal(survey_id, False, str(exc))
    if removal.gone:
        journal.clear()
    return removal


def draft_left_error(report: Report, journal: DraftJournal) -> str | None:
    """The sentence that ends a run whose draft could not be removed (None when it was): the
    report is still shown, but a run that leaves a survey on the account has not succeeded."""
    if report.draft is None or report.draft.gone:
        return None
    if report.draft.refused:  # the next run cannot remove it either: a person must
        return (
            f"the service refused to delete the run's draft ({report.draft.how}); "
            f"{refused_draft(report.draft.survey_id, journal)}"
        )
    return f"the run's draft could not be removed ({report.draft.how}); {left_behind(journal)}"


def _removed_outcome(client: ApiClient, removal: Removal | None) -> Outcome:
    if removal is None or removal.survey_id is None:
        return not_checked("no draft was created")
    if not removal.gone:
        return differs(removal.how)
    try:
        return _gone_outcome(client, removal)
    except SurveyctlError as exc:  # the service stopped answering after the DELETE
        return not_checked(f"the service did not answer: {exc}")


def _gone_outcome(client: ApiClient, removal: Removal) -> Outcome:
    answer = client.request("GET", paths.survey(removal.survey_id), expected=ANY_STATUS)
    if answer.status_code in RETRY_STATUSES:
        raise Unanswered(
            f"GET {paths.survey(removal.survey_id).path} answered {answer.status_code}"
        )
    listed = [
        status
        for status in STATUSES
        if any(
            item.get("ps_survey_id") == removal.survey_id
            for item in client.list_surveys(status, targeting=False)
        )
    ]
    seen = (
        f"{removal.how}; GET answered {answer.status_code}; "
        f"in the list of status {listed or 'none'}"
    )
    return expect(answer.status_code == 404 and not listed, seen)


def _removal(removal: Removal | None) -> dict | None:
    if removal is None:
        return None
    return {"ps_survey_id": removal.survey_id, "removed": removal.gone, "how": removal.how}
