"""The applier: carries out a Plan, step by step, and records every success at once.

Order: creates and updates kind by kind in the kinds' order (surveys, then the groups that
name them), then deletes in the reverse order (a group is gone before the surveys it names).
Each kind's module does its own writes (`surveyctl.reconcile.kinds`). Within a step the writes
run in parallel. A failed marketplace write does not stop the others; the result lists what
was and was not done, and the state holds everything that was.

An apply can be stopped (`stop`, set on SIGINT, SIGTERM or SIGHUP): the writes in flight finish and
are recorded, the others are not attempted, and the result says so. An apply that can no
longer record what it does halts the same way: one that lost its state lock (a `force-unlock`,
or the PostgreSQL session holding it ended; each write first asks the store whether the lock is
still its own, because another apply may hold it by then), and one whose state write failed
(a database that refuses writes, a full disk). Going on, each change it made would be one
nobody recorded.

A create is journaled in state BEFORE its POST and resolved right after the answer. When the
answer is lost (connection reset, timeout, 502/504) the entry stays and blocks a blind retry,
which could make a duplicate survey: the next plan resolves it from what the marketplace shows
(`surveyctl.reconcile.recovery`), and leaves it to a person only when it cannot tell.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from surveyctl.errors import SurveyctlError
from surveyctl.reconcile import kinds
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.kinds.base import DEFINITE_REFUSALS
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.state import LockLost, State, StateBackend, StateError

# The message of a write not attempted because the apply was stopped.
INTERRUPTED = "not attempted: the apply was interrupted"
# The messages of a write not attempted because the apply halted: it no longer held the state
# lock, or a state write of it failed.
LOCK_LOST = "not attempted: this apply lost the state lock"
STATE_FAILED = "not attempted: a state write of this apply failed"
HALTS = {LOCK_LOST: "the state lock was lost", STATE_FAILED: "a state write failed"}

__all__ = [
    "DEFINITE_REFUSALS",
    "INTERRUPTED",
    "HALTS",
    "LOCK_LOST",
    "STATE_FAILED",
    "ApplyResult",
    "Outcome",
    "apply_plan",
]


@dataclass
class Outcome:
    """What happened to one planned resource."""

    address: str
    action: str
    status: str  # "done", "failed", "skipped"
    message: str = ""


@dataclass
class ApplyResult:
    """Every planned write's outcome, in the order they completed; `interrupted` when the
    apply was stopped before it attempted them all."""

    outcomes: list[Outcome] = field(default_factory=list)
    interrupted: bool = False
    # LOCK_LOST or STATE_FAILED when the apply halted: a write in flight may have reached the
    # marketplace without its record.
    halted: str = ""
    # The sentence of what halted it (the lost lock's, the failed state write's): when the lock
    # was found lost before any write, no failed write carries it, and the report says it.
    halt_detail: str = ""
    # When interrupted: 128 + the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP), as a
    # shell says.
    exit_code: int = 130

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status != "done"]

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def apply_plan(
    plan: Plan,
    client: Marketplace,
    store: StateBackend,
    parallelism: int = DEFAULT_PARALLELISM,
    on_outcome: Callable[[Outcome], None] | None = None,
    stop: threading.Event | None = None,
) -> ApplyResult:
    """Runs the plan's writes in order; returns every outcome (never raises for one failure).

    Once `stop` is set no write starts: those in flight finish and are recorded, the rest are
    `skipped` as INTERRUPTED. Once the state lock is found lost, or a state write failed, no
    write starts either: the rest are `skipped` as LOCK_LOST or STATE_FAILED.
    """
    result = ApplyResult()
    stop = stop or threading.Event()
    halt = _Halt()
    changes = [r for r in plan.resources if r.is_change]
    order = kinds.in_order()
    for resource in changes:
        kinds.get(resource.kind)  # an unknown kind fails before any write
    steps = [
        [r for r in changes if r.kind == kind.name and r.action != "delete"] for kind in order
    ] + [
        [r for r in changes if r.kind == kind.name and r.action == "delete"] for kind in order[::-1]
    ]
    failed: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        for step in steps:

            def run(resource: ResourceChange) -> Outcome:
                if stop.is_set():
                    return Outcome(resource.address, resource.action, "skipped", INTERRUPTED)
                if halt.reason:
                    return Outcome(resource.address, resource.action, "skipped", halt.reason)
                return _run_one(resource, client, store, failed, halt)

            for outcome in pool.map(run, step):
                result.outcomes.append(outcome)
                if outcome.status != "done":
                    failed.add(outcome.address)
                if on_outcome:
                    on_outcome(outcome)
    result.interrupted = stop.is_set()
    result.halted = halt.reason
    result.halt_detail = halt.detail
    return result


class _Halt:
    """Why the apply starts no further write ('' while it goes on), and the sentence that said
    so; the first reason stays."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self.reason = ""
        self.detail = ""

    def set(self, reason: str, detail: str) -> None:
        with self._mutex:
            if not self.reason:
                self.reason, self.detail = reason, detail


_UNREAD = "its live body could not be read, so it was not planned; run apply again"
_UNCHECKED = (
    "whether it exists on the service already could not be checked, so it was not created; "
    "run apply again"
)


def unattempted(plan: Plan) -> list[Outcome]:
    """Resources the plan could not plan: ones it could not read, and creates waiting for an
    earlier attempt to be resolved. Nothing is attempted for them, and the apply reports them
    so that it ends incomplete (exit 1) and is run again."""
    planned = {resource.address for resource in plan.resources}
    unread = [
        Outcome(address, "read", "skipped", _UNREAD)
        for address in plan.unread
        if address not in planned and address not in plan.unchecked
    ] + [Outcome(address, "create", "skipped", _UNCHECKED) for address in plan.unchecked]
    return unread + [
        Outcome(
            address,
            "create",
            "skipped",
            "an earlier create of it is not resolved yet (see the plan's notes); run apply again",
        )
        for address in plan.blocked
        if address not in planned
    ]


def forget_gone(plan: Plan, store: StateBackend) -> list[Outcome]:
    """With `--destroy`: forgets (one state write) the managed resources no manifest names
    that are already gone from the marketplace."""
    if not plan.destroy or not plan.gone:
        return []

    def change(state: State) -> None:
        for gone in plan.gone:
            state.resources.pop(gone, None)

    store.update(change)
    message = "already deleted in the marketplace; removed from the state"
    return [Outcome(gone, "forget", "done", message) for gone in plan.gone]


def record_settled(plan: Plan, store: StateBackend) -> int:
    """Records the manifest's body as last applied for surveys and groups the plan leaves
    unchanged whose live body already is the manifest's while the state remembers an older
    body: a write made by an apply killed before its state write (or the same change made by
    hand). The next plan is then settled, with no `apply --refresh-only` needed (one state
    write)."""
    wanted = {
        r.address: r.last_applied
        for r in plan.resources
        if r.action == "no-op" and r.last_applied is not None
    }
    # Through the kind: a group's record also keeps the ids of its members (GroupKind.settled).
    return _record_field(
        store,
        "last_applied",
        wanted,
        lambda record, body: kinds.get(record.kind).settled(record, body),
    )


def record_seen(plan: Plan, store: StateBackend) -> int:
    """Records the `mod_on` of surveys the plan read and found as last applied, so that later
    plans need not read them while the survey list shows the same value (one state write)."""
    return _record_field(store, "mod_on", {a: v for a, v in plan.seen.items() if v is not None})


def sync_lifecycle(plan: Plan, store: StateBackend) -> int:
    """Records `lifecycle.prevent_destroy` of unchanged resources (a state-only write): a
    manifest that is later removed can no longer protect its resource, the state must."""
    wanted = {r.address: r.prevent_destroy for r in plan.resources if r.action == "no-op"}
    return _record_field(store, "prevent_destroy", wanted)


def _record_field(
    store: StateBackend,
    name: str,
    wanted: dict[str, object],
    replace: Callable[[Any, Any], Any] | None = None,
) -> int:
    """Sets record field `name` to `wanted[address]` where the state holds another value, in
    one state write (none when nothing differs); returns how many records changed.
    `replace(record, value)` makes the new record when setting the field alone is not enough."""

    def stale(state: State) -> list[str]:
        return [
            address
            for address, value in wanted.items()
            if (record := state.resources.get(address)) is not None
            and getattr(record, name) != value
        ]

    def change(state: State) -> None:
        for address in stale(state):
            record, value = state.resources[address], wanted[address]
            state.resources[address] = (
                replace(record, value)
                if replace is not None
                else dataclasses.replace(record, **{name: value})
            )

    count = len(stale(store.current()))
    if count:
        store.update(change)
    return count


def _run_one(
    resource: ResourceChange,
    client: Marketplace,
    store: StateBackend,
    failed: set[str],
    halt: _Halt,
) -> Outcome:
    try:
        store.check_lock()
    except LockLost as lost:
        halt.set(LOCK_LOST, str(lost))
        return Outcome(resource.address, resource.action, "skipped", LOCK_LOST)
    try:
        write = kinds.get(resource.kind).writers[resource.action]
        message = write(resource, client, store, failed)
        return Outcome(resource.address, resource.action, "done", message)
    except StateError as exc:
        # Its marketplace write may have been made; the record of it was not.
        halt.set(LOCK_LOST if isinstance(exc, LockLost) else STATE_FAILED, str(exc))
        return Outcome(resource.address, resource.action, "failed", str(exc))
    except kinds.Skipped as exc:
        return Outcome(resource.address, resource.action, "skipped", str(exc))
    except SurveyctlError as exc:
        return Outcome(resource.address, resource.action, "failed", str(exc))
