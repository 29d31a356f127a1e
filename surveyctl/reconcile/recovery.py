"""Creates whose answer was lost, resolved by the next plan without a person.

A create is journaled before its POST; when the answer is lost (a kill, a reset, a 502) the
entry stays, and the next plan decides from what the marketplace shows (docs/state.md has the
rules and a table):

- Surveys: candidates are the unmanaged surveys of the list (every page, every status) created
  since the attempt (`CLOCK_SKEW` before `started_at` or later). While the manifest is still
  the body that was sent (the journal's fingerprint), a candidate matches when it is the same
  survey by the environment's identity rule (`surveyctl.reconcile.identity.same_survey`: title
  and locale, or the external_project_id the create sent) and its live body (a GET) has the
  body's value for every field the body sets, normalised as the planner compares; fields the
  service fills in are not compared. One match
  claimed by no other lost create is adopted (`Plan.recovered`; apply records it, and the plan
  goes on with it as an update or no change); no such candidate means the attempt
  made nothing, and the create is planned again once the entry is older than the settle time
  (a service may still be processing a request whose client died); anything else is an error
  listing the candidates for `surveyctl import ID --name NAME`. When the manifest changed
  since, only "no candidate at all" can be decided.
- Exclusion groups: a GET by reference says it directly (404: made nothing; the manifest's
  name and exclusion_period: adopted; anything else: an error).
- A read that fails, or an entry still settling, leaves the create blocked for a later run
  (a warning): apply reports it as not attempted and goes ahead with the rest.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.model import DesiredState, ExclusionGroup, Survey
from surveyctl.reconcile.identity import Rule, same_survey, stamped
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.normalise import normalise_survey
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, split_address
from surveyctl.state import (
    GroupRecord,
    JournalEntry,
    Record,
    State,
    StateBackend,
    SurveyRecord,
    fingerprint,
)
from surveyctl.statuses import SURVEY_STATUSES

SETTLE_VARIABLE = "SURVEYCTL_CREATE_SETTLE_SECONDS"
DEFAULT_SETTLE_SECONDS = 60.0
# The journal's clock is this machine's, the creation date the service's: allow them to differ.
CLOCK_SKEW = timedelta(minutes=10)
_WIDEST_OFFSET = timedelta(hours=14)  # UTC+14 to UTC-12: a time without a zone is any of them
_LISTED_CANDIDATES = 10  # how many candidates an error names


@dataclass
class Recovery:
    """What the plan makes of the lost creates: the state as the planner should see it (adopted
    resources recorded, resolved entries gone; the others stay journaled, so the plan lists
    them as blocked), what apply records (`recovered`: address -> record, or None when the
    create is planned again), and the notes saying which is which."""

    state: State
    recovered: dict[str, dict | None] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)


def recover_lost_creates(
    client: Marketplace,
    state: State,
    desired: DesiredState,
    now: datetime | None = None,
    rule: Rule | None = None,
) -> Recovery:
    """Resolves every journaled create of a resource the manifests still describe; a survey
    it made is told by the environment's identity `rule` (default: title and locale)."""
    recovery = Recovery(state)
    lost = {a: e for a, e in state.journal.items() if a not in state.resources}
    surveys = {a: desired.surveys[split_address(a)[1]] for a in lost if _wanted(a, SURVEY, desired)}
    groups = {
        a: desired.groups[split_address(a)[1]] for a in lost if _wanted(a, EXCLUSION_GROUP, desired)
    }
    if not surveys and not groups:
        return recovery
    recovery.state = state.copy()
    now = now or datetime.now(UTC)
    if surveys:
        _recover_surveys(client, state, surveys, recovery, now, rule or Rule(""))
    for group_address, group in groups.items():
        _recover_group(client, group_address, group, lost[group_address], recovery, now)
    return recovery


def explained(notes: list[Note], resource_address: str) -> bool:
    """Whether recovery already said why a journaled create stays unresolved (the planner
    then adds no message of its own)."""
    return any(note.address == resource_address for note in notes)


def record_recovered(plan: Plan, store: StateBackend) -> int:
    """Writes what the plan resolved (one state write): adopted resources with their ids, and
    cleared entries of creates that made nothing (planned again in this apply)."""
    if not plan.recovered:
        return 0

    def change(state: State) -> None:
        for resource_address, record in plan.recovered.items():
            state.journal.pop(resource_address, None)
            if record is not None:
                state.resources[resource_address] = _record(resource_address, record)

    store.update(change)
    return len(plan.recovered)


def settle_seconds() -> float:
    """How old a lost create must be before "no survey shows it" means it made nothing."""
    value = os.environ.get(SETTLE_VARIABLE, "")
    if not value:
        return DEFAULT_SETTLE_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86400:  # also refuses nan and inf
        raise SurveyctlError(f"${SETTLE_VARIABLE} must be a number of seconds from 0 to 86400")
    return seconds


# -- surveys -------------------------------------------------------------------------------


def _recover_surveys(
    client: Marketplace,
    state: State,
    surveys: dict[str, Survey],
    recovery: Recovery,
    now: datetime,
    rule: Rule,
) -> None:
    try:
        listed = client.list_surveys(status=sorted(SURVEY_STATUSES.values()))
    except SurveyctlError as exc:
        for lost in surveys:
            _cannot_check(recovery, lost, state.journal[lost], f"the survey list: {exc}")
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
        body = stamped(survey.body(), lost, rule)  # the body its create sent
        if fingerprint(body) != entry.fingerprint:
            # The manifest changed since the attempt: its body cannot say which survey it made.
            candidates[lost] = window
            continue
        titled = [s for s in window if same_survey(s, body, lost, rule)]
        try:
            matches[lost] = [pair for pair in _read_all(client, titled) if _same(pair[1], body)]
        except SurveyctlError as exc:
            _cannot_check(recovery, lost, entry, f"survey {exc}")
            continue
        candidates[lost] = titled
    claims = Counter(item["ps_survey_id"] for found in matches.values() for item, _ in found)
    for lost, found in candidates.items():
        entry = state.journal[lost]
        matched = matches.get(lost)
        if matched is not None and len(matched) == 1 and claims[matched[0][0]["ps_survey_id"]] == 1:
            _adopt_survey(recovery, lost, surveys[lost], entry, *matched[0])
        elif not found:
            _plan_again(recovery, lost, entry, now, "made no survey")
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
    quota_ids = {
        q["buyer_quota_id"]: q["ps_quota_id"]
        for q in live.get("quotas") or []
        if isinstance(q, dict) and q.get("buyer_quota_id") and q.get("ps_quota_id")
    }
    record = SurveyRecord(survey_id, quota_ids, survey.body(), survey.lifecycle.prevent_destroy)
    _adopt(
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


# -- exclusion groups ----------------------------------------------------------------------


def _recover_group(
    client: Marketplace,
    lost: str,
    group: ExclusionGroup,
    entry: JournalEntry,
    recovery: Recovery,
    now: datetime,
) -> None:
    ref = group.buyer_surveygroup_ref
    try:
        live = client.get_group(ref)
    except ApiError as exc:
        if exc.status == 404:
            _plan_again(recovery, lost, entry, now, f"made no group {ref}")
        elif exc.status == 403:
            recovery.notes.append(
                Note(
                    "error",
                    lost,
                    f"the create sent at {entry.started_at} lost its answer, and group {ref} "
                    "belongs to another buyer; choose another buyer_surveygroup_ref, or forget "
                    f"the attempt with `surveyctl state rm {lost}`",
                )
            )
        else:
            _cannot_check(recovery, lost, entry, f"group {ref}: {exc}")
        return
    except SurveyctlError as exc:
        _cannot_check(recovery, lost, entry, f"group {ref}: {exc}")
        return
    period = group.exclusion_period
    if live.get("name") == group.group_name and (
        period is None or live.get("exclusion_period") == period
    ):
        ids = [int(i) for i in live.get("surveys_in_group") or []]
        applied = {"buyer_surveygroup_ref": ref, "name": live.get("name"), "surveys_in_group": ids}
        if live.get("exclusion_period") is not None:
            applied["exclusion_period"] = live["exclusion_period"]
        record = GroupRecord(ref, ids, applied, group.lifecycle.prevent_destroy)
        _adopt(
            recovery,
            lost,
            record,
            f"the create sent at {entry.started_at} lost its answer but made group {ref}; it "
            "is adopted, and apply records it in the state",
        )
        return
    name = split_address(lost)[1]
    recovery.notes.append(
        Note(
            "error",
            lost,
            f"the create sent at {entry.started_at} lost its answer, and group {ref} exists "
            "with another name or exclusion_period; adopt it with "
            f"`surveyctl import-group {ref} --name {name}`, or forget the attempt with "
            f"`surveyctl state rm {lost}`",
        )
    )


# -- shared --------------------------------------------------------------------------------


def _wanted(resource_address: str, kind: str, desired: DesiredState) -> bool:
    found_kind, name = split_address(resource_address)
    if found_kind != kind:
        return False
    return name in (desired.surveys if kind == SURVEY else desired.groups)


def _adopt(recovery: Recovery, lost: str, record: Record, message: str) -> None:
    recovery.state.resources[lost] = record
    recovery.state.journal.pop(lost, None)
    recovery.recovered[lost] = record.to_json()
    recovery.notes.append(Note("note", lost, message))


def _plan_again(
    recovery: Recovery, lost: str, entry: JournalEntry, now: datetime, outcome: str
) -> None:
    started = _parse(entry.started_at)
    settled_at = started + timedelta(seconds=settle_seconds()) if started else None
    if settled_at is not None and now < settled_at:
        recovery.notes.append(
            Note(
                "warning",
                lost,
                f"the create sent at {entry.started_at} lost its answer and has {outcome} so "
                "far; the service may still be processing it, so it is left out of this plan "
                f"(run it again after {settled_at.isoformat(timespec='seconds')})",
            )
        )
        return
    recovery.state.journal.pop(lost, None)
    recovery.recovered[lost] = None
    recovery.notes.append(
        Note(
            "note",
            lost,
            f"the create sent at {entry.started_at} lost its answer and {outcome}; it is "
            "planned again",
        )
    )


def _cannot_check(recovery: Recovery, lost: str, entry: JournalEntry, problem: str) -> None:
    recovery.notes.append(
        Note(
            "warning",
            lost,
            f"cannot check what the create sent at {entry.started_at} made (reading {problem}); "
            "it is left out of this plan and apply does not attempt it (run it again)",
        )
    )


def _created_since(listed: dict, started_at: str) -> bool:
    """Created at most CLOCK_SKEW before `started_at`, or at a time that cannot be read (such
    a survey cannot be ruled out). A time without a zone may be any zone's: it is allowed
    the widest offset there is on top."""
    text = listed.get("project_creation_date")
    created, started = _parse(text), _parse(started_at)
    if created is None or started is None:
        return True
    slack = CLOCK_SKEW if _has_zone(text) else CLOCK_SKEW + _WIDEST_OFFSET
    return created >= started - slack


def _parse(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _has_zone(text: str) -> bool:
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def _record(resource_address: str, data: dict) -> Record:
    kind, _ = split_address(resource_address)
    return SurveyRecord(**data) if kind == SURVEY else GroupRecord(**data)
