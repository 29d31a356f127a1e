"""Accepting drift: what changed outside surveyctl, and recording it as last applied.

A managed field whose live value differs from the body last applied was changed outside
surveyctl, or by a write whose answer was lost (a PUT made, then the process killed before the
state was written). The plan marks it `! drift` on every run until someone decides. A refresh
compares every managed resource's live body with its last-applied body, manifests aside:

- `make_refresh` reads each resource (one GET each, in parallel) and returns a Plan with
  `refresh_only` set: every resource as a no-op carrying its drift, and, for those that
  drifted, the last-applied body the refresh would record;
- `record_refresh` writes those bodies to state in one write.

The recorded body is the last-applied body with each drifted top-level field replaced by its
live value (left out when the live value is unset). Fields that were not managed stay
unmanaged: a refresh accepts what happened to the fields surveyctl owns, it does not adopt
new ones. The next plan then shows no drift; whatever still differs from the manifests is a
planned change, as for any other field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from surveyctl.reconcile import checks
from surveyctl.reconcile.diff import diff_group, drift
from surveyctl.reconcile.groups import group_fingerprint
from surveyctl.reconcile.live import LiveResult, fetch_all
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.normalise import group_update_body, is_empty, update_body
from surveyctl.reconcile.plan import FieldChange, Note, Plan, ResourceChange
from surveyctl.reconcile.planner import live_fingerprint, live_requests
from surveyctl.resources import split_address
from surveyctl.state import GroupRecord, Record, State, StateBackend, SurveyRecord


@dataclass
class Refresh:
    """A refresh plan and the records `record_refresh` writes for it (drifted resources only)."""

    plan: Plan
    records: dict[str, Record] = field(default_factory=dict)


def make_refresh(
    client: Marketplace, state: State, environment: str, parallelism: int = 10
) -> Refresh:
    """Reads every managed resource and compares it with its last-applied body; writes nothing."""
    live = fetch_all(client, live_requests(state), parallelism)
    plan = Plan(
        environment=environment,
        state_lineage=state.lineage,
        state_serial=state.serial,
        refresh_only=True,
    )
    refresh = Refresh(plan)
    for address, record in sorted(state.resources.items()):
        change = _refresh_one(address, record, live[address], refresh)
        if change is not None:
            plan.resources.append(change)
    return refresh


def record_refresh(refresh: Refresh, store: StateBackend) -> int:
    """Records the live values of the drifted resources as last applied; returns how many."""
    records = refresh.records
    if not records:
        return 0

    def change(state: State) -> None:
        for address, record in records.items():
            if address in state.resources:
                state.resources[address] = record

    store.update(change)
    return len(records)


def _refresh_one(
    address: str, record: Record, result: LiveResult, refresh: Refresh
) -> ResourceChange | None:
    kind, name = split_address(address)
    notes = refresh.plan.notes
    if result.gone:
        notes.append(
            Note(
                "warning",
                address,
                f"gone from the marketplace; `surveyctl state rm {address}` forgets it",
            )
        )
        refresh.plan.gone.append(address)
        return None
    if result.error or result.body is None:
        notes.append(Note("error", address, f"cannot read the live resource: {result.error}"))
        refresh.plan.unread.append(address)
        return None
    live = result.body
    if isinstance(record, SurveyRecord):
        differences = drift(live, record.last_applied)
        applied = _with_live_values(record.last_applied, update_body(live), differences)
        quota_ids = {
            str(q["buyer_quota_id"]): str(q["ps_quota_id"])
            for q in live.get("quotas") or []
            if q.get("buyer_quota_id") and q.get("ps_quota_id")
        }
        refreshed: Record = dataclasses.replace(record, last_applied=applied, quota_ids=quota_ids)
        remote, fingerprint = record.ps_survey_id, live_fingerprint(live)
        spend = checks.survey_spend(live, live)
    else:
        body = group_update_body(live)
        differences = _group_drift(body, record)
        applied = _with_live_values(record.last_applied, body, differences)
        ids = [int(i) for i in body.get("surveys_in_group") or []]
        refreshed = dataclasses.replace(record, last_applied=applied, ps_survey_ids=ids)
        remote, fingerprint, spend = record.buyer_surveygroup_ref, group_fingerprint(live), None
    changes = [FieldChange(c.path, c.old, c.new) for c in differences]
    if changes:
        refresh.records[address] = refreshed
    return ResourceChange(
        kind,
        name,
        "no-op",
        remote_id=remote,
        last_applied=applied if changes else None,
        prevent_destroy=record.prevent_destroy,
        drift=changes,
        fingerprint=fingerprint,
        spend=spend,
    )


def _group_drift(body: dict, record: GroupRecord) -> list:
    if not record.last_applied:
        return []
    managed = {k: v for k, v in body.items() if k in record.last_applied}
    return diff_group(record.last_applied, managed)


def _with_live_values(last_applied: dict | None, live_body: dict, differences: list) -> dict | None:
    """`last_applied` with each drifted top-level field set to its live value."""
    if last_applied is None or not differences:
        return last_applied
    applied = dict(last_applied)
    for name in {change.parts[0] for change in differences}:
        value = live_body.get(name)
        if is_empty(value):
            applied.pop(name, None)
        else:
            applied[name] = value
    return applied
