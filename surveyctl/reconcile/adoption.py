"""Adoption: what a plan does with a create whose resource exists on the service (its twin):
withheld with an error note saying how to adopt it, adopted with `--adopt`, or let through
with a warning under `--allow-duplicate` (docs/state.md, "Identity").

`surveyctl.reconcile.twins` finds the twins (by the rule of `surveyctl.reconcile.identity`);
`adopted_state` gives the planner the state with the adopted ones recorded, and `settle`, once
the plan is made, withholds, records, notes and stamps. Kept apart from the finding because
this is what a person reads: every sentence of a twin is here.
"""

from __future__ import annotations

import shlex

from surveyctl.reconcile.identity import ADOPT, DUPLICATE, Identity, Rule, Twin, stamped
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.resources import SURVEY, member_of, split_address
from surveyctl.state import State

_LISTED = 10  # how many twins a note names


def adopted_state(state: State, identity: Identity) -> State:
    """`state` with the adopted resources recorded, as the planner should plan against."""
    if not identity.adopted:
        return state
    adopted = state.copy()
    adopted.resources.update(identity.adopted)
    return adopted


def settle(plan: Plan, identity: Identity, rule: Rule, overrides: frozenset[str]) -> None:
    """Applies what `find_twins` found to `plan` (made against `adopted_state`): withholds the
    creates of resources that exist, records the adopted ones, says why in notes, and stamps
    the creates that go ahead (`stamped`)."""
    withheld: set[str] = set()
    ambiguous = identity.ambiguous()
    renamed = identity.renamed()
    destroyed = {r.address for r in plan.resources if r.action == "delete"}
    for resource_address, twins in sorted(identity.twins.items()):
        if resource_address in identity.unchecked:
            continue  # its adoption could not read the twin: held back below
        if resource_address in renamed and renamed[resource_address].managed_as in destroyed:
            continue  # a replacement: this plan destroys the old address (--destroy)
        if resource_address in identity.adopted:
            plan.recovered[resource_address] = identity.adopted[resource_address].to_json()
            plan.adopted.append(resource_address)
            plan.notes.append(Note("note", resource_address, _adopted_message(twins[0])))
        elif DUPLICATE in overrides and twins[0].duplicable:
            plan.notes.append(
                Note(
                    "warning",
                    resource_address,
                    f"exists on the service as {_listed(twins)} but is not in state"
                    + (" under this address" if any(t.managed_as for t in twins) else "")
                    + "; created once more, as --allow-duplicate says",
                )
            )
        elif resource_address in renamed:
            withheld.add(resource_address)
            message = _renamed_message(
                resource_address, renamed[resource_address], identity.programs
            )
            plan.notes.append(Note("error", resource_address, message))
        else:
            withheld.add(resource_address)
            message = _twin_message(resource_address, twins, resource_address in ambiguous)
            adopting = ADOPT in overrides and resource_address in ambiguous
            plan.notes.append(
                Note("error", resource_address, message + (_REFUSE_CHOICE if adopting else ""))
            )
    for resource_address, reason in sorted(identity.refused.items()):
        withheld.add(resource_address)
        plan.notes.append(Note("error", resource_address, reason))
    for resource_address, problem in sorted(identity.unchecked.items()):
        withheld.add(resource_address)
        plan.unread.append(resource_address)
        plan.unchecked.append(resource_address)
        plan.notes.append(
            Note(
                "warning",
                resource_address,
                f"cannot check whether it exists on the service already (reading {problem}); "
                "it is left out of this plan and apply does not create it (run it again)",
            )
        )
    plan.unread.sort()
    plan.unchecked.sort()
    planned = []
    for resource in plan.resources:
        if resource.action == "create" and resource.address in withheld:
            continue
        if resource.action == "create" and resource.kind == SURVEY and resource.body:
            resource.body = stamped(resource.body, resource.address, rule)
            earlier = identity.earlier.get(resource.address)
            if earlier and resource.address not in identity.twins:
                plan.notes.append(Note("note", resource.address, _earlier_message(earlier)))
        planned.append(resource)
    plan.resources = planned


_REFUSE_CHOICE = "; --adopt does not choose between them"


def _twin_message(resource_address: str, twins: list[Twin], ambiguous: bool) -> str:
    name = split_address(resource_address)[1]
    twin = twins[0]
    if len(twins) > 1 or ambiguous:
        others = " (another manifest matches it too)" if len(twins) == 1 else ""
        more = ", or create one more with --allow-duplicate" if twin.duplicable else ""
        return (
            f"exists on the service more than once: {_listed(twins)}{others}, but is not in "
            f"state; adopt the right one with {twin.import_command(name, 'ID')} for the one it "
            f"is{more}"
        )
    more = "; --allow-duplicate creates another one beside it" if twin.duplicable else ""
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}) but is not in "
        f"state; adopt it with {twin.import_command(name)}, or plan and apply with --adopt "
        f"(records it, then plans the differences as updates){more}"
    )


def state_mv_command(old: str, new: str, programs: set[str]) -> str:
    """The `state mv` that moves the record of `old` to `new`: for members of a renamed
    program (one no manifest names any more, `programs` being those they name), the one
    command that moves all its members. A program still named had some of its members moved
    to another (split): `--program` would move the members it keeps too, so one member."""
    was, now = member_of(split_address(old)[1]), member_of(split_address(new)[1])
    if was is not None and now is not None and was.program != now.program:
        if was.program not in programs:
            return f"surveyctl state mv --program {was.program} {now.program}"
    return f"surveyctl state mv {shlex.quote(old)} {shlex.quote(new)}"


def _renamed_message(resource_address: str, twin: Twin, programs: set[str]) -> str:
    old = twin.managed_as or ""
    move = state_mv_command(old, resource_address, programs)
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}), which the state "
        f"manages as {old}, no longer in the manifests; if the manifest was renamed, run "
        f"`{move}` and plan again (it keeps its id and its fieldwork); --allow-duplicate "
        "creates another one beside it"
    )


def _adopted_message(twin: Twin) -> str:
    return (
        f"exists on the service as {twin.noun} {twin.remote_id} ({twin.why}) and is adopted "
        "(--adopt): apply records it in the state before its writes"
    )


def _earlier_message(earlier: list[Twin]) -> str:
    return (
        f"closed {_listed(earlier)} share its title and locale; closed surveys are taken as "
        "earlier waves, not as this one (docs/state.md, Identity)"
    )


def _listed(twins: list[Twin]) -> str:
    shown = ", ".join(t.shown() for t in twins[:_LISTED])
    more = f" and {len(twins) - _LISTED} more" if len(twins) > _LISTED else ""
    return shown + more
