"""The planner: manifests + state + live bodies -> Plan.

It reads the live body of every managed resource (one GET each, in parallel) and asks each
resource's kind (`surveyctl.reconcile.kinds`) to plan it: the kind builds the body by the
three-way merge, diffs it against live and classifies the result (no-op, create, update,
quota-update). The planner adds what is common to every kind: lost creates resolved first,
resources no manifest names (deleted only with `destroy`), and what keeps a plan unsettled.
The planner never writes: the Plan is pure data for the renderers and the applier.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState
from surveyctl.reconcile import kinds
from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.live import DEFAULT_PARALLELISM, LiveResult, fetch_one
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.reconcile.recovery import DEFAULT_SETTLE_SECONDS, recover_lost_creates
from surveyctl.resources import address as address_of
from surveyctl.resources import member_of, split_address
from surveyctl.state import State


@dataclass
class PlanRequest:
    """What to plan: the desired state against one environment's state."""

    desired: DesiredState
    state: State
    environment: str
    destroy: bool = False
    parallelism: int = DEFAULT_PARALLELISM
    # How old a lost create must be before "the marketplace shows nothing" means it made
    # nothing (configuration: $SURVEYCTL_CREATE_SETTLE_SECONDS).
    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    rule: Rule | None = None  # the environment's identity rule (default: title and locale)


def make_plan(client: Marketplace, request: PlanRequest) -> Plan:
    """The plan for `request`; reads live bodies through `client`, writes nothing."""
    with collector_paused():  # a plan holds every live body until it is done
        return _make_plan(client, request)


def _make_plan(client: Marketplace, request: PlanRequest) -> Plan:
    # Creates whose answer was lost are resolved first; the rest plans against the state as
    # it will be once apply records what they made.
    recovery = recover_lost_creates(
        client,
        request.state,
        request.desired,
        settle_seconds=request.settle_seconds,
        rule=request.rule or Rule(request.environment),
    )
    request = dataclasses.replace(request, state=recovery.state)
    state = request.state
    plan = Plan(
        environment=request.environment,
        state_lineage=state.lineage,
        state_serial=state.serial,
        destroy=request.destroy,
        notes=recovery.notes,
        recovered=recovery.recovered,
    )
    with ThreadPoolExecutor(max_workers=max(1, request.parallelism)) as pool:
        # The workers only fetch; this thread plans each resource as its body arrives, so the
        # planning (CPU) overlaps the network waits instead of queueing behind them.
        fetches = {
            address: pool.submit(read_live, client, address, fetch)
            for address, fetch in live_requests(state)
        }
        for kind in kinds.in_order():
            changes = []
            for name, manifest in sorted(kind.manifests(request.desired).items()):
                future = fetches.get(address_of(kind.name, name))
                result = future.result() if future is not None else None
                change = kind.plan(name, manifest, state, result, plan)
                if change is not None:
                    changes.append(change)
            kind.after_plan(client, changes, plan, request.parallelism)
            plan.resources.extend(changes)
        live = {address: future.result() for address, future in fetches.items()}
    _plan_removed(request, live, plan)
    plan.unread = sorted(address for address, result in live.items() if result.error)
    plan.blocked = _blocked(request)
    return plan


def read_live(client: Marketplace, address: str, fetch) -> LiveResult:
    """One live read, tried once more when it still fails after the client's own retries.

    Under heavy faults (half of all requests refused) one read in 64 still fails after the
    client's retries, so a plan of 200 surveys would hardly ever read them all, and a plan that
    cannot read everything never says "No changes". A second round makes that one in 4,096.
    """
    result = fetch_one(client, address, fetch)
    return fetch_one(client, address, fetch) if result.error else result


def live_requests(state: State):
    """(address, read) of every managed resource: its GET, to run with `fetch_one`/`fetch_all`."""
    for address, record in sorted(state.resources.items()):
        kind = kinds.of_address(address)
        yield address, lambda client, k=kind, r=record: k.read(client, r)


def _desired_addresses(request: PlanRequest) -> set[str]:
    return {
        address_of(kind.name, name)
        for kind in kinds.in_order()
        for name in kind.manifests(request.desired)
    }


def _blocked(request: PlanRequest) -> list[str]:
    """Resources of the manifests whose create waits for an unresolved earlier attempt."""
    state = request.state
    return sorted(
        address
        for address in _desired_addresses(request)
        if state.pending_create(address) is not None and address not in state.resources
    )


def _kept(kind: kinds.Kind, name: str, record, body: dict | None) -> ResourceChange:
    """A managed resource left as it is: listed so that the spend covers it."""
    return ResourceChange(
        kind.name,
        name,
        "no-op",
        remote_id=record.remote_id,
        prevent_destroy=record.prevent_destroy,
        spend=kind.spend(body, body) if body else None,
    )


def _retired_from(request: PlanRequest, name: str) -> str | None:
    """The program a removed resource was a member of, when that program keeps its retired
    members (prevent_destroy, the default for programs); None otherwise."""
    member = member_of(name)
    program = request.desired.programs.get(member.program) if member else None
    return program.name if program is not None and program.keep_retired else None


def _plan_removed(request: PlanRequest, live: dict[str, LiveResult], plan: Plan) -> None:
    """Resources in state but no longer in the manifests: deleted only with `destroy`, else
    kept (and counted in the spend, which is then the same with and without `destroy`).

    Deletes run in reverse apply order, so a group is gone before the surveys it names."""
    desired = _desired_addresses(request)
    removed = [a for a in request.state.resources if a not in desired]
    removed.sort(key=lambda a: (-kinds.of_address(a).order, a))
    for address in removed:
        record = request.state.resources[address]
        kind = kinds.of_address(address)
        name = split_address(address)[1]
        result = live.get(address)
        body = result.body if result is not None else None
        program = _retired_from(request, name)
        if program is not None:
            plan.notes.append(
                Note("note", address, f"retired from program {program}: kept, never destroyed")
            )
            plan.retired.append(address)
            plan.resources.append(_kept(kind, name, record, body))
            continue
        if result is not None and result.gone:
            forget = "apply --destroy forgets it" if request.destroy else "`surveyctl state rm` "
            plan.notes.append(
                Note(
                    "note" if request.destroy else "warning",
                    address,
                    "no longer in the manifests and already gone from the marketplace; "
                    + (forget if request.destroy else forget + "forgets it"),
                )
            )
            plan.gone.append(address)
            continue
        if result is not None and result.error:
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    f"no longer in the manifests; cannot read it: {result.error}",
                )
            )
        if not request.destroy:
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    "no longer in the manifests; left alone (plan with --destroy "
                    "to delete it, or `surveyctl state rm` to stop managing it)",
                )
            )
            plan.kept.append(address)
            plan.resources.append(_kept(kind, name, record, body))
            continue
        if record.prevent_destroy:
            plan.notes.append(
                Note(
                    "error",
                    address,
                    "lifecycle.prevent_destroy forbids deleting it; restore its "
                    "manifest or `surveyctl state rm` it",
                )
            )
            plan.resources.append(_kept(kind, name, record, body))
            continue
        plan.notes.extend(kind.removal_notes(address, body))
        plan.resources.append(
            ResourceChange(
                kind.name,
                name,
                "delete",
                remote_id=record.remote_id,
                fingerprint=kind.fingerprint(body) if body is not None else None,
                spend=kind.spend(body, None),
            )
        )
