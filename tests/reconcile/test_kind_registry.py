"""The registry of resource kinds: a kind defined here alone goes through the same planner,
applier, refresh and renderers as surveys and groups, and a kind nobody registered is an
error, never taken for another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.model import DesiredState
from surveyctl.reconcile import kinds
from surveyctl.reconcile.apply import apply_plan
from surveyctl.reconcile.kinds.base import blocked_create, journaled_create, unreadable
from surveyctl.reconcile.plan import FieldChange, Plan, ResourceChange
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.reconcile.refresh import make_refresh, record_refresh
from surveyctl.render import text
from surveyctl.resources import address, known_kinds
from surveyctl.state import FileStateStore, StateError, SurveyRecord
from surveyctl.state.records import record_from_json, unregister_record

MEMO = "Memo"


@dataclass(frozen=True)
class MemoRecord:
    """What state keeps of a memo."""

    memo_id: str
    last_applied: dict | None = None
    prevent_destroy: bool = False

    kind = MEMO
    id_name = "memo_id"

    @property
    def remote_id(self) -> str:
        return self.memo_id

    def ids(self) -> str:
        return f"memo_id={self.memo_id}"

    def to_json(self) -> dict:
        return {
            "memo_id": self.memo_id,
            "last_applied": self.last_applied,
            "prevent_destroy": self.prevent_destroy,
        }

    @classmethod
    def from_json(cls, value: Any, source: object, where: str) -> MemoRecord:
        return cls(**value)


@dataclass
class Memo:
    """A memo's manifest."""

    text: str


class MemoKind(kinds.Kind):
    """Memos, kept by a service of their own (`remote`: memo_id -> body)."""

    name = MEMO
    noun = "memo"
    id_label = "memo"
    record_type = MemoRecord
    order = 30

    def __init__(self) -> None:
        self.remote: dict[str, dict] = {}

    def read(self, client, record: MemoRecord) -> dict:
        if record.memo_id not in self.remote:
            raise ApiError("GET", f"/memos/{record.memo_id}", 404, None, "not found")
        return dict(self.remote[record.memo_id])

    def fingerprint(self, live: dict) -> str:
        return live["text"]

    def plan(self, name, manifest: Memo, state, result, plan: Plan) -> ResourceChange | None:
        resource = address(MEMO, name)
        record = kinds.base.record_of(self, state, resource)
        if blocked_create(self, state, resource, record, plan, None):
            return None
        body = {"text": manifest.text}
        if record is None:
            return ResourceChange(MEMO, name, "create", body=body, last_applied=body)
        if result is None or result.error:
            plan.notes.append(unreadable(self, resource, result, None))
            return None
        live = result.body
        changes = [FieldChange("text", live["text"], body["text"])] if live != body else []
        return ResourceChange(
            MEMO,
            name,
            "update" if changes else "no-op",
            remote_id=record.memo_id,
            body=body if changes else None,
            last_applied=body,
            changes=changes,
            drift=self._drift(record, live),
            fingerprint=self.fingerprint(live),
        )

    def refresh(self, record: MemoRecord, live: dict):
        drift = self._drift(record, live)
        return drift, dict(live), MemoRecord(record.memo_id, dict(live), record.prevent_destroy)

    @staticmethod
    def _drift(record: MemoRecord, live: dict) -> list[FieldChange]:
        applied = (record.last_applied or {}).get("text")
        return [FieldChange("text", applied, live["text"])] if applied != live["text"] else []

    def _create(self, resource, client, store, failed) -> str:
        def send(body: dict) -> str:
            memo_id = f"m{len(self.remote) + 1}"
            self.remote[memo_id] = dict(body)
            return memo_id

        memo_id = journaled_create(resource, store, resource.body, send)
        store.resolve_create(resource.address, MemoRecord(memo_id, resource.last_applied))
        return f"created memo {memo_id}"

    def _update(self, resource, client, store, failed) -> str:
        self.remote[resource.remote_id] = dict(resource.body)
        store.record(resource.address, MemoRecord(resource.remote_id, resource.last_applied))
        return f"updated memo {resource.remote_id}"

    def _delete(self, resource, client, store, failed) -> str:
        del self.remote[resource.remote_id]
        store.forget(resource.address)
        return f"deleted memo {resource.remote_id}"

    @property
    def writers(self):  # type: ignore[override]
        return {"create": self._create, "update": self._update, "delete": self._delete}


@pytest.fixture
def memo_kind():
    kind = kinds.register(MemoKind())
    yield kind
    kinds.unregister(MEMO)


@pytest.fixture
def store(tmp_path) -> FileStateStore:
    return FileStateStore(tmp_path / "state" / "local.json", "local")


def _desired(**memos: str) -> DesiredState:
    return DesiredState(others={MEMO: {name: Memo(text) for name, text in memos.items()}})


def _plan(api, store, desired: DesiredState, destroy: bool = False) -> Plan:
    return make_plan(api, PlanRequest(desired, store.load(), "local", destroy=destroy))


def test_a_kind_defined_outside_the_core_is_planned_and_rendered(api, store, memo_kind):
    plan = _plan(api, store, _desired(hello="hi"))
    assert [(r.address, r.action) for r in plan.resources] == [("Memo/hello", "create")]
    assert "Memo/hello will be created" in text.render(plan)


def test_a_kind_defined_outside_the_core_is_applied_and_recorded(api, store, memo_kind):
    result = apply_plan(_plan(api, store, _desired(hello="hi")), api, store)
    assert [(o.address, o.status) for o in result.outcomes] == [("Memo/hello", "done")]
    record = store.load().resources["Memo/hello"]
    assert memo_kind.remote[record.memo_id] == {"text": "hi"}


def test_a_kind_defined_outside_the_core_is_updated_then_destroyed(api, store, memo_kind):
    apply_plan(_plan(api, store, _desired(hello="hi")), api, store)
    update = _plan(api, store, _desired(hello="hello"))
    assert [r.action for r in update.resources] == ["update"]
    apply_plan(update, api, store)
    assert list(memo_kind.remote.values()) == [{"text": "hello"}]
    apply_plan(_plan(api, store, _desired(), destroy=True), api, store)
    assert memo_kind.remote == {} and "Memo/hello" not in store.load().resources


def test_a_kind_defined_outside_the_core_is_refreshed(api, store, memo_kind):
    apply_plan(_plan(api, store, _desired(hello="hi")), api, store)
    memo_id = store.load().resources["Memo/hello"].memo_id
    memo_kind.remote[memo_id] = {"text": "changed by hand"}
    refresh = make_refresh(api, store.load(), "local")
    assert [c.new for r in refresh.plan.resources for c in r.drift] == ["changed by hand"]
    assert record_refresh(refresh, store) == 1
    assert not _plan(api, store, _desired(hello="changed by hand")).has_changes


def test_an_apply_of_a_kind_nobody_registered_fails_before_any_write(api, store):
    plan = Plan("local", store.load().lineage, 0)
    plan.resources.append(ResourceChange("Survey", "a", "create", body={"survey_title": "x"}))
    plan.resources.append(ResourceChange("Widget", "b", "delete", remote_id="w1"))
    with pytest.raises(SurveyctlError, match="unknown resource kind 'Widget'"):
        apply_plan(plan, api, store)
    assert store.load().journal == {}


def test_a_kind_unregistered_is_no_longer_read_from_a_state_and_the_core_ones_stay():
    kinds.register(MemoKind())
    kinds.unregister(MEMO)
    unregister_record("Survey")  # asked of a core record type: nothing is forgotten
    with pytest.raises(StateError, match=f"{MEMO}/a, a resource of kind '{MEMO}'"):
        record_from_json(f"{MEMO}/a", {}, "state.json")
    assert known_kinds() == ("Survey", "ExclusionGroup")
    assert isinstance(record_from_json("Survey/a", {"ps_survey_id": 1}, "s"), SurveyRecord)


def test_a_group_shows_the_same_drift_in_a_plan_as_in_a_refresh(api, store):
    # The managed fields of an older record that the live body no longer carries at all:
    # the plan used to show no drift while a refresh showed both fields removed.
    from surveyctl.model import ExclusionGroup, Lifecycle
    from surveyctl.reconcile.live import LiveResult
    from surveyctl.state import GroupRecord

    record = GroupRecord("grp-1", [], {"name": "Trackers", "exclusion_period": 30})
    state = store.load()
    state.resources["ExclusionGroup/trackers"] = record
    live = {"buyer_surveygroup_ref": "grp-1", "surveys_in_group": []}
    manifest = ExclusionGroup(
        "trackers", "grp-1", "Trackers", exclusion_period=30, lifecycle=Lifecycle()
    )
    group = kinds.get("ExclusionGroup")
    plan = Plan("local", state.lineage, 0)
    change = group.plan(
        "trackers", manifest, state, LiveResult("ExclusionGroup/trackers", live), plan
    )
    refreshed, _, _ = group.refresh(record, live)
    assert [c.path for c in change.drift] == ["name", "exclusion_period"]
    assert change.drift == refreshed


def test_a_saved_plan_of_a_registered_kind_loads_again(api, store, memo_kind, tmp_path):
    from surveyctl.reconcile.planfile import load_plan, save_plan

    save_plan(_plan(api, store, _desired(hello="hi")), tmp_path / "memo.plan")
    loaded = load_plan(tmp_path / "memo.plan")
    assert [(r.address, r.action) for r in loaded.resources] == [("Memo/hello", "create")]


def test_a_saved_plan_of_a_kind_nobody_registered_is_refused(api, store, tmp_path):
    from surveyctl.reconcile.planfile import PlanFileError, load_plan, save_plan

    plan = Plan("local", store.load().lineage, 0)
    plan.resources.append(ResourceChange("Widget", "b", "create", body={"x": 1}))
    save_plan(plan, tmp_path / "widget.plan")
    with pytest.raises(PlanFileError, match="resources.0.kind: 'Widget' is not a known"):
        load_plan(tmp_path / "widget.plan")
