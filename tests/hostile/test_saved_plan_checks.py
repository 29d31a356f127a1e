"""A saved plan applies only to the state and the live resources it was made from: not after
the state was reset or written by another apply, not after a live change, even one that
leaves the body to send the same."""

from __future__ import annotations

from pathlib import Path

from surveyctl.state import FileStateStore

from .conftest import survey_manifest, survey_title

PLAN = "change.plan"


def _state_file(project: Path) -> Path:
    return project / ".surveyctl" / "state" / "local.json"


def _survey_id(project: Path, name: str) -> int:
    return FileStateStore(_state_file(project)).load().survey(name).ps_survey_id


def _ok(result) -> None:
    assert result.exit_code == 0, result.stdout + result.stderr


def test_a_plan_of_a_state_never_written_applies(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    _ok(run_cli("plan", "manifests", "--out", PLAN))
    _ok(run_cli("apply", PLAN))
    assert _survey_id(project, "tracker")


def test_a_plan_of_an_empty_state_is_refused_once_another_apply_wrote_it(
    project, manifests, api, run_cli
):
    manifests.write(survey_manifest("tracker"))
    _ok(run_cli("plan", "manifests", "--out", PLAN))
    _ok(run_cli("apply", "manifests", "--auto-approve"))
    surveys = len(api.list_surveys())
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the state changed since this plan was made (serial 0 -> " in result.stderr
    assert len(api.list_surveys()) == surveys  # not created a second time


def test_a_plan_is_refused_after_the_state_was_reset(project, manifests, api, run_cli):
    manifests.write(survey_manifest("tracker"))
    _ok(run_cli("apply", "manifests", "--auto-approve"))
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    _ok(run_cli("plan", "manifests", "--out", PLAN))
    surveys = len(api.list_surveys())
    _state_file(project).unlink()  # the state is lost: a new, empty one
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the state changed since this plan was made (serial " in result.stderr
    assert " -> 0); make a new plan" in result.stderr
    assert len(api.list_surveys()) == surveys  # nothing created again


def test_a_live_change_that_leaves_the_body_to_send_the_same_still_refuses_the_plan(
    project, manifests, api, run_cli
):
    manifests.write(survey_manifest("tracker"))
    _ok(run_cli("apply", "manifests", "--auto-approve"))
    survey_id = _survey_id(project, "tracker")
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    _ok(run_cli("plan", "manifests", "--out", PLAN))
    # By hand, a field the manifest sets: the manifest's value is sent either way, but what
    # was reviewed ("2.5 stays") is no longer what happens ("3.75 -> 2.5").
    live = api.get_survey(survey_id)
    api.update_survey(survey_id, {**_update_fields(live), "offer_price": 3.75})
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: Survey/tracker" in result.stderr
    assert api.get_survey(survey_id)["survey_title"] == survey_title("tracker")


def _update_fields(live: dict) -> dict:
    from surveyctl.reconcile.normalise import update_body

    return update_body(live)


def test_a_survey_changed_live_after_a_plan_that_deletes_it_refuses_the_plan(
    project, manifests, api, run_cli
):
    # What was reviewed was the delete of the survey as it was; a survey launched or refilled
    # since is not deleted on that review.
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("old"))
    _ok(run_cli("apply", "manifests", "--auto-approve"))
    survey_id = _survey_id(project, "old")
    manifests.remove("old")
    _ok(run_cli("plan", "manifests", "--destroy", "--out", PLAN))
    live = api.get_survey(survey_id)
    api.update_survey(survey_id, {**_update_fields(live), "completes_required": 900})
    result = run_cli("apply", PLAN, "--destroy")
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: Survey/old" in result.stderr
    assert api.get_survey(survey_id)["completes_required"] == 900
