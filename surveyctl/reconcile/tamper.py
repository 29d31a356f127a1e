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
- policy comes from the file only when its signature was checked against `$SURVEYCTL_PLAN_KEY`
  (`SavedPlan.verified`). An unverified plan is applied with the guard overrides of apply's own
  command line (`applied_overrides`), and the resources it could not read and its notes are
  those of the fresh plan; where the file says otherwise, nothing is applied;
- deletes are checked against the state at apply time (`guard_deletes`): only with
  `--destroy`, never of a resource whose state says `prevent_destroy`, and only of the id the
  state records.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from surveyctl.errors import SurveyctlError
from surveyctl.files import shown_path
from surveyctl.reconcile import kinds
from surveyctl.reconcile.choices import flag
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.reconcile.planfile import KEY_VARIABLE, PlanFileError, SavedPlan, shown
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
    # What a reviewer reads (`surveyctl show PLANFILE`): an unsigned file whose lines say
    # something other than what it applies is as edited as one whose body does.
    "changes",
    "drift",
    "spend",
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
    # The fresh plan then names its manifests as `plan` did (surveys/x.yaml:1:1), not by
    # the folder of the machine that applies it.
    return tuple(shown_path(target) for target in targets)


def applied_overrides(path: Path, saved: SavedPlan, given: frozenset[str]) -> frozenset[str]:
    """The guard overrides a saved plan is applied with. A verified plan carries the ones it
    was made with, and `given` (apply's command line) may only repeat them. An unverified
    plan carries none: they are `given`, which must be the ones the file says it was made
    with, so the reviewed plan and the applied one agree."""
    claimed = frozenset(saved.plan.overrides)
    if saved.verified and given and given != claimed:
        raise SurveyctlError(
            f"{path} is applied with the overrides it was planned with ({_flags(claimed)}); "
            "to change them, make a new plan with them"
        )
    if saved.verified or given == claimed:
        return claimed
    if saved.signed:
        why = f"${KEY_VARIABLE} is not set to check its signature"
    else:
        why = "is not signed"
    if not claimed:
        raise SurveyctlError(
            f"{path} is applied with the overrides it was planned with (no override); to "
            "change them, make a new plan with them"
        )
    raise SurveyctlError(
        f"{path} was planned with {_flags(claimed)} and {why}: apply it with "
        f"{_flags(claimed)} (the overrides of an unsigned plan come from apply's command "
        f"line), or sign plans with ${KEY_VARIABLE} (see docs/safety.md)"
    )


@dataclasses.dataclass
class Disagreement:
    """Where a plan and a fresh plan of the same manifests disagree, by address: `moved`, the
    live body changed since; `differ`, another change; `unreadable`, not readable now."""

    moved: list[str]
    differ: list[str]
    unreadable: list[str]


def disagreement(saved: Plan, fresh: Plan, verified: bool = False) -> Disagreement:
    """Where `fresh` (the same manifests planned again now) does not agree with `saved`. Unless
    `saved` is `verified` (signed, or made in this process), what it could not read and its
    notes must also be what the fresh plan says."""
    # A saved plan's shown parts are redacted (planfile.shown): compared so on both sides.
    saved, fresh = shown(saved), shown(fresh)
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
    if not verified:
        # Claimed unread but read now: the file hides a change, or the service recovered.
        differ += sorted(set(saved.unread) - set(fresh.unread))
        unreadable += sorted(set(fresh.unread) - set(saved.unread) - listed)
        # What the summary says is left alone follows from the state and the manifests alone
        # (both the plan's): a file that says otherwise was edited to be read otherwise.
        differ += sorted(set(saved.kept) ^ set(fresh.kept))
        differ += sorted(set(saved.retired) ^ set(fresh.retired))
        differ += sorted(set(saved.released) ^ set(fresh.released))
        settled = set(moved) | set(unreadable)
        differ += [a for a in _notes_differ(saved.notes, fresh.notes) if a not in settled]
    return Disagreement(sorted(moved), sorted(set(differ)), sorted(set(unreadable)))


def recheck(saved: Plan, fresh: Plan, verified: bool = False) -> Plan:
    """The plan to apply: `fresh` (the saved plan's manifests planned again now), restricted
    to the saved plan's resources, when the two agree on every change; PlanOutdated or
    PlanMismatch naming the resources where they do not. Unless the saved plan is `verified`
    (signed), what it could not read and its notes must also be what the fresh plan says."""
    found = disagreement(saved, fresh, verified)
    if found.moved:
        raise PlanOutdated(
            f"changed outside this plan since it was made: {', '.join(found.moved)}; make a "
            "new plan"
        )
    if found.differ:
        raise PlanMismatch(
            "the plan file is not what its manifests plan now for "
            f"{', '.join(found.differ)}: it was edited, or the manifests changed since "
            "it was made; nothing was applied, make a new plan"
        )
    if found.unreadable:
        raise PlanOutdated(
            f"could not check {', '.join(found.unreadable)} against the marketplace (its "
            "live body could not be read now); nothing was applied, try again"
        )
    return restricted(saved, fresh, verified)


def restricted(saved: Plan, fresh: Plan, verified: bool) -> Plan:
    """`fresh` restricted to the resources of `saved`, which agrees with it."""
    now = {resource.address: resource for resource in fresh.resources}
    # A verified plan may leave out what it could not read; apply reports those as not
    # attempted. An unverified one has just been found to agree with the fresh plan.
    unread = set(fresh.unread) | set(saved.unread) if verified else set(fresh.unread)
    return dataclasses.replace(
        fresh,
        resources=[now[resource.address] for resource in saved.resources],
        unread=sorted(unread),
    )


def guard_deletes(plan: Plan, state: State, destroy: bool) -> None:
    """Refuses deletes that apply was not asked for (`--destroy`), of resources the state
    protects (`prevent_destroy`), or of an id the state does not record for that address."""
    deletes = [resource for resource in plan.resources if resource.action == "delete"]
    if deletes and not destroy:
        raise SurveyctlError(
            f"the plan deletes {_names(deletes)}; apply it with --destroy to confirm"
        )
    released = set(plan.released)
    protected = [r for r in deletes if _protected(r, state.resources.get(r.address), released)]
    if protected:
        raise SurveyctlError(
            f"the plan deletes {_names(protected)}, which the state protects "
            "(lifecycle.prevent_destroy) or does not manage under that id; nothing was applied"
        )


def _protected(resource: ResourceChange, record: Record | None, released: set[str]) -> bool:
    if record is None or (record.prevent_destroy and resource.address not in released):
        return True
    if not isinstance(record, kinds.get(resource.kind).record_type):
        return True  # the state manages something else under that address
    return resource.remote_id != record.remote_id


def _notes_differ(saved: list[Note], fresh: list[Note]) -> list[str]:
    """The addresses whose notes differ between the two plans. Guard notes are left out: they
    follow the guards as configured now and the overrides, both checked on their own. So is
    the location, which names the same file by another path when planned from elsewhere."""

    def said(notes: list[Note]) -> dict[str, list[tuple[str, str]]]:
        by_address: dict[str, list[tuple[str, str]]] = {}
        for note in notes:
            if not note.address.startswith("guards."):
                by_address.setdefault(note.address, []).append((note.severity, note.message))
        return {address: sorted(items) for address, items in by_address.items()}

    before, after = said(saved), said(fresh)
    return [a for a in sorted(set(before) | set(after)) if before.get(a) != after.get(a)]


def _flags(overrides: frozenset[str]) -> str:
    return ", ".join(flag(o) for o in sorted(overrides)) or "no override"


def _names(resources: list[ResourceChange]) -> str:
    return ", ".join(sorted(resource.address for resource in resources))


def _effect(resource: ResourceChange) -> str:
    """What applying the resource does, in one comparable text (JSON: a plan read from a
    file and one made in memory compare equal when they say the same)."""
    return _canonical({name: getattr(resource, name) for name in _EFFECT_FIELDS})


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)
