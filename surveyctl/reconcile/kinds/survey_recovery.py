"""Recovery of surveys whose create lost its answer (see `surveyctl.reconcile.recovery`).

Candidates are the unmanaged surveys of the list (every page, every status) created since the
attempt (`CLOCK_SKEW` before `started_at` or later). While the manifest is still the body that
was sent (the journal's fingerprint), a candidate matches when it is the same survey by the
environment's identity rule (`surveyctl.reconcile.identity.same_survey`: title and locale, or
the external_project_id the create sent) and its live body (a GET) has the body's value for
every field the body sets, normalised as the planner compares; fields the service fills in are
not compared. One match claimed by no other lost create is adopted; no such candidate means
the attempt made nothing, and the
create is planned again once the entry is older than the settle time; anything else is an
error listing the candidates for `surveyctl import ID --name NAME`. When the manifest changed
since, only "no candidate at all" can be decided.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.model import Survey
from surveyctl.reconcile.identity import same_survey, stamped
from surveyctl.reconcile.kinds.survey_live import survey_record
from surveyctl.reconcile.lost import Recovery, adopt, cannot_check, parse_time, plan_again
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.normalise import normalise_survey
from surveyctl.reconcile.plan import Note
from surveyctl.resources import split_address
from surveyctl.state import JournalEntry, State, SurveyRecord, fingerprint
from surveyctl.statuses import SURVEY_STATUSES

# The journal's clock is this machine's, the creation date the service's: allow them to differ.
CLOCK_SKEW = timedelta(minutes=10)
_WIDEST_OFFSET = timedelta(hours=14)  # UTC+14 to UTC-12: a time without a zone is any of them
_LISTED_CANDIDATES = 10  # how many candidates an error names


def recover_surveys(
    client: Marketplace,
    state: State,
    surveys: dict[str, Survey],  # address -> manifest, of each lost create
    recovery: Recovery,
    now: datetime,
) -> None:
    try:
        listed = client.list_surveys(status=sorted(SURVEY_STATUSES.values()))
    except SurveyctlError as exc:
        for lost in surveys:
            cannot_check(recovery, lost, state.journal[lost], f"the survey list: {exc}")
        return
    managed = {r.ps_survey_id for r in state.resources.values() if isinstance(r, SurveyRecord)}
    unmanaged = [
        s
        for s in listed
        if isinstance(s, dict) and isinstance(s.get("ps_survey_id"), int)
        if s["ps_survey_id"] not in managed
    ]
    matches: dict[str, list[tuple[dict, dict]]] = {}  # (listed item, live body)
    candidates: dict[str, list[dict]] = {}
    for lost, survey in surveys.items():
        entry = state.journal[lost]
        window = [s for s in unmanaged if _created_since(s, entry.started_at)]
        body = stamped(survey.body(), lost, recovery.rule)  # the body its create sent
        if fingerprint(body) != entry.fingerprint:
            # The manifest changed since the attempt: its body cannot say which survey it made.
            candidates[lost] = window
            continue
        titled = [s for s in window if same_survey(s, body, lost, recovery.rule)]
        try:
            matches[lost] = [pair for pair in _read_all(client, titled) if _same(pair[1], body)]
        except SurveyctlError as exc:
            cannot_check(recovery, lost, entry, f"survey {exc}")
            continue
        candidates[lost] = titled
    claims = Counter(item["ps_survey_id"] for found in matches.values() for item, _ in found)
    for lost, found in candidates.items():
        entry = state.journal[lost]
        matched = matches.get(lost)
        if matched is not None and len(matched) == 1 and claims[matched[0][0]["ps_survey_id"]] == 1:
            _adopt_survey(recovery, lost, surveys[lost], entry, *matched[0])
        elif not found:
            plan_again(recovery, lost, entry, now, "made no survey")
        elif matched is None:
            _ask(recovery, lost, entry, found, "the manifest changed since, so surveyctl "
                 "cannot tell which of these it made")  # fmt: skip
        elif len(matched) == 1:
            _ask(recovery, lost, entry, [matched[0][0]], "the survey it could have made "
                 "matches another lost create as well")  # fmt: skip
        elif matched:
            _ask(recovery, lost, entry, [item for item, _ in matched], "more than one survey "
                 "could be the one it made")  # fmt: skip
        else:
            _ask(recovery, lost, entry, found, "a survey with its title and locale but other "
                 "settings exists, so surveyctl cannot tell if the create made it")  # fmt: skip


def _read_all(client: Marketplace, listed: list[dict]) -> list[tuple[dict, dict]]:
    """(listed item, live body) of each listed survey (one GET each); ones deleted meanwhile
    are left out."""
    bodies = []
    for item in listed:
        try:
            bodies.append((item, client.get_survey(item["ps_survey_id"])))
        except ApiError as exc:
            if exc.status != 404:
                raise
    return bodies


def _same(live: dict, body: dict) -> bool:
    """The live survey has the body's value for every field the body sets."""
    have, want = normalise_survey(live), normalise_survey(body)
    return all(have.get(name) == value for name, value in want.items())


def _adopt_survey(
    recovery: Recovery, lost: str, survey: Survey, entry: JournalEntry, listed: dict, live: dict
) -> None:
    survey_id = listed["ps_survey_id"]
    record = survey_record(
        {**live, "ps_survey_id": survey_id}, survey.body(), survey.lifecycle.prevent_destroy
    )
    adopt(
        recovery,
        lost,
        record,
        f"the create sent at {entry.started_at} lost its answer but made survey {survey_id} "
        f"(created {listed.get('project_creation_date') or 'at an unknown time'}); it is "
        "adopted, and apply records it in the state",
    )


def _ask(recovery: Recovery, lost: str, entry: JournalEntry, found: list[dict], why: str) -> None:
    name = split_address(lost)[1]
    shown = ", ".join(
        f"{s.get('ps_survey_id')} {s.get('survey_title')!r} (created "
        f"{s.get('project_creation_date') or 'at an unknown time'})"
        for s in found[:_LISTED_CANDIDATES]
    )
    more = f" and {len(found) - _LISTED_CANDIDATES} more" if len(found) > _LISTED_CANDIDATES else ""
    recovery.notes.append(
        Note(
            "error",
            lost,
            f"the create sent at {entry.started_at} lost its answer and {why}: {shown}{more}; "
            f"adopt the one it made with `surveyctl import ID --name {name}`, or if none is, "
            f"forget the attempt with `surveyctl state rm {lost}`",
        )
    )


def _created_since(listed: dict, started_at: str) -> bool:
    """Created at most CLOCK_SKEW before `started_at`, or at a time that cannot be read (such
    a survey cannot be ruled out). A time without a zone may be any zone's: it is allowed
    the widest offset there is on top."""
    text = listed.get("project_creation_date")
    created, started = parse_time(text), parse_time(started_at)
    if created is None or started is None:
        return True
    slack = CLOCK_SKEW if _has_zone(text) else CLOCK_SKEW + _WIDEST_OFFSET
    return created >= started - slack


def _has_zone(text: str) -> bool:
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False
