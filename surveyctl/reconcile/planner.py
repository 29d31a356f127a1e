"""The planner: manifests + state + live bodies -> Plan.

It reads the live body of every managed resource (one GET each, in parallel), builds each
survey's full PUT body by the three-way merge, diffs it against live, and classifies the
result: no-op, create, update (full PUT), quota-update (per-quota PUTs) or delete (only with
`destroy`). It checks the spec's rules before any write and adds notes for the reviewer.
The planner never writes: the Plan is pure data for the renderers and the applier.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState, Survey
from surveyctl.reconcile import checks, groups
from surveyctl.reconcile.checks import unresolved_create_message
from surveyctl.reconcile.diff import (
    classify,
    diff_normalised,
    drift_normalised,
    quota_update_bodies,
)
from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.live import LiveResult, fetch_all, fetch_one
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.merge import merge_survey
from surveyctl.reconcile.normalise import UPDATE_FIELDS, normalise_survey
from surveyctl.reconcile.plan import FieldChange, Note, Plan, ResourceChange
from surveyctl.reconcile.recovery import explained, recover_lost_creates
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, kind_of, split_address
from surveyctl.resources import address as address_of
from surveyctl.state import State, SurveyRecord, fingerprint
from surveyctl.statuses import DRAFT, survey_status_name


@dataclass
class PlanRequest:
    """What to plan: the desired state against one environment's state."""

    desired: DesiredState
    state: State
    environment: str
    destroy: bool = False
    parallelism: int = 10
    rule: Rule | None = None  # the environment's identity rule (default: title and locale)


def make_plan(client: Marketplace, request: PlanRequest) -> Plan:
    """The plan for `request`; reads live bodies through `client`, writes nothing."""
    with collector_paused():  # a plan holds every live body until it is done
        return _make_plan(client, request)


def _make_plan(client: Marketplace, request: PlanRequest) -> Plan:
    # Creates whose answer was lost are resolved first; the rest plans against the state as
    # it will be once apply records what they made.
    rule = request.rule or Rule(request.environment)
    recovery = recover_lost_creates(client, request.state, request.desired, rule=rule)
    request = dataclasses.replace(request, state=recovery.state)
    state = request.state
    plan = Plan(
        environment=request.environment,
        state_lineage=state.lineage,
        state_serial=state.serial,
        destroy=request.destroy,
        notes=recovery.notes,
        recovered=recovery.recovered,
    )
    with ThreadPoolExecutor(max_workers=max(1, request.parallelism)) as pool:
        # The workers only fetch; this thread plans each survey as its body arrives, so the
        # planning (CPU) overlaps the network waits instead of queueing behind them.
        fetches = {
            address: pool.submit(read_live, client, address, fetch)
            for address, fetch in live_requests(state)
        }
        surveys = []
        for name, survey in sorted(request.desired.surveys.items()):
            future = fetches.get(address_of(SURVEY, name))
            change = _plan_survey(name, survey, state, future and future.result(), plan.notes)
            if change is not None:
                surveys.append(change)
        live = {address: future.result() for address, future in fetches.items()}
    _add_quota_closures(client, surveys, plan, request.parallelism)
    plan.resources.extend(surveys)
    plan.resources.extend(groups.plan_groups(request.desired, state, live, plan))
    _plan_removed(request, live, plan)
    plan.unread = sorted(address for address, result in live.items() if result.error)
    plan.blocked = _blocked(request)
    return plan


def read_live(client: Marketplace, address: str, fetch) -> LiveResult:
    """One live read, tried once more when it still fails after the client's own retries.

    Under heavy faults (half of all requests refused) one read in 64 still fails after the
    client's retries, so a plan of 200 surveys would hardly ever read them all, and a plan that
    cannot read everything never says "No changes". A second round makes that one in 4,096.
    """
    result = fetch_one(client, address, fetch)
    return fetch_one(client, address, fetch) if result.error else result


def live_fingerprint(live: dict) -> str:
    """What a saved plan depends on: the live update fields and the survey's status (not
    counters such as completes, which move with traffic and are not part of any write)."""
    fields = {name: live[name] for name in UPDATE_FIELDS if live.get(name) is not None}
    return fingerprint({"status": live.get("ps_survey_status"), "body": fields})


def _fingerprint(is_survey: bool, live: dict | None) -> str | None:
    if live is None:
        return None
    return live_fingerprint(live) if is_survey else groups.group_fingerprint(live)


def live_requests(state: State):
    """(address, read) of every managed resource: its GET, to run with `fetch_one`/`fetch_all`."""
    for address, record in sorted(state.resources.items()):
        if isinstance(record, SurveyRecord):
            yield address, lambda client, i=record.ps_survey_id: client.get_survey(i)
        else:
            yield address, lambda client, r=record.buyer_surveygroup_ref: client.get_group(r)


def _plan_survey(
    name: str, survey: Survey, state: State, result: LiveResult | None, notes: list[Note]
) -> ResourceChange | None:
    address = address_of(SURVEY, name)
    where = str(survey.location) if survey.location else None
    desired = survey.body()
    record = state.survey(name)
    journal = state.pending_create(address)
    if journal is not None and record is None:
        if not explained(notes, address):
            notes.append(Note("error", address, unresolved_create_message(address, journal), where))
        return None
    if record is None or (result is not None and result.gone):
        if record is not None:
            notes.append(
                Note(
                    "warning",
                    address,
                    f"survey {record.ps_survey_id} was deleted outside surveyctl; it will be "
                    "created again",
                    where,
                )
            )
        notes.extend(checks.quota_balance(address, desired, where))
        return ResourceChange(
            SURVEY,
            name,
            "create",
            prevent_destroy=survey.lifecycle.prevent_destroy,
            body=desired,
            last_applied=desired,
            spend=checks.survey_spend(None, desired),
            location=where,
        )
    if result is None or result.error:
        notes.append(
            Note(
                "warning",  # not an error: apply still makes every change it could read
                address,
                f"cannot read the live survey: {result.error if result else 'not fetched'}; "
                "it is left out of this plan and apply does not attempt it (run it again)",
                where,
            )
        )
        return None
    return _update(name, survey, desired, record, result.body, notes)


def _update(
    name: str, survey: Survey, desired: dict, record: SurveyRecord, live: dict, notes: list[Note]
) -> ResourceChange:
    address = address_of(SURVEY, name)
    where = str(survey.location) if survey.location else None
    ignored = survey.lifecycle.ignore_changes
    merged = merge_survey(live, desired, record.last_applied, ignored)
    # The live body is normalised once, for both the diff and the drift: normalising is most
    # of the CPU of planning an unchanged survey.
    live_normalised = normalise_survey(live)
    differences = diff_normalised(live_normalised, normalise_survey(merged))
    changes = [FieldChange(c.path, c.old, c.new) for c in differences]
    action = classify(differences)
    change = ResourceChange(
        SURVEY,
        name,
        action,
        prevent_destroy=survey.lifecycle.prevent_destroy,
        remote_id=record.ps_survey_id,
        last_applied=desired,
        changes=changes,
        fingerprint=live_fingerprint(live),
        spend=checks.survey_spend(live, merged),
        location=where,
        drift=[
            change
            for c in _drift(live_normalised, record.last_applied, desired, differences)
            if (change := FieldChange(c.path, c.old, c.new)).field not in ignored
        ],
    )
    if action != "no-op":
        change.body = merged
        if action == "quota-update":
            change.quota_updates = quota_update_bodies(merged, differences)
        notes.extend(checks.frozen_fields(address, live.get("ps_survey_status"), changes, where))
        touched = {c.field for c in changes}
        if touched & {"quotas", "completes_required"}:
            notes.extend(checks.quota_balance(address, merged, where))
    return change


def _drift(
    live_normalised: dict, last_applied: dict | None, desired: dict, differences: list
) -> list:
    """Managed fields changed outside surveyctl since the last apply."""
    if last_applied == desired and not differences:
        # The manifest is what was last applied and live matches it: no drift, and no need
        # to normalise the last-applied body (the common case of a no-op plan).
        return []
    return drift_normalised(live_normalised, last_applied)


def _add_quota_closures(
    client: Marketplace, surveys: list[ResourceChange], plan: Plan, parallelism: int
) -> None:
    """Reads quota performance only for surveys whose plan lowers a required_count."""
    lowered = {c.address: c for c in surveys if c.is_change and checks.lowered_quotas(c.changes)}
    performance = fetch_all(
        client,
        (
            (address, lambda cl, i=c.remote_id: cl.quota_performance(i))
            for address, c in lowered.items()
        ),
        parallelism,
    )
    for address, result in sorted(performance.items()):
        change = lowered[address]
        if result.body is not None:
            plan.notes.extend(
                checks.closing_quotas(address, change.body or {}, result.body, change.location)
            )


def _desired_addresses(request: PlanRequest) -> set[str]:
    desired = {address_of(SURVEY, n) for n in request.desired.surveys}
    return desired | {address_of(EXCLUSION_GROUP, n) for n in request.desired.groups}


def _blocked(request: PlanRequest) -> list[str]:
    """Resources of the manifests whose create waits for an unresolved earlier attempt."""
    state = request.state
    return sorted(
        address
        for address in _desired_addresses(request)
        if state.pending_create(address) is not None and address not in state.resources
    )


def _kept(kind: str, name: str, record, body: dict | None) -> ResourceChange:
    """A managed resource left as it is: listed so that the spend covers it."""
    is_survey = isinstance(record, SurveyRecord)
    return ResourceChange(
        kind,
        name,
        "no-op",
        remote_id=record.ps_survey_id if is_survey else record.buyer_surveygroup_ref,
        prevent_destroy=record.prevent_destroy,
        spend=checks.survey_spend(body, body) if is_survey and body else None,
    )


def _plan_removed(request: PlanRequest, live: dict[str, LiveResult], plan: Plan) -> None:
    """Resources in state but no longer in the manifests: deleted only with `destroy`, else
    kept (and counted in the spend, which is then the same with and without `destroy`).

    Groups come before surveys, so a group is gone before the surveys it names."""
    desired = _desired_addresses(request)
    removed = [a for a in request.state.resources if a not in desired]
    removed.sort(key=lambda a: (not kind_of(a) == EXCLUSION_GROUP, a))
    for address in removed:
        record = request.state.resources[address]
        kind, name = split_address(address)
        result = live.get(address)
        is_survey = isinstance(record, SurveyRecord)
        remote = record.ps_survey_id if is_survey else record.buyer_surveygroup_ref
        body = result.body if result is not None else None
        if result is not None and result.gone:
            forget = "apply --destroy forgets it" if request.destroy else "`surveyctl state rm` "
            plan.notes.append(
                Note(
                    "note" if request.destroy else "warning",
                    address,
                    "no longer in the manifests and already gone from the marketplace; "
                    + (forget if request.destroy else forget + "forgets it"),
                )
            )
            plan.gone.append(address)
            continue
        if result is not None and result.error:
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    f"no longer in the manifests; cannot read it: {result.error}",
                )
            )
        if not request.destroy:
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    "no longer in the manifests; left alone (plan with --destroy "
                    "to delete it, or `surveyctl state rm` to stop managing it)",
                )
            )
            plan.kept.append(address)
            plan.resources.append(_kept(kind, name, record, body))
            continue
        if record.prevent_destroy:
            plan.notes.append(
                Note(
                    "error",
                    address,
                    "lifecycle.prevent_destroy forbids deleting it; restore its "
                    "manifest or `surveyctl state rm` it",
                )
            )
            plan.resources.append(_kept(kind, name, record, body))
            continue
        if is_survey and body and body.get("ps_survey_status") != DRAFT:
            status = body.get("ps_survey_status")
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    f"deleting a {survey_status_name(status)} survey stops its fieldwork",
                )
            )
        plan.resources.append(
            ResourceChange(
                kind,
                name,
                "delete",
                remote_id=remote,
                fingerprint=_fingerprint(is_survey, body),
                spend=checks.survey_spend(body, None) if is_survey else None,
            )
        )
