"""A renamed manifest is not a new survey: its survey is managed under the old name, and a
plan withholds the create that would duplicate it, naming the `state mv` that moves it."""

from __future__ import annotations

import json

import pytest

from surveyctl.state import FileStateStore

from .conftest import group_manifest, survey_manifest, survey_title


def _state(project):
    return FileStateStore(project / ".surveyctl" / "state" / "local.json").load()


def _titled(api, title: str) -> list[int]:
    return sorted(s["ps_survey_id"] for s in api.list_surveys() if s["survey_title"] == title)


@pytest.fixture
def renamed(project, manifests, run_cli):
    """Survey/tracker applied, then its manifest renamed to tracker-renamed (same survey):
    returns the survey's id."""
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.remove("tracker")
    manifests.write({**survey_manifest("tracker", survey_title=survey_title("tracker")),
                     "name": "tracker-renamed"})  # fmt: skip
    return _state(project).survey("tracker").ps_survey_id


def test_a_renamed_manifest_is_withheld_with_the_state_mv_that_moves_its_survey(renamed, run_cli):
    result = run_cli("plan", "manifests", "--format", "json")
    plan = json.loads(result.stdout)
    assert [r["address"] for r in plan["resources"] if r["action"] == "create"] == []
    (error,) = [n for n in plan["notes"] if n["severity"] == "error"]
    assert error["address"] == "Survey/tracker-renamed"
    assert f"survey {renamed} (same title and locale)" in error["message"]
    assert "`surveyctl state mv Survey/tracker Survey/tracker-renamed`" in error["message"]


def test_apply_of_a_renamed_manifest_creates_nothing(renamed, run_cli, api):
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert _titled(api, survey_title("tracker")) == [renamed]


def test_after_the_state_mv_the_renamed_manifest_has_no_changes(renamed, run_cli):
    assert run_cli("state", "mv", "Survey/tracker", "Survey/tracker-renamed").exit_code == 0
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "No changes." in result.stdout


def test_adopt_does_not_record_a_survey_the_state_manages_under_its_old_name(
    project, renamed, run_cli
):
    result = run_cli("apply", "manifests", "--auto-approve", "--adopt")
    assert result.exit_code == 1
    assert "state mv Survey/tracker Survey/tracker-renamed" in result.stderr + result.stdout
    assert set(_state(project).resources) == {"Survey/tracker"}


def test_destroy_replaces_a_renamed_survey(project, renamed, run_cli, api):
    result = run_cli("apply", "manifests", "--auto-approve", "--destroy")
    assert result.exit_code == 0, result.stdout + result.stderr
    state = _state(project)
    assert set(state.resources) == {"Survey/tracker-renamed"}
    assert _titled(api, survey_title("tracker")) == [state.survey("tracker-renamed").ps_survey_id]


def test_allow_duplicate_creates_another_beside_a_renamed_survey(renamed, run_cli, api):
    result = run_cli("apply", "manifests", "--auto-approve", "--allow-duplicate")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(_titled(api, survey_title("tracker"))) == 2


def test_a_new_manifest_with_the_title_of_one_still_described_is_created(
    project, manifests, run_cli
):
    # Only a survey whose address no manifest describes is taken for a rename: two manifests
    # may share a title and locale.
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write({**survey_manifest("tracker"), "name": "tracker-twin"})
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(_state(project).resources) == {"Survey/tracker", "Survey/tracker-twin"}


def test_a_renamed_group_manifest_names_the_state_mv(project, manifests, run_cli, unique):
    manifests.write(survey_manifest("tracker"))
    group = group_manifest(f"trackers-{unique}", "tracker")
    manifests.write(group)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.remove("trackers")
    manifests.write({**group, "name": "trackers-renamed"})
    result = run_cli("plan", "manifests")
    assert (
        "run `surveyctl state mv ExclusionGroup/trackers ExclusionGroup/trackers-renamed`"
        in result.stdout
    )
