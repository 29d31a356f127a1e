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
from dataclasses import dataclass

from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState, Program
from surveyctl.reconcile import kinds
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.live import LiveResult
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.reconcile.reads import LiveReads
from surveyctl.reconcile.recovery import DEFAULT_SETTLE_SECONDS, recover_lost_creates
from surveyctl.resources import address as address_of
from surveyctl.resources import member_of, split_address
from surveyctl.state import State
from surveyctl.statuses import LIVE


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
    # False: plan against the state alone (`plan --refresh=false`); see reads.py.
    refresh: bool = True
    rule: Rule | None = None  # the environment's identity rule (default: title and locale)


def make_plan(client: Marketplace, request: PlanRequest, reads: LiveReads | None = None) -> Plan:
    """The plan for `request`; reads live bodies through `client` (or `reads`, already
    started while the manifests loaded), writes nothing."""
    with collector_paused():  # a plan holds every live body until it is done
        if reads is not None:
            return _make_plan(client, request, reads)
        with LiveReads(client, request.state, request.parallelism, request.refresh) as own:
            return _make_plan(client, request, own)


def _make_plan(client: Marketplace, request: PlanRequest, reads: LiveReads) -> Plan:
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
        from_state=not request.refresh,
    )
    reads.state = state
    reads.start()
    # The reads run in the background; this thread plans each resource as its body arrives,
    # so the planning (CPU) overlaps the network waits instead of queueing behind them.
    for kind in kinds.in_order():
        changes = []
        manifests = sorted(kind.manifests(request.desired).items())
        addresses = [address_of(kind.name, name) for name, _ in manifests]
        reads.expect(
            kind,
            {
                a: (state.resources.get(a), m)
                for a, (_, m) in zip(addresses, manifests, strict=True)
            },
        )
        for (name, manifest), address in zip(manifests, addresses, strict=True):
            result = reads.result(kind, address, state.resources.get(address), manifest)
            change = kind.plan(name, manifest, state, result, plan)
            if change is not None:
                changes.append(change)
        kind.after_plan(client, changes, plan, request.parallelism)
        plan.resources.extend(changes)
    desired = _desired_addresses(request)
    live = reads.read_all({a: r for a, r in state.resources.items() if a not in desired})
    _plan_removed(request, live, plan)
    plan.unread = sorted(address for address, result in reads.results.items() if result.error)
    plan.blocked = _blocked(request)
    return plan


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


def _program_of(request: PlanRequest, name: str) -> Program | None:
    """The program in the manifests that a removed resource was a member of, else None. Its
    lifecycle as it is now decides: a program that keeps its retired members (prevent_destroy,
    the default) never destroys them, and one that does not lets `--destroy` delete them even
    when prevent_destroy was recorded at their last apply (the two change in one edit when a
    wave is dropped together with `prevent_destroy: false`)."""
    member = member_of(name)
    return request.desired.programs.get(member.program) if member else None


def _retired(
    address: str, name: str, program: Program, body: dict | None, survey_id: object
) -> Note:
    """The note of a member the program keeps: a note when its market or wave left the
    program (saying so when its survey is still live: leaving the program stops nothing, and
    a wave dropped as if that ended it would go on taking completes and money); a warning
    when both remain and the program no longer makes it (its `exclusion` removed), as the
    resource stays in force on the marketplace all the same."""
    member = member_of(name)
    if member is None or member.market not in program.markets or member.wave not in program.waves:
        kept = f"retired from program {program.name}: kept, never destroyed"
        if body and body.get("ps_survey_status") == LIVE:
            kept += (
                f", and survey {survey_id} is still live, taking completes; "
                f"`surveyctl status {survey_id} paused` stops it"
            )
        return Note("note", address, kept)
    return Note(
        "warning",
        address,
        f"retired from program {program.name}, which no longer makes it for {member.market}, "
        f"{member.wave}: kept and still in force on the marketplace, never destroyed; to delete "
        "it, set the program's lifecycle prevent_destroy: false and plan with --destroy",
    )


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
        program = _program_of(request, name)
        if program is not None and program.keep_retired:
            plan.notes.append(_retired(address, name, program, body, record.remote_id))
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
            # A delete needs its read as much as an update: without it the plan cannot say
            # the survey is live or what spend leaves with it. Held back, it is reported as
            # unread (`unattempted`), so the run ends incomplete and is run again.
            held = "; not deleted until it can be read: plan again" if request.destroy else ""
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    f"no longer in the manifests; cannot read it: {result.error}{held}",
                )
            )
            if request.destroy:
                continue
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
        if record.prevent_destroy and program is None:
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
        if program is not None:
            plan.released.append(address)
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
