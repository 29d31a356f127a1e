"""`surveyctl state list|show|rm|mv` and `surveyctl force-unlock`, through the CLI, on both
backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.state import GroupRecord, StateBackend

from .conftest import held_elsewhere, open_staging

pytestmark = pytest.mark.usefixtures("hangup_fails_the_test")


@pytest.fixture
def project(staging_project: Path) -> Path:
    return staging_project


@pytest.fixture
def store(staging_store) -> StateBackend:
    return staging_store


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


def test_list_shows_every_survey_of_a_group_between_commas(run_cli, store):
    store.record("ExclusionGroup/pair", GroupRecord("pair-ref", [4711, 4712]))
    lines = run_cli("state", "list").stdout.splitlines()
    assert "ExclusionGroup/pair  buyer_surveygroup_ref=pair-ref surveys=4711,4712" in lines


def test_list_marks_an_unresolved_create(run_cli, store):
    store.journal_create("Survey/brand-tracker-ca", {"survey_title": "BT CA"})
    result = run_cli("state", "list")
    assert "Survey/brand-tracker-ca  (unresolved create since " in result.stdout


def test_show_of_an_unresolved_create_prints_when_it_was_sent(run_cli, store):
    store.journal_create("Survey/brand-tracker-ca", {"survey_title": "BT CA"})
    entry = store.load().pending_create("Survey/brand-tracker-ca")
    result = run_cli("state", "show", "brand-tracker-ca")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "address": "Survey/brand-tracker-ca",
        "unresolved_create": {
            "address": "Survey/brand-tracker-ca",
            "started_at": entry.started_at,
            "fingerprint": entry.fingerprint,
        },
    }


def test_list_of_an_empty_state_says_so_without_writing_it(run_cli, project):
    result = run_cli("state", "list")
    assert result.exit_code == 0 and result.stdout == ""
    assert "No resources in" in result.stderr
    assert open_staging(project).load().serial == 0
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


def test_show_of_a_misspelt_name_suggests_the_resource_meant(run_cli, store):
    result = run_cli("state", "show", "brand-tracker-su")
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("(did you mean 'brand-tracker-us'?)")


def test_rm_of_a_misspelt_address_suggests_the_address_meant(run_cli, store):
    result = run_cli("state", "rm", "Survey/brand-tracker-su")
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("(did you mean 'Survey/brand-tracker-us'?)")


def test_rm_forgets_a_resource_without_touching_others(run_cli, store, project):
    result = run_cli("state", "rm", "Survey/shared")
    assert result.exit_code == 0 and "the marketplace is unchanged" in result.stdout
    remaining = open_staging(project).load()
    assert "Survey/shared" not in remaining.resources
    assert "ExclusionGroup/shared" in remaining.resources
    assert store.lock_holder() is None  # the lock it took is released


def test_rm_clears_an_unresolved_create_so_the_name_can_be_created_again(run_cli, store, project):
    store.journal_create("Survey/brand-tracker-ca", {"survey_title": "BT CA"})
    assert run_cli("state", "rm", "brand-tracker-ca").exit_code == 0
    assert open_staging(project).load().pending_create("Survey/brand-tracker-ca") is None


def test_mv_renames_keeping_the_kind_and_ids(run_cli, store, project):
    result = run_cli("state", "mv", "brand-tracker-us", "brand-tracker-usa")
    assert result.exit_code == 0
    assert "Moved Survey/brand-tracker-us to Survey/brand-tracker-usa" in result.stdout
    state = open_staging(project).load()
    assert state.survey("brand-tracker-usa").ps_survey_id == 4711
    assert state.survey("brand-tracker-us") is None


def test_mv_refuses_an_invalid_new_name(run_cli, store):
    result = run_cli("state", "mv", "brand-tracker-us", "Brand Tracker")
    assert result.exit_code == 1 and "not a valid resource name" in result.stderr


def test_rm_fails_at_once_while_another_command_holds_the_lock(run_cli, store, project):
    with store.locked("apply") as held:
        lock_id = held.id
        result = run_cli("state", "rm", "Survey/shared")
    assert result.exit_code == 1
    assert f"force-unlock {lock_id}" in result.stderr and "'apply'" in result.stderr
    assert "Survey/shared" in open_staging(project).load().resources


def test_force_unlock_removes_the_lock_with_that_id(run_cli, store):
    holding = store.locked("apply")
    held = holding.__enter__()  # a command that stopped without releasing its lock
    if hasattr(store, "path"):  # the file backend: on a host where it cannot be checked
        held_elsewhere(store.path)
    result = run_cli("force-unlock", held.id)
    assert result.exit_code == 0 and f"Removed the lock {held.id}" in result.stdout
    assert store.lock_holder() is None
    assert run_cli("state", "rm", "Survey/shared").exit_code == 0
    holding.__exit__(None, None, None)


def test_force_unlock_with_a_wrong_id_keeps_the_lock(run_cli, store):
    with store.locked("apply") as held:
        result = run_cli("force-unlock", "not-the-id")
        assert result.exit_code == 1 and "not not-the-id" in result.stderr
        assert store.lock_holder().id == held.id


def test_state_of_another_environment_is_a_different_file(run_cli, store):
    result = run_cli("--env", "sandbox", "state", "list")
    assert result.exit_code == 0 and result.stdout == ""
    assert "environment sandbox" in result.stderr
