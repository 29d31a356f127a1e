"""`state rebuild`: the state of an environment made again from the account, by identity.

Every manifest of the environment is matched against the service by the identity rule
(`surveyctl.reconcile.identity`): one twin is to adopt, several are ambiguous (left for
`surveyctl import`), none is not found (the next apply creates it), and a manifest the state
records already is left as it is. The result is shown as a plan and, once approved, the
adopted resources are recorded in one state write, each with its ids and no last-applied body:
the next plan compares the manifest with the live resource alone, so an environment that was
applied before plans "No changes." again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from surveyctl.model import DesiredState
from surveyctl.reconcile.identity import Rule, Twin
from surveyctl.reconcile.twins import creates_due, find_twins
from surveyctl.resources import EXCLUSION_GROUP, SURVEY
from surveyctl.resources import address as address_of
from surveyctl.state import Record, State, StateBackend


@dataclass
class Rebuild:
    """What `state rebuild` found for each manifest, by address."""

    adopt: dict[str, Twin] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    ambiguous: dict[str, list[Twin]] = field(default_factory=dict)
    not_found: dict[str, list[Twin]] = field(default_factory=dict)  # closed same-title ones
    in_state: dict[str, Record] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # could not be checked, or refused

    @property
    def settled(self) -> bool:
        """Nothing left for a person: nothing ambiguous, nothing that could not be checked."""
        return not self.ambiguous and not self.problems


def find(client: Any, desired: DesiredState, state: State, rule: Rule) -> Rebuild:
    """Matches every manifest that the state does not record against the service."""
    rebuild = Rebuild()
    wanted = [address_of(SURVEY, n) for n in desired.surveys]
    wanted += [address_of(EXCLUSION_GROUP, n) for n in desired.groups]
    for resource_address in sorted(wanted):
        if resource_address in state.resources:
            rebuild.in_state[resource_address] = state.resources[resource_address]
    due = creates_due(desired, state)
    identity = find_twins(client, desired, state, rule, adopt=True, addresses=due)
    ambiguous = identity.ambiguous()
    for resource_address in due:
        if resource_address in identity.unchecked:
            rebuild.problems[resource_address] = (
                f"cannot check: {identity.unchecked[resource_address]}"
            )
        elif resource_address in identity.refused:
            rebuild.problems[resource_address] = identity.refused[resource_address]
        elif resource_address in ambiguous:
            rebuild.ambiguous[resource_address] = identity.twins[resource_address]
        elif resource_address in identity.adopted:
            rebuild.adopt[resource_address] = identity.twins[resource_address][0]
            rebuild.records[resource_address] = identity.adopted[resource_address]
        else:
            rebuild.not_found[resource_address] = identity.earlier.get(resource_address, [])
    journaled = sorted(a for a in wanted if a in state.journal and a not in state.resources)
    for resource_address in journaled:
        rebuild.problems[resource_address] = (
            "its create lost its answer and is journaled: `surveyctl plan` resolves it"
        )
    return rebuild


def record(store: StateBackend, rebuild: Rebuild) -> int:
    """Records the adopted resources (one state write); how many were recorded. A resource
    recorded meanwhile by another command is left as that command recorded it."""
    if not rebuild.records:
        return 0
    recorded = []

    def change(state: State) -> None:
        recorded.clear()
        for resource_address, adopted in sorted(rebuild.records.items()):
            if resource_address not in state.resources:
                state.resources[resource_address] = adopted
                recorded.append(resource_address)

    store.update(change)
    return len(recorded)
