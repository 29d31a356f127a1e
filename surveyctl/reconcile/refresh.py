"""Accepting drift: what changed outside surveyctl, and recording it as last applied.

A managed field whose live value differs from the body last applied was changed outside
surveyctl, or by a write whose answer was lost (a PUT made, then the process killed before the
state was written). The plan marks it `! drift` on every run until someone decides. A refresh
compares every managed resource's live body with its last-applied body, manifests aside:

- `make_refresh` reads each resource (one GET each, in parallel) and returns a Plan with
  `refresh_only` set: every resource as a no-op carrying its drift, and, for those that
  drifted, the last-applied body the refresh would record;
- `record_refresh` writes those bodies to state in one write;
- `changed_since` says where a second refresh would record otherwise than the first: what
  `apply --refresh-only` checks once its question is answered (it records what it read then,
  and only when that is what it showed).

A refresh cannot tell drift from the writes of an apply stopped before its state write (a
plan does, by the manifests: `kinds.base.take_unrecorded`), so one that finds drift says so
once, in a note naming the plan that does.

The recorded body is the last-applied body with each drifted top-level field replaced by its
live value (left out when the live value is unset). Fields that were not managed stay
unmanaged: a refresh accepts what happened to the fields surveyctl owns, it does not adopt
new ones. The next plan then shows no drift; whatever still differs from the manifests is a
planned change, as for any other field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from surveyctl.reconcile import kinds
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.live import LiveResult, fetch_all
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.resources import split_address
from surveyctl.state import Record, State, StateBackend

# Said once by a refresh that found drift. A plan tells an apply's unrecorded writes from drift
# by the manifest's body (kinds.base.take_unrecorded: the live value is the one apply records);
# the state keeps only the body last recorded, so a refresh, which reads no manifest, cannot.
MAYBE_UNRECORDED = (
    "a refresh reads no manifest, so it cannot tell a change made outside surveyctl from a "
    "write of an apply stopped before its state write (killed, or its answer lost): if an "
    "apply was stopped, some drift of this refresh may be its writes, already as the "
    "manifests ask. `surveyctl plan` tells them apart (it names such writes in a note, not as "
    "drift), and `surveyctl apply` records them without sending them again; `surveyctl apply "
    "--refresh-only` records every live value it shows as last applied"
)


def live_requests(state: State):
    """(address, read) of every managed resource: its GET, to run with `fetch_one`/`fetch_all`."""
    for address, record in sorted(state.resources.items()):
        kind = kinds.of_address(address)
        yield address, lambda client, k=kind, r=record: k.read(client, r)


@dataclass
class Refresh:
    """A refresh plan and the records `record_refresh` writes for it (drifted resources only)."""

    plan: Plan
    records: dict[str, Record] = field(default_factory=dict)


def make_refresh(
    client: Marketplace, state: State, environment: str, parallelism: int = DEFAULT_PARALLELISM
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
    if refresh.records:
        plan.notes.append(Note("note", "", MAYBE_UNRECORDED))
    return refresh


def changed_since(shown: Refresh, fresh: Refresh) -> tuple[list[str], list[str]]:
    """Where `fresh` (the same state refreshed again) would not record what `shown` showed:
    (moved, unreadable). Moved: a resource whose drift or record to write differs (a value
    changed again, a drift undone, a resource drifted that showed none); unreadable: read
    then, not now. Counters that move with traffic and are no part of a record do not count."""
    now = {resource.address: resource.drift for resource in fresh.plan.resources}
    then = {resource.address: resource.drift for resource in shown.plan.resources}
    unreadable = sorted(a for a in fresh.plan.unread if a not in shown.plan.unread)
    moved = {
        address
        for address in shown.records.keys() | fresh.records.keys()
        if _recorded(shown, address) != _recorded(fresh, address)
    }
    moved |= {a for a in then.keys() & now.keys() if then[a] != now[a]}
    moved |= {a for a in fresh.plan.gone if a not in shown.plan.gone}
    return sorted(moved - set(unreadable)), unreadable


def _recorded(refresh: Refresh, address: str) -> dict | None:
    # mod_on is left out: the service may move it for what no record holds (the counters that
    # move with traffic), and the record written is the fresh one, with its own mod_on.
    record = refresh.records.get(address)
    if record is None:
        return None
    return {k: v for k, v in record.to_json().items() if k != "mod_on"}


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
    kind_name, name = split_address(address)
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
    kind = kinds.get(kind_name)
    changes, applied, refreshed = kind.refresh(record, live)
    if changes:
        refresh.records[address] = refreshed
    return ResourceChange(
        kind.name,
        name,
        "no-op",
        remote_id=record.remote_id,
        last_applied=applied if changes else None,
        prevent_destroy=record.prevent_destroy,
        drift=changes,
        fingerprint=kind.fingerprint(live),
        spend=kind.spend(live, live),
    )
