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
from surveyctl.reconcile.plan import LEFT_ALONE, Note, Plan, ResourceChange
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
    # The PATHS read when they are some of the project's manifests, not its `manifests:`: the
    # resources of the others are then only unread, never removed (nor deleted, even with
    # `destroy`, which plan_run refuses for such a plan anyway).
    partial: tuple[str, ...] = ()


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
    # A plan of some manifests reads only what they cover: the others' resources are kept
    # unread, and their reads were most of its requests (a plan of one manifest of 26 read 26).
    covered = _covered(request, state) if request.partial else None
    reads.state = state if covered is None else _cut(state, covered)
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
    live = reads.read_all(
        {
            a: r
            for a, r in state.resources.items()
            if a not in desired and (covered is None or a in covered)
        }
    )
    _plan_removed(request, live, plan)
    plan.unread = sorted(address for address, result in reads.results.items() if result.error)
    plan.blocked = _blocked(request)
    return plan


def _desired_addresses(request: PlanRequest) -> set[str]:
    return set(kinds.described(request.desired))


def _covered(request: PlanRequest, state: State) -> set[str]:
    """The managed resources a plan of some manifests (`request.partial`) reads: those the
    manifests read name, the members their programs retired (planned from their bodies), and
    what the kinds say a plan of those relies on (`Kind.read_beside`: the groups a covered
    survey is in). Creates are looked for on the service all the same (identity.py)."""
    desired = _desired_addresses(request)
    covered = {
        address
        for address in state.resources
        if address in desired or _program_of(request, split_address(address)[1]) is not None
    }
    for kind in kinds.in_order():
        covered |= kind.read_beside(state, covered)
    return covered


def _cut(state: State, covered: set[str]) -> State:
    """`state` with only the resources `covered`: what the reads of a partial plan see."""
    resources = {a: r for a, r in state.resources.items() if a in covered}
    return dataclasses.replace(state, resources=resources)


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


# A note on the resources a plan of some manifests did not read names this many of them.
OUTSIDE_NAMES = 3


def _outside_note(paths: tuple[str, ...], addresses: list[str]) -> Note:
    """One note for every resource whose manifest a plan of some PATHS did not read: they were
    not removed, and a warning each (26 of them for one folder of a project) said so falsely."""
    count = len(addresses)
    names = ", ".join(addresses[:OUTSIDE_NAMES])
    if count > OUTSIDE_NAMES:
        names += f" and {count - OUTSIDE_NAMES} more"
    resources = "1 managed resource is" if count == 1 else f"{count} managed resources are"
    return Note(
        "note",
        "",  # said of them all, by name in the message
        f"{resources} not in the manifests read ({', '.join(paths)}): {names}; nothing is "
        "planned for them, and they were not read (the estimated spend leaves them out). To "
        "plan some resources of the whole project, plan without PATHS and with --target "
        "ADDRESS",
    )


def _plan_removed(request: PlanRequest, live: dict[str, LiveResult], plan: Plan) -> None:
    """Resources in state but no longer in the manifests: deleted only with `destroy`, else
    kept (and counted in the spend, which is then the same with and without `destroy`).
    A plan of some of the project's manifests (`request.partial`) keeps every resource of
    the others, under one note, and never deletes one.

    Deletes run in reverse apply order, so a group is gone before the surveys it names."""
    desired = _desired_addresses(request)
    removed = [a for a in request.state.resources if a not in desired]
    removed.sort(key=lambda a: (-kinds.of_address(a).order, a))
    partial = bool(request.partial)
    destroy = request.destroy and not partial
    absent = "not in the manifests read" if partial else "no longer in the manifests"
    outside: list[str] = []
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
            forget = "apply --destroy forgets it" if destroy else "`surveyctl state rm` "
            plan.notes.append(
                Note(
                    "note" if destroy else "warning",
                    address,
                    f"{absent} and already gone from the marketplace; "
                    + (forget if destroy else forget + "forgets it"),
                )
            )
            plan.gone.append(address)
            continue
        if result is not None and result.error:
            # A delete needs its read as much as an update: without it the plan cannot say
            # the survey is live or what spend leaves with it. Held back, it is reported as
            # unread (`unattempted`), so the run ends incomplete and is run again.
            held = "; not deleted until it can be read: plan again" if destroy else ""
            plan.notes.append(
                Note(
                    "warning",
                    address,
                    f"{absent}; cannot read it: {result.error}{held}",
                )
            )
            if destroy:
                continue
        if partial:
            outside.append(address)
            plan.resources.append(_kept(kind, name, record, body))
            continue
        if not destroy:
            plan.notes.append(Note("warning", address, LEFT_ALONE))
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
    if outside:
        plan.notes.append(_outside_note(request.partial, sorted(outside)))
