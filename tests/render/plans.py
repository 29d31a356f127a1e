"""Plans made by hand, as the planner makes them (pure data), for the renderers' tests: each
rule of what a reviewer reads is checked on a plan that holds just what the rule is about."""

from __future__ import annotations

from surveyctl.reconcile.plan import FieldChange, Plan, ResourceChange, Spend


def plan(*resources: ResourceChange, **fields) -> Plan:
    made = Plan("staging", "lineage", 1, **fields)
    made.resources = list(resources)
    return made


def update(name: str, *changes: FieldChange, remote_id: int = 10001, **fields) -> ResourceChange:
    return ResourceChange(
        "Survey", name, "update", remote_id=remote_id, changes=list(changes), **fields
    )


def delete(name: str, remote_id: int = 10002, **fields) -> ResourceChange:
    return ResourceChange("Survey", name, "delete", remote_id=remote_id, **fields)


def create(name: str, body: dict | None = None, **fields) -> ResourceChange:
    return ResourceChange("Survey", name, "create", body=body or {"survey_title": name}, **fields)


def spend(before: float | None, after: float | None) -> Spend:
    return Spend(before=before, after=after)


def price(old: float, new: float) -> FieldChange:
    return FieldChange("offer_price", old, new)
