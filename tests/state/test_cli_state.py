"""`surveyctl state list|show|rm|mv` and `surveyctl force-unlock`, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.state import FileStateStore, GroupRecord, SurveyRecord, state_file
from surveyctl.state.lock import StateLock, read_lock


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """A project with a staging environment; state commands never call the marketplace."""
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        "  staging: {host: 'https://staging.invalid', api_key_env: SURVEYCTL_STAGING_KEY}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.delenv("SURVEYCTL_STAGING_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def store(project: Path) -> FileStateStore:
    store = FileStateStore(state_file(project / ".surveyctl" / "state", "staging"))
    store.record(
        "Survey/brand-tracker-us",
        SurveyRecord(4711, {"male": "q-1", "female": "q-2"}, {"survey_title": "BT"}),
    )
    store.record("ExclusionGroup/brand-trackers", GroupRecord("trackers-2026", [4711], {}))
    store.record("ExclusionGroup/shared", GroupRecord("shared-ref", [], {}))
    store.record("Survey/shared", SurveyRecord(4712))
    return store


def test_list_shows_every_address_with_its_ids_and_names_the_environment(run_cli, store):
    result = run_cli("state", "list")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "ExclusionGroup/brand-trackers  buyer_surveygroup_ref=trackers-2026 surveys=4711",
        "ExclusionGroup/shared  buyer_surveygroup_ref=shared-ref surveys=-",
        "Survey/brand-tracker-us  ps_survey_id=4711 quotas=2",
        "Survey/shared  ps_survey_id=4712 quotas=0",
    ]
    assert "environment staging" in result.stderr


def test_list_marks_an_unresolved_create(run_cli, store):
    store.journal_create("Survey/brand-tracker-ca", {"survey_title": "BT CA"})
    result = run_cli("state", "list")
    assert "Survey/brand-tracker-ca  (unresolved create since " in result.stdout


def test_list_of_an_empty_state_says_so_without_creating_a_file(run_cli, project):
    result = run_cli("state", "list")
    assert result.exit_code == 0 and result.stdout == ""
    assert "No resources in" in result.stderr
    assert not (project / ".surveyctl" / "state" / "staging.json").exists()


def test_show_prints_one_resource_as_json_by_bare_name(run_cli, store):
    result = run_cli("state", "show", "brand-tracker-us")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "address": "Survey/brand-tracker-us",
        "ps_survey_id": 4711,
        "quota_ids": {"male": "q-1", "female": "q-2"},
        "last_applied": {"survey_title": "BT"},
        "prevent_destroy": False,
    }


def test_show_by_full_address(run_cli, store):
    result = run_cli("state", "show", "ExclusionGroup/shared")
    assert json.loads(result.stdout)["buyer_surveygroup_ref"] == "shared-ref"


def test_show_of_an_ambiguous_bare_name_lists_the_candidates(run_cli, store):
    result = run_cli("state", "show", "shared")
    assert result.exit_code == 1
    assert "ambiguous" in result.stderr and "ExclusionGroup/shared, Survey/shared" in result.stderr


def test_show_of_an_unknown_name_is_one_clear_error(run_cli, store):
    result = run_cli("state", "show", "nope")
    assert result.exit_code == 1
    assert "no resource named 'nope'" in result.stderr and "Traceback" not in result.stderr


def test_rm_forgets_a_resource_without_touching_others(run_cli, store):
    result = run_cli("state", "rm", "Survey/shared")
    assert result.exit_code == 0 and "the marketplace is unchanged" in result.stdout
    remaining = FileStateStore(store.path).load()
    assert "Survey/shared" not in remaining.resources
    assert "ExclusionGroup/shared" in remaining.resources
    assert read_lock(store.path) is None  # the lock it took is released


def test_rm_clears_an_unresolved_create_so_the_name_can_be_created_again(run_cli, store):
    store.journal_create("Survey/brand-tracker-ca", {"survey_title": "BT CA"})
    assert run_cli("state", "rm", "brand-tracker-ca").exit_code == 0
    assert FileStateStore(store.path).load().pending_create("Survey/brand-tracker-ca") is None


def test_mv_renames_keeping_the_kind_and_ids(run_cli, store):
    result = run_cli("state", "mv", "brand-tracker-us", "brand-tracker-usa")
    assert result.exit_code == 0
    assert "Moved Survey/brand-tracker-us to Survey/brand-tracker-usa" in result.stdout
    state = FileStateStore(store.path).load()
    assert state.survey("brand-tracker-usa").ps_survey_id == 4711
    assert state.survey("brand-tracker-us") is None


def test_mv_refuses_an_invalid_new_name(run_cli, store):
    result = run_cli("state", "mv", "brand-tracker-us", "Brand Tracker")
    assert result.exit_code == 1 and "not a valid resource name" in result.stderr


def test_rm_fails_at_once_while_another_command_holds_the_lock(run_cli, store):
    with StateLock(store.path, "apply") as held:
        lock_id = held.info.id
        result = run_cli("state", "rm", "Survey/shared")
    assert result.exit_code == 1
    assert f"force-unlock {lock_id}" in result.stderr and "'apply'" in result.stderr
    assert "Survey/shared" in FileStateStore(store.path).load().resources


def test_force_unlock_removes_the_lock_with_that_id(run_cli, store):
    lock = StateLock(store.path, "apply")
    lock.acquire()
    result = run_cli("force-unlock", lock.info.id)
    assert result.exit_code == 0 and f"Removed the lock {lock.info.id}" in result.stdout
    assert read_lock(store.path) is None
    assert run_cli("state", "rm", "Survey/shared").exit_code == 0


def test_force_unlock_with_a_wrong_id_keeps_the_lock(run_cli, store):
    with StateLock(store.path, "apply") as lock:
        result = run_cli("force-unlock", "not-the-id")
        assert result.exit_code == 1 and "not not-the-id" in result.stderr
        assert read_lock(store.path).id == lock.info.id


def test_state_of_another_environment_is_a_different_file(run_cli, store):
    result = run_cli("--env", "sandbox", "state", "list")
    assert result.exit_code == 0 and result.stdout == ""
    assert "environment sandbox" in result.stderr
