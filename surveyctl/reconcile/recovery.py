"""Creates whose answer was lost, resolved by the next plan without a person.

A create is journaled before its POST; when the answer is lost (a kill, a reset, a 502) the
entry stays, and the next plan decides from what the marketplace shows (docs/state.md has the
rules and a table). Each kind decides for its own resources (`Kind.recover`; surveys in
`kinds/survey_recovery.py`, exclusion groups in `kinds/group.py`):

- one resource that the create made is adopted (`Plan.recovered`; apply records it, and the
  plan goes on with it as an update or no change);
- nothing made means the create is planned again once the entry is older than the settle
  time (a service may still be processing a request whose client died);
- anything else is an error saying how to adopt or forget it.

A read that fails, or an entry still settling, leaves the create blocked for a later run
(a warning): apply reports it as not attempted and goes ahead with the rest. A journal entry
of a kind no module registered is an error, never guessed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from surveyctl.model import DesiredState
from surveyctl.reconcile import kinds
from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.lost import DEFAULT_SETTLE_SECONDS, Recovery
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Plan
from surveyctl.resources import split_address
from surveyctl.state import Record, State, StateBackend

__all__ = [
    "DEFAULT_SETTLE_SECONDS",
    "Recovery",
    "record_recovered",
    "recover_lost_creates",
]


def recover_lost_creates(
    client: Marketplace,
    state: State,
    desired: DesiredState,
    now: datetime | None = None,
    settle_seconds: float = DEFAULT_SETTLE_SECONDS,
    rule: Rule | None = None,
) -> Recovery:
    """Resolves every journaled create of a resource the manifests still describe; what a
    create could have made is told by the environment's identity `rule` (default: title and
    locale)."""
    recovery = Recovery(state, settle_seconds=settle_seconds, rule=rule or Rule(""))
    lost = [a for a in state.journal if a not in state.resources]
    wanted: list[tuple[kinds.Kind, dict]] = []
    for kind in kinds.in_order():
        manifests = kind.manifests(desired)
        mine = {a: manifests[split_address(a)[1]] for a in lost if _wanted(a, kind, manifests)}
        if mine:
            wanted.append((kind, mine))
    if not wanted:
        return recovery
    recovery.state = state.copy()
    now = now or datetime.now(UTC)
    for kind, mine in wanted:
        kind.recover(client, state, mine, recovery, now)
    return recovery


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


def _wanted(resource_address: str, kind: kinds.Kind, manifests: dict) -> bool:
    found_kind, name = split_address(resource_address)
    return found_kind == kind.name and name in manifests


def _record(resource_address: str, data: dict) -> Record:
    kind, _ = split_address(resource_address)
    return kinds.get(kind).record_type(**data)
