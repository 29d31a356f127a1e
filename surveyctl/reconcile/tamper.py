"""Re-checking a saved plan before it is applied: a plan file is untrusted input.

A checksum can be recomputed by anyone who edits the file, so `apply PLANFILE` trusts nothing
in it that it can check itself:

- the state must be the one the plan was made from (lineage and serial);
- the manifests the plan names (`Plan.sources`, inside the project) are planned again against
  the current state and live bodies, with the plan's `--destroy`, and every resource of the
  file must be exactly what that fresh plan gives (action, ids, bodies, quota updates, the body
  recorded as last applied, `prevent_destroy`), and the fresh plan must not change anything
  the file leaves out. A resource whose live body changed since gets the message it always
  had ("changed outside this plan"); any other difference means the file was edited, or the
  manifests changed since; either way nothing is applied;
- the creates whose lost answer the file resolves (`Plan.recovered`) must be the ones the fresh
  plan resolves, the same way;
- what is applied is the fresh plan (restricted to the file's resources), with the fresh
  plan's notes, so an edited note or summary cannot hide an error;
- deletes are checked against the state at apply time (`guard_deletes`): only with
  `--destroy`, never of a resource whose state says `prevent_destroy`, and only of the id the
  state records.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from surveyctl.errors import SurveyctlError
from surveyctl.reconcile import kinds
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.reconcile.planfile import PlanFileError
from surveyctl.state import Record, State

# What a planned resource does when applied; two plans agree on a resource when these agree.
_EFFECT_FIELDS = (
    "kind",
    "name",
    "action",
    "remote_id",
    "body",
    "quota_updates",
    "last_applied",
    "prevent_destroy",
)


class PlanOutdated(SurveyctlError):
    """A saved plan whose state or live resources moved since it was made."""


class PlanMismatch(SurveyctlError):
    """A saved plan that is not what its manifests plan now: edited, or made from other
    manifests."""


def check_state(saved: Plan, state: State) -> None:
    """Refuses a saved plan made from another state than the current one."""
    # Serial 0 is a state never written, whose lineage is made afresh on every load.
    never_written = state.serial == 0 and saved.state_serial == 0
    if not never_written and (state.lineage, state.serial) != (
        saved.state_lineage,
        saved.state_serial,
    ):
        raise PlanOutdated(
            f"the state changed since this plan was made (serial {saved.state_serial} -> "
            f"{state.serial}); make a new plan"
        )


def source_targets(saved: Plan, root: Path, path: Path) -> tuple[Path, ...]:
    """The manifest files and folders the plan was made from, inside the project `root`."""
    if saved.refresh_only:
        raise PlanFileError(f"{path}: a refresh cannot be applied from a plan file")
    if not saved.sources:
        raise PlanFileError(
            f"{path}: the plan does not name the manifests it was made from (an older "
            "surveyctl made it), so it cannot be checked; make a new plan"
        )
    project = root.resolve()
    targets = []
    for source in saved.sources:
        try:
            target = (project / source).resolve()
        except (OSError, ValueError) as exc:  # a NUL byte, a loop of links
            raise PlanFileError(f"{path}: the plan names a manifest path {source!r} that "
                                "cannot be used; make a new plan") from exc  # fmt: skip
        if Path(source).is_absolute() or not target.is_relative_to(project):
            raise PlanFileError(
                f"{path}: the plan names manifests outside the project ({source}); "
                "make a new plan from inside the project"
            )
        targets.append(target)
    return tuple(targets)


def recheck(saved: Plan, fresh: Plan) -> Plan:
    """The plan to apply: `fresh` (the saved plan's manifests planned again now), restricted
    to the saved plan's resources, when the two agree on every change; PlanOutdated or
    PlanMismatch naming the resources where they do not."""
    now = {resource.address: resource for resource in fresh.resources}
    moved, differ, unreadable = [], [], []
    for resource in saved.resources:
        current = now.get(resource.address)
        if current is None:
            (unreadable if resource.address in fresh.unread else differ).append(resource.address)
        elif resource.is_change and resource.fingerprint != current.fingerprint:
            moved.append(resource.address)
        elif _effect(resource) != _effect(current):
            live_moved = resource.fingerprint != current.fingerprint
            (moved if live_moved else differ).append(resource.address)
    differ += [
        lost
        for lost in set(saved.recovered) | set(fresh.recovered)
        if _canonical(saved.recovered.get(lost, "absent"))
        != _canonical(fresh.recovered.get(lost, "absent"))
    ]
    listed = {resource.address for resource in saved.resources}
    differ += [
        address
        for address, resource in now.items()
        if resource.is_change and address not in listed and address not in saved.unread
    ]
    if moved:
        raise PlanOutdated(
            f"changed outside this plan since it was made: {', '.join(sorted(moved))}; make a "
            "new plan"
        )
    if differ:
        raise PlanMismatch(
            "the plan file is not what its manifests plan now for "
            f"{', '.join(sorted(set(differ)))}: it was edited, or the manifests changed since "
            "it was made; nothing was applied, make a new plan"
        )
    if unreadable:
        raise PlanOutdated(
            f"could not check {', '.join(sorted(unreadable))} against the marketplace (its "
            "live body could not be read now); nothing was applied, try again"
        )
    return dataclasses.replace(
        fresh,
        resources=[now[resource.address] for resource in saved.resources],
        unread=sorted(set(fresh.unread) | set(saved.unread)),
    )


def guard_deletes(plan: Plan, state: State, destroy: bool) -> None:
    """Refuses deletes that apply was not asked for (`--destroy`), of resources the state
    protects (`prevent_destroy`), or of an id the state does not record for that address."""
    deletes = [resource for resource in plan.resources if resource.action == "delete"]
    if deletes and not destroy:
        raise SurveyctlError(
            f"the plan deletes {_names(deletes)}; apply it with --destroy to confirm"
        )
    protected = [r for r in deletes if _protected(r, state.resources.get(r.address))]
    if protected:
        raise SurveyctlError(
            f"the plan deletes {_names(protected)}, which the state protects "
            "(lifecycle.prevent_destroy) or does not manage under that id; nothing was applied"
        )


def _protected(resource: ResourceChange, record: Record | None) -> bool:
    if record is None or record.prevent_destroy:
        return True
    if not isinstance(record, kinds.get(resource.kind).record_type):
        return True  # the state manages something else under that address
    return resource.remote_id != record.remote_id


def _names(resources: list[ResourceChange]) -> str:
    return ", ".join(sorted(resource.address for resource in resources))


def _effect(resource: ResourceChange) -> str:
    """What applying the resource does, in one comparable text (JSON: a plan read from a
    file and one made in memory compare equal when they say the same)."""
    return _canonical({name: getattr(resource, name) for name in _EFFECT_FIELDS})


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)
