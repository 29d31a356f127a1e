"""The applier: carries out a Plan, step by step, and records every success at once.

Order: survey creates and updates, then groups (which name the surveys), then group deletes,
then survey deletes (a group is gone before the surveys it names). Within a step the writes
run in parallel. A failure does not stop the others; the result lists what was and was not
done, and the state holds everything that was.

An apply can be stopped (`stop`, set on SIGINT or SIGTERM): the writes in flight finish and
are recorded, the others are not attempted, and the result says so.

A create is journaled in state BEFORE its POST and resolved right after the answer. When the
answer is lost (connection reset, timeout, 502/504) the entry stays and blocks a second
create of that name until a person resolves it: a blind retry could make a duplicate survey.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.reconcile.groups import api_body
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.resources import EXCLUSION_GROUP, SURVEY
from surveyctl.resources import address as address_of
from surveyctl.state import GroupRecord, State, StateBackend, SurveyRecord

# The message of a write not attempted because the apply was stopped.
INTERRUPTED = "not attempted: the apply was interrupted"

# Answers that say for certain the create was not made (the request was refused as it stood).
DEFINITE_REFUSALS = frozenset({400, 401, 403, 404, 409, 422, 429, 503})


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

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status != "done"]

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def apply_plan(
    plan: Plan,
    client: Marketplace,
    store: StateBackend,
    parallelism: int = 10,
    on_outcome: Callable[[Outcome], None] | None = None,
    stop: threading.Event | None = None,
) -> ApplyResult:
    """Runs the plan's writes in order; returns every outcome (never raises for one failure).

    Once `stop` is set no write starts: those in flight finish and are recorded, the rest are
    `skipped` as INTERRUPTED.
    """
    result = ApplyResult()
    stop = stop or threading.Event()
    changes = [r for r in plan.resources if r.is_change]
    steps = [
        [r for r in changes if r.kind == SURVEY and r.action != "delete"],
        [r for r in changes if r.kind == EXCLUSION_GROUP and r.action != "delete"],
        [r for r in changes if r.kind == EXCLUSION_GROUP and r.action == "delete"],
        [r for r in changes if r.kind == SURVEY and r.action == "delete"],
    ]
    failed: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        for step in steps:

            def run(resource: ResourceChange) -> Outcome:
                if stop.is_set():
                    return Outcome(resource.address, resource.action, "skipped", INTERRUPTED)
                return _run_one(resource, client, store, failed)

            for outcome in pool.map(run, step):
                result.outcomes.append(outcome)
                if outcome.status != "done":
                    failed.add(outcome.address)
                if on_outcome:
                    on_outcome(outcome)
    result.interrupted = stop.is_set()
    return result


def unattempted(plan: Plan) -> list[Outcome]:
    """Resources the plan could not plan: ones it could not read, and creates waiting for an
    earlier attempt to be resolved. Nothing is attempted for them, and the apply reports them
    so that it ends incomplete (exit 1) and is run again."""
    planned = {resource.address for resource in plan.resources}
    unread = [
        Outcome(
            address,
            "read",
            "skipped",
            "its live body could not be read, so it was not planned; run apply again",
        )
        for address in plan.unread
        if address not in planned
    ]
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
    """Records the manifest's body as last applied for surveys the plan leaves unchanged whose
    live body already is the manifest's while the state remembers an older body: a write made
    by an apply killed before its state write (or the same change made by hand). The next
    plan is then settled, with no `apply --refresh-only` needed (one state write)."""
    wanted = {
        r.address: r.last_applied
        for r in plan.resources
        if r.kind == SURVEY and r.action == "no-op" and r.last_applied is not None
    }
    return _record_field(store, "last_applied", wanted, only=SurveyRecord)


def sync_lifecycle(plan: Plan, store: StateBackend) -> int:
    """Records `lifecycle.prevent_destroy` of unchanged resources (a state-only write): a
    manifest that is later removed can no longer protect its resource, the state must."""
    wanted = {r.address: r.prevent_destroy for r in plan.resources if r.action == "no-op"}
    return _record_field(store, "prevent_destroy", wanted)


def _record_field(
    store: StateBackend, name: str, wanted: dict[str, object], only: type = object
) -> int:
    """Sets record field `name` to `wanted[address]` where the state holds another value, in
    one state write (none when nothing differs); returns how many records changed."""

    def stale(state: State) -> list[str]:
        return [
            address
            for address, value in wanted.items()
            if isinstance(record := state.resources.get(address), only)
            and record is not None
            and getattr(record, name) != value
        ]

    def change(state: State) -> None:
        for address in stale(state):
            state.resources[address] = dataclasses.replace(
                state.resources[address], **{name: wanted[address]}
            )

    count = len(stale(store.current()))
    if count:
        store.update(change)
    return count


def _run_one(
    resource: ResourceChange, client: Marketplace, store: StateBackend, failed: set[str]
) -> Outcome:
    try:
        message = _WRITERS[(resource.kind, resource.action)](resource, client, store, failed)
        return Outcome(resource.address, resource.action, "done", message)
    except _Skipped as exc:
        return Outcome(resource.address, resource.action, "skipped", str(exc))
    except SurveyctlError as exc:
        return Outcome(resource.address, resource.action, "failed", str(exc))


class _Skipped(Exception):
    """Not attempted, because something it depends on failed."""


def _survey_record(response: dict, resource: ResourceChange) -> SurveyRecord:
    quota_ids = {
        q["buyer_quota_id"]: q["ps_quota_id"]
        for q in response.get("quotas") or []
        if q.get("buyer_quota_id") and q.get("ps_quota_id")
    }
    return SurveyRecord(
        int(response["ps_survey_id"]), quota_ids, resource.last_applied, resource.prevent_destroy
    )


def _journaled_create(resource: ResourceChange, store: StateBackend, body: dict, send) -> dict:
    """POSTs `body` with `send(body)`, journaled in state first. A definite refusal clears the
    journal entry; a lost answer leaves it, so nobody creates the resource a second time."""
    store.journal_create(resource.address, body)
    try:
        return send(body)
    except ApiError as exc:
        if exc.status in DEFINITE_REFUSALS:
            store.resolve_create(resource.address, None)
            raise
        raise _ambiguous(resource, exc) from exc
    except SurveyctlError as exc:
        raise _ambiguous(resource, exc) from exc


def _create_survey(resource, client, store, failed) -> str:
    response = _journaled_create(resource, store, resource.body, client.create_survey)
    record = _survey_record(response, resource)
    store.resolve_create(resource.address, record)
    return f"created ps_survey_id {record.ps_survey_id}"


def _ambiguous(resource: ResourceChange, exc: SurveyctlError) -> SurveyctlError:
    return SurveyctlError(
        f"{exc}; the create may or may not have been made, so {resource.address} stays "
        "journaled: run `surveyctl plan` for how to resolve it"
    )


def _update_survey(resource, client, store, failed) -> str:
    response = client.update_survey(resource.remote_id, resource.body)
    store.record(resource.address, _survey_record(response, resource))
    return f"updated ps_survey_id {resource.remote_id}"


def _update_quotas(resource, client, store, failed) -> str:
    done = []
    for quota_id, body in resource.quota_updates.items():
        try:
            client.update_quota(resource.remote_id, quota_id, body)
        except SurveyctlError as exc:
            raise SurveyctlError(
                f"{exc} (quotas already updated: {', '.join(done) or 'none'})"
            ) from exc
        done.append(quota_id)
    # Quota PUTs keep every ps_quota_id, so the recorded ids stay as they are.
    previous = store.current().survey(resource.name) or SurveyRecord(int(resource.remote_id))
    store.record(
        resource.address,
        dataclasses.replace(
            previous, last_applied=resource.last_applied, prevent_destroy=resource.prevent_destroy
        ),
    )
    return f"updated quotas {', '.join(done)} of ps_survey_id {resource.remote_id}"


def _delete_survey(resource, client, store, failed) -> str:
    client.delete_survey(resource.remote_id)
    store.forget(resource.address)
    return f"deleted ps_survey_id {resource.remote_id}"


def _group_api_body(resource: ResourceChange, store: StateBackend, failed: set[str]) -> dict:
    state = store.current()
    ids: dict[str, int] = {}
    for name in resource.body.get("surveys") or []:
        member = address_of(SURVEY, name)
        if member in failed:
            raise _Skipped(f"{member}, which the group names, failed")
        record = state.survey(name)
        if record is None:
            raise _Skipped(f"{member}, which the group names, has no ps_survey_id")
        ids[name] = record.ps_survey_id
    return api_body(resource.body, ids)


def _group_record(body: dict, resource: ResourceChange) -> GroupRecord:
    """What state keeps of a group once its body was accepted."""
    return GroupRecord(
        body["buyer_surveygroup_ref"],
        list(body["surveys_in_group"]),
        body,
        resource.prevent_destroy,
    )


def _create_group(resource, client, store, failed) -> str:
    body = _group_api_body(resource, store, failed)
    _journaled_create(resource, store, body, client.create_group)
    store.resolve_create(resource.address, _group_record(body, resource))
    return f"created group {body['buyer_surveygroup_ref']}"


def _update_group(resource, client, store, failed) -> str:
    body = _group_api_body(resource, store, failed)
    client.update_group(resource.remote_id, body)
    store.record(resource.address, _group_record(body, resource))
    return f"updated group {resource.remote_id}"


def _delete_group(resource, client, store, failed) -> str:
    client.delete_group(resource.remote_id)
    store.forget(resource.address)
    return f"deleted group {resource.remote_id}"


_WRITERS = {
    (SURVEY, "create"): _create_survey,
    (SURVEY, "update"): _update_survey,
    (SURVEY, "quota-update"): _update_quotas,
    (SURVEY, "delete"): _delete_survey,
    (EXCLUSION_GROUP, "create"): _create_group,
    (EXCLUSION_GROUP, "update"): _update_group,
    (EXCLUSION_GROUP, "delete"): _delete_group,
}
