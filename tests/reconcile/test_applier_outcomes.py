"""What the applier reports for each planned write: done with what it did, failed with why,
or not attempted with why not, and in which order the writes are made.

The plans are made and applied in-process against the sandbox over HTTP, one write at a time
(parallelism 1) so that the order of the outcomes is the order of the writes. A state that
stops recording is a real file state whose writes fail from a chosen one on."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.errors import ApiError
from surveyctl.manifests import load_desired
from surveyctl.reconcile.apply import LOCK_LOST, STATE_FAILED, apply_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.state import FileStateStore, LockLost, StateError

from .conftest import group_manifest, survey_manifest, survey_title


class _FailingState(FileStateStore):
    """A file state whose `fail_from`-th record of a create and every later one raise `error`
    (after the POST it would record), and whose lock is lost once it has recorded
    `lose_lock_after` creates (as a force-unlock between two writes would)."""

    def __init__(self, path: Path, fail_from: int = 0, error=None, lose_lock_after: int = 0):
        super().__init__(path)
        self.fail_from, self.lose_lock_after = fail_from, lose_lock_after
        self.error = error or StateError("the disk is full (test)")
        self.writes = 0
        self.lock_lost = False

    def resolve_create(self, resource_address, record):
        self.writes += 1
        if self.fail_from and self.writes >= self.fail_from:
            raise self.error
        written = super().resolve_create(resource_address, record)
        self.lock_lost = self.lock_lost or self.writes == self.lose_lock_after
        return written

    def check_lock(self) -> None:
        if self.lock_lost:
            raise LockLost("the state lock is no longer this apply's (test)")


def _state_path(project: Path) -> Path:
    return project / ".surveyctl" / "state" / "local.json"


def _plan(project: Path, client: ApiClient, destroy: bool = False):
    desired = load_desired([project / "manifests"], Catalog(lambda: client, "local", None))
    state = FileStateStore(_state_path(project)).load()
    return make_plan(client, PlanRequest(desired, state, "local", destroy))


def _rows(result) -> list[tuple[str, str, str, str]]:
    return [(o.address, o.action, o.status, o.message) for o in result.outcomes]


def _titles(client: ApiClient) -> set[str]:
    return {s["survey_title"] for s in client.list_surveys(status=[11, 22, 33, 44])}


def _three_surveys(manifests) -> None:
    for name in ("alpha", "bravo", "charlie"):
        manifests.write(survey_manifest(name))


def _apply_three(project: Path, manifests, sandbox, **failing):
    """Applies alpha, bravo and charlie, one at a time, over a `_FailingState(**failing)`;
    the result and the client."""
    _three_surveys(manifests)
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    store = _FailingState(_state_path(project), **failing)
    return apply_plan(_plan(project, client), client, store, 1), client


def test_each_done_write_says_what_it_did_with_the_id_it_got(project, manifests, sandbox):
    _three_surveys(manifests)
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    seen = []
    result = apply_plan(
        _plan(project, client), client, FileStateStore(_state_path(project)), 1, seen.append
    )
    state = FileStateStore(_state_path(project)).load()
    assert _rows(result) == [
        (
            f"Survey/{name}",
            "create",
            "done",
            f"created ps_survey_id {state.survey(name).ps_survey_id}",
        )
        for name in ("alpha", "bravo", "charlie")
    ]
    assert seen == result.outcomes
    assert not result.interrupted and result.halted == ""


def test_a_failed_state_write_halts_the_apply_and_names_each_write_left(
    project, manifests, sandbox
):
    result, client = _apply_three(project, manifests, sandbox, fail_from=2)
    rows = _rows(result)
    assert rows[0][:3] == ("Survey/alpha", "create", "done")
    assert rows[1:] == [
        ("Survey/bravo", "create", "failed", "the disk is full (test)"),
        ("Survey/charlie", "create", "skipped", STATE_FAILED),
    ]
    assert result.halted == STATE_FAILED
    assert survey_title("charlie") not in _titles(client)


def test_a_lock_lost_during_a_write_halts_as_a_lost_lock(project, manifests, sandbox):
    lost = LockLost("the state lock is no longer this apply's (test)")
    result, _ = _apply_three(project, manifests, sandbox, fail_from=1, error=lost)
    assert _rows(result) == [
        ("Survey/alpha", "create", "failed", "the state lock is no longer this apply's (test)"),
        ("Survey/bravo", "create", "skipped", LOCK_LOST),
        ("Survey/charlie", "create", "skipped", LOCK_LOST),
    ]
    assert result.halted == LOCK_LOST


def test_a_lock_found_lost_before_a_write_sends_it_not_and_names_it(project, manifests, sandbox):
    result, client = _apply_three(project, manifests, sandbox, lose_lock_after=1)
    rows = _rows(result)
    assert rows[0][:3] == ("Survey/alpha", "create", "done")
    assert rows[1:] == [
        ("Survey/bravo", "create", "skipped", LOCK_LOST),
        ("Survey/charlie", "create", "skipped", LOCK_LOST),
    ]
    assert result.halted == LOCK_LOST
    assert {survey_title("bravo"), survey_title("charlie")}.isdisjoint(_titles(client))


def test_a_group_whose_survey_failed_is_not_created_and_names_that_survey(
    project, manifests, sandbox, unique
):
    _three_surveys(manifests)
    manifests.write(group_manifest(f"failed-{unique}", "alpha", "bravo"))
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    plan = _plan(project, client)
    bravo = next(r for r in plan.resources if r.address == "Survey/bravo")
    bravo.body = {**bravo.body, "completes_required": -1}  # a body the marketplace refuses
    result = apply_plan(plan, client, FileStateStore(_state_path(project)), 1)
    rows = _rows(result)
    assert [row[:3] for row in rows] == [
        ("Survey/alpha", "create", "done"),
        ("Survey/bravo", "create", "failed"),
        ("Survey/charlie", "create", "done"),
        ("ExclusionGroup/trackers", "create", "skipped"),
    ]
    assert rows[1][3].startswith("POST ") and " answered 400 (code 1004)" in rows[1][3]
    assert rows[3][3] == "Survey/bravo, which the group names, failed"
    with pytest.raises(ApiError) as refused:
        client.get_group(f"failed-{unique}")
    assert refused.value.status == 404


def test_deletes_follow_the_writes_and_a_group_goes_before_its_surveys(
    project, manifests, sandbox, unique
):
    _three_surveys(manifests)
    manifests.write(group_manifest(f"deleted-{unique}", "alpha", "bravo"))
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    apply_plan(_plan(project, client), client, FileStateStore(_state_path(project)), 1)
    for name in ("alpha", "bravo"):
        manifests.remove(name)
    manifests.remove("trackers")
    manifests.write(survey_manifest("charlie", offer_price=3.0))
    plan = _plan(project, client, destroy=True)
    # The plan lists the deletes in the order they run, as a reviewer reads them.
    deletes = [r.address for r in plan.resources if r.action == "delete"]
    assert deletes == ["ExclusionGroup/trackers", "Survey/alpha", "Survey/bravo"]
    result = apply_plan(plan, client, FileStateStore(_state_path(project)), 1)
    assert [row[:3] for row in _rows(result)] == [
        ("Survey/charlie", "update", "done"),
        ("ExclusionGroup/trackers", "delete", "done"),
        ("Survey/alpha", "delete", "done"),
        ("Survey/bravo", "delete", "done"),
    ]
