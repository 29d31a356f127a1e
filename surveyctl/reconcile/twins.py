"""Looking for the resources of a plan's creates on the service, kind by kind.

`find_twins` asks each kind (`Kind.find_twins`, by the identity rule of
`surveyctl.reconcile.identity`) about the manifests that the state neither records nor has
journaled: nothing is read when no create is due. With `adopt`, each resource with exactly one
twin that no other manifest claims gets the state record that adopts it (`Kind.twin_record`:
its ids, no last-applied body, so the plan compares the manifest with the live resource alone),
and the live body it was made from, which the plan of the same run plans it from (one read of
each adopted resource a run, not two).
"""

from __future__ import annotations

from typing import Any

from surveyctl.errors import SurveyctlError
from surveyctl.model import DesiredState
from surveyctl.reconcile import kinds
from surveyctl.reconcile.identity import Identity, Rule, Twin
from surveyctl.resources import address, member_of, split_address
from surveyctl.state import Record, State


def creates_due(desired: DesiredState, state: State) -> list[str]:
    """Addresses of the manifests a plan would create: neither in state nor journaled (a
    journaled create is for `surveyctl.reconcile.recovery`)."""
    wanted = [
        address(kind.name, name) for kind in kinds.in_order() for name in kind.manifests(desired)
    ]
    return sorted(a for a in wanted if a not in state.resources and a not in state.journal)


def find_twins(
    client: Any,
    desired: DesiredState,
    state: State,
    rule: Rule,
    adopt: bool = False,
    addresses: list[str] | None = None,
    parallelism: int = 10,
) -> Identity:
    """Looks on the service for the resources of `addresses` (default: `creates_due`); with
    `adopt`, makes the state record of each one that has exactly one twin."""
    found = Identity()
    due = creates_due(desired, state) if addresses is None else addresses
    described = {
        address(kind.name, name) for kind in kinds.in_order() for name in kind.manifests(desired)
    }
    found.described = described
    found.unlisted = {a for a in state.resources if a not in described}
    members = (member_of(split_address(a)[1]) for a in described)
    found.programs = {member.program for member in members if member is not None}
    for kind in kinds.in_order():
        manifests = kind.manifests(desired)
        wanted = {
            a: manifests[split_address(a)[1]] for a in due if split_address(a)[0] == kind.name
        }
        if wanted:
            kind.find_twins(client, wanted, state, rule, found, parallelism)
    if adopt:
        _adopt(client, desired, found, parallelism)
    return found


def _adopt(client: Any, desired: DesiredState, found: Identity, parallelism: int) -> None:
    """Makes the record of each resource with one twin; the twins are read `parallelism` at a
    time, as a plan reads (`state rebuild` of 1,000 surveys read them one after the other)."""
    from concurrent.futures import ThreadPoolExecutor

    ambiguous, renamed = found.ambiguous(), found.renamed()
    wanted: list[tuple[str, Twin]] = []
    for resource_address, twins in sorted(found.twins.items()):
        if resource_address in ambiguous or resource_address in found.unchecked:
            continue
        if resource_address in renamed:
            continue  # recorded already, under its old address: a `state mv`, not an adoption
        wanted.append((resource_address, twins[0]))

    def record(item: tuple[str, Twin]) -> tuple[tuple[Record, dict] | None, str | None]:
        resource_address, twin = item
        kind_name, name = split_address(resource_address)
        kind = kinds.get(kind_name)
        try:
            return kind.twin_record(client, twin, kind.manifests(desired)[name]), None
        except SurveyctlError as exc:
            return None, f"{twin.shown()}: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        for (resource_address, twin), (made, problem) in zip(
            wanted, pool.map(record, wanted), strict=True
        ):
            if twin.body is None:  # else the search read it whole, and adopting it reads none
                found.requests += 1
            if made is None:
                found.unchecked[resource_address] = str(problem)
            else:
                found.adopted[resource_address], found.bodies[resource_address] = made
