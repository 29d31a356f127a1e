"""Planning of exclusion groups: after the surveys they name, by the same three-way rules.

A group's manifest names surveys by manifest name; their ps_survey_ids come from state. A
survey created in the same apply has no id yet: the plan's body for a group keeps the names
(`surveys`) beside any ids written directly (`surveys_in_group`), an update shows such a survey
as `<name> (known after apply)`, and the applier resolves the names once the surveys exist.
That a recontact survey cannot be grouped is a manifest rule (`surveyctl validate`), checked
before any plan is made.
"""

from __future__ import annotations

from surveyctl.model import DesiredState, ExclusionGroup
from surveyctl.reconcile.checks import unresolved_create_message
from surveyctl.reconcile.diff import diff_group
from surveyctl.reconcile.live import LiveResult
from surveyctl.reconcile.merge import merge_group
from surveyctl.reconcile.normalise import normalise_group
from surveyctl.reconcile.plan import FieldChange, Note, Plan, ResourceChange
from surveyctl.reconcile.recovery import explained
from surveyctl.resources import EXCLUSION_GROUP, address
from surveyctl.state import State, fingerprint


def group_fingerprint(live: dict) -> str:
    return fingerprint(normalise_group(live))


def plan_groups(
    desired: DesiredState, state: State, live: dict[str, LiveResult], plan: Plan
) -> list[ResourceChange]:
    changes = []
    for name, group in sorted(desired.groups.items()):
        change = _plan_group(name, group, state, live, plan)
        if change is not None:
            changes.append(change)
    return changes


def api_body(planned: dict, ps_survey_ids: dict[str, int]) -> dict:
    """The API body of a planned group, survey names turned into ids (KeyError if unknown)."""
    body = {k: v for k, v in planned.items() if k != "surveys"}
    body["surveys_in_group"] = list(planned.get("surveys_in_group") or []) + [
        ps_survey_ids[name] for name in planned.get("surveys") or []
    ]
    return body


def _plan_group(
    name: str,
    group: ExclusionGroup,
    state: State,
    live: dict[str, LiveResult],
    plan: Plan,
) -> ResourceChange | None:
    group_address = address(EXCLUSION_GROUP, name)
    where = str(group.location) if group.location else None
    record = state.group(name)
    journal = state.pending_create(group_address)
    if journal is not None and record is None:
        if not explained(plan.notes, group_address):
            message = unresolved_create_message(group_address, journal)
            plan.notes.append(Note("error", group_address, message, where))
        return None
    known = {n: r.ps_survey_id for n in group.surveys if (r := state.survey(n)) is not None}
    unknown = [n for n in group.surveys if n not in known]
    planned = group.body()
    desired_ids = api_body({**planned, "surveys": [n for n in group.surveys if n in known]}, known)
    result = live.get(group_address)
    if record is None or (result is not None and result.gone):
        return ResourceChange(
            EXCLUSION_GROUP,
            name,
            "create",
            body=planned,
            location=where,
            prevent_destroy=group.lifecycle.prevent_destroy,
        )
    if record.buyer_surveygroup_ref != group.buyer_surveygroup_ref:
        plan.notes.append(
            Note(
                "error",
                group_address,
                f"buyer_surveygroup_ref changed from {record.buyer_surveygroup_ref!r} to "
                f"{group.buyer_surveygroup_ref!r}; a group's reference cannot change in place: "
                "give the manifest a new name (a new group) and delete the old one with --destroy",
                where,
            )
        )
        return None
    if result is None or result.error:
        plan.notes.append(
            Note(
                "warning",  # not an error: apply still makes every change it could read
                group_address,
                f"cannot read the live group: {result.error if result else 'not fetched'}; "
                "it is left out of this plan and apply does not attempt it (run it again)",
                where,
            )
        )
        return None
    ignored = group.lifecycle.ignore_changes
    merged = merge_group(result.body, desired_ids, record.last_applied, ignored)
    changes = [FieldChange(c.path, c.old, c.new) for c in diff_group(result.body, merged)]
    live_ids = list(result.body.get("surveys_in_group") or [])
    changes += _pending(unknown, live_ids)
    action = "update" if changes else "no-op"
    if "exclusion_period" not in planned and "exclusion_period" in merged:
        planned["exclusion_period"] = merged["exclusion_period"]
    return ResourceChange(
        EXCLUSION_GROUP,
        name,
        action,
        prevent_destroy=group.lifecycle.prevent_destroy,
        remote_id=group.buyer_surveygroup_ref,
        body=planned if changes else None,
        changes=changes,
        location=where,
        fingerprint=group_fingerprint(result.body),
        drift=[FieldChange(c.path, c.old, c.new) for c in _group_drift(result.body, record)],
    )


def _pending(unknown: list[str], live_ids: list) -> list[FieldChange]:
    """Surveys whose ids are known only after apply, shown by name."""
    if not unknown:
        return []
    return [
        FieldChange(
            "surveys_in_group",
            sorted(live_ids) or None,
            sorted(live_ids) + [f"{n} (known after apply)" for n in unknown],
        )
    ]


def _group_drift(live: dict, record) -> list:
    if not record.last_applied:
        return []
    managed = {k: v for k, v in live.items() if k in record.last_applied}
    return diff_group(record.last_applied, managed) if managed else []
