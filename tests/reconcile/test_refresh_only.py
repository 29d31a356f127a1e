"""plan/apply --refresh-only over real HTTP: seeing and accepting what changed outside."""

from __future__ import annotations

import re

import pytest

from surveyctl.reconcile.apply_run import apply_run
from surveyctl.reconcile.normalise import update_body
from surveyctl.reconcile.run import ApplyHooks, RunOptions
from surveyctl.state import FileStateStore, SurveyRecord

from ..hostile.test_approval_wait import _answered_yes_after
from .conftest import group_manifest, survey_manifest, survey_title


def _store(project) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _applied(run_cli, manifests, *specs) -> None:
    for spec in specs or (survey_manifest("tracker"),):
        manifests.write(spec)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr


def _set_price_by_hand(api, survey_id: int, price: float) -> None:
    api.update_survey(survey_id, {**update_body(api.get_survey(survey_id)), "offer_price": price})


def _tracker_id(project) -> int:
    return _store(project).load().survey("tracker").ps_survey_id


def test_plan_refresh_only_shows_a_managed_field_changed_outside(project, manifests, api, run_cli):
    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    serial = _store(project).load().serial
    result = run_cli("plan", "--refresh-only", "--detailed-exitcode")
    assert result.exit_code == 2, result.stdout
    assert "! drift: offer_price was 2.5 when last applied, is 4 live" in result.stdout
    assert "Refresh: 1 resource changed outside surveyctl" in result.stdout
    assert _store(project).load().serial == serial


def test_plan_refresh_only_with_nothing_changed_says_no_drift(project, manifests, run_cli):
    _applied(run_cli, manifests)
    result = run_cli("plan", "--refresh-only", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert "No drift. The live resources match what was last applied." in result.stdout


def test_plan_refresh_only_with_nothing_changed_says_nothing_of_stopped_applies(
    project, manifests, run_cli
):
    _applied(run_cli, manifests)
    result = run_cli("plan", "--refresh-only")
    assert "Notes:" not in result.stdout
    assert "apply stopped before its state write" not in result.stdout


def test_apply_refresh_only_records_the_live_value_so_the_drift_note_goes_away(
    project, manifests, api, run_cli
):
    _applied(run_cli, manifests)
    survey_id = _tracker_id(project)
    _set_price_by_hand(api, survey_id, 4.0)
    accepted = run_cli("apply", "--refresh-only", "--auto-approve")
    assert accepted.exit_code == 0, accepted.stdout + accepted.stderr
    assert "Refresh complete" in accepted.stdout
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 4.0
    assert api.get_survey(survey_id)["offer_price"] == 4.0  # nothing was sent
    plan = run_cli("plan", "manifests")
    assert "drift" not in plan.stdout
    assert "~ offer_price: 4 -> 2.5" in plan.stdout  # the manifest still says 2.5


def test_apply_refresh_only_without_a_terminal_needs_auto_approve(project, manifests, api, run_cli):
    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    before = _store(project).load()
    refused = run_cli("apply", "--refresh-only")
    assert refused.exit_code == 1
    assert "--auto-approve" in refused.stderr
    assert _store(project).load().serial == before.serial


def test_apply_refresh_only_records_nothing_when_the_answer_is_no(project, manifests, api, run_cli):
    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    from surveyctl.cli.context import CliContext

    options = RunOptions(refresh_only=True)
    workspace = CliContext().workspace(options)
    asked = []

    def no(environment: str) -> bool:
        asked.append(environment)
        return False

    with pytest.raises(Exception, match="cancelled"):
        apply_run(workspace, options, ApplyHooks(confirm=no))
    assert asked == ["local"]
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5
    run = apply_run(workspace, options, ApplyHooks(confirm=lambda environment: True))
    assert run.refreshed == 1
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 4.0


def test_apply_refresh_only_waits_for_no_one_while_the_state_is_locked(
    project, manifests, api, run_cli
):
    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    with _store(project).locked("apply"):
        refused = run_cli("apply", "--refresh-only", "--auto-approve")
    assert refused.exit_code == 1
    assert "locked" in refused.stderr
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5


class Crash(BaseException):
    """The process dying between the PUT's answer and the state write."""


def test_a_drift_left_by_a_put_whose_answer_was_lost_is_resolved_by_a_refresh(
    project, manifests, api, run_cli, monkeypatch
):
    _applied(run_cli, manifests)
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))

    def crash(self, address, record):
        raise Crash()

    with monkeypatch.context() as patch:
        patch.setattr(FileStateStore, "record", crash)
        with pytest.raises(Crash):
            run_cli("apply", "manifests", "--auto-approve")
    assert api.get_survey(_tracker_id(project))["survey_title"] == "Renamed"  # the PUT was made
    drifted = run_cli("plan", "--refresh-only")
    assert f'! drift: survey_title was "{survey_title("tracker")}" when last applied' in (
        drifted.stdout
    )
    accepted = run_cli("apply", "--refresh-only", "--auto-approve")
    assert accepted.exit_code == 0, accepted.stdout + accepted.stderr
    settled = run_cli("plan", "manifests", "--detailed-exitcode")
    assert settled.exit_code == 0, settled.stdout
    assert "No changes." in settled.stdout and "drift" not in settled.stdout


def test_a_refresh_records_the_live_values_of_an_exclusion_group(
    project, manifests, api, unique, run_cli
):
    ref = f"trackers-{unique}"
    group = group_manifest(ref, "tracker")
    _applied(run_cli, manifests, survey_manifest("tracker"), group)
    live = api.get_group(ref)
    api.update_group(
        ref,
        {
            **{k: live[k] for k in ("buyer_surveygroup_ref", "name", "surveys_in_group")},
            "exclusion_period": 14,
        },
    )
    shown = run_cli("plan", "--refresh-only")
    assert "! drift: exclusion_period was 30 when last applied, is 14 live" in shown.stdout
    assert run_cli("apply", "--refresh-only", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").last_applied["exclusion_period"] == 14
    assert "drift" not in run_cli("plan", "manifests").stdout


def test_a_refresh_that_cannot_read_a_resource_records_nothing(
    project, manifests, api, other_buyer_api, run_cli
):
    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    foreign = other_buyer_api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    _store(project).record("Survey/foreign", SurveyRecord(foreign, last_applied={}))
    refused = run_cli("apply", "--refresh-only", "--auto-approve")
    assert refused.exit_code == 1
    assert "Survey/foreign: cannot read the live resource" in refused.stdout
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5


def test_a_refresh_cannot_be_saved_as_a_plan_file(project, manifests, run_cli):
    _applied(run_cli, manifests)
    result = run_cli("plan", "--refresh-only", "--out", "refresh.plan")
    assert result.exit_code != 0
    assert "--refresh-only cannot be combined with --out" in result.stderr
    assert not (project / "refresh.plan").exists()


def test_the_json_refresh_carries_the_drift_and_the_body_it_would_record(
    project, manifests, api, run_cli
):
    import json

    _applied(run_cli, manifests)
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    data = json.loads(run_cli("plan", "--refresh-only", "--format", "json").stdout)
    assert data["refresh_only"] is True and data["has_changes"] is False
    (tracker,) = data["resources"]
    assert [(d["path"], d["old"], d["new"]) for d in tracker["drift"]] == [("offer_price", 2.5, 4)]
    assert tracker["last_applied"]["offer_price"] == 4.0


def test_a_refresh_of_a_survey_deleted_in_the_marketplace_names_the_state_rm_that_forgets_it(
    project, manifests, api, run_cli
):
    _applied(run_cli, manifests)
    api.delete_survey(_tracker_id(project))
    serial = _store(project).load().serial
    result = run_cli("apply", "--refresh-only", "--auto-approve")
    assert (
        "warning: Survey/tracker: gone from the marketplace; `surveyctl state rm Survey/tracker` "
        "forgets it"
    ) in result.stdout
    assert _store(project).load().serial == serial  # nothing is recorded for it


def test_apply_refresh_only_refuses_a_saved_plan(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    result = run_cli("apply", "change.plan", "--refresh-only", "--auto-approve")
    assert result.exit_code == 1
    assert "--refresh-only reads the live resources afresh and cannot apply a saved plan" in (
        result.stderr
    )
    assert _store(project).load().survey("tracker") is None


# -- the question: what is recorded is what was shown, read again once answered.


def test_a_value_changed_again_while_the_refresh_question_waited_is_not_recorded(
    project, manifests, api, run_cli, monkeypatch
):
    _applied(run_cli, manifests)
    survey_id = _tracker_id(project)
    _set_price_by_hand(api, survey_id, 4.0)
    asked = _answered_yes_after(monkeypatch, lambda: _set_price_by_hand(api, survey_id, 5.0))

    refused = run_cli("apply", "--refresh-only")

    assert asked and refused.exit_code == 1
    assert (
        "Error: changed outside surveyctl while the question waited for an answer: "
        "Survey/tracker; nothing was recorded: run apply --refresh-only again to see what it "
        "records now"
    ) in refused.stderr
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5


def test_a_survey_that_drifted_while_the_refresh_question_waited_is_not_recorded_unseen(
    project, manifests, api, run_cli, monkeypatch
):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("panel"))
    _set_price_by_hand(api, _tracker_id(project), 4.0)
    panel = _store(project).load().survey("panel").ps_survey_id
    asked = _answered_yes_after(monkeypatch, lambda: _set_price_by_hand(api, panel, 6.0))

    refused = run_cli("apply", "--refresh-only")

    assert asked and refused.exit_code == 1
    assert "while the question waited for an answer: Survey/panel; nothing" in refused.stderr
    state = _store(project).load()
    assert state.survey("tracker").last_applied["offer_price"] == 2.5
    assert state.survey("panel").last_applied["offer_price"] == 2.5


def test_a_survey_deleted_while_the_refresh_question_waited_records_nothing(
    project, manifests, api, run_cli, monkeypatch
):
    _applied(run_cli, manifests)
    survey_id = _tracker_id(project)
    _set_price_by_hand(api, survey_id, 4.0)
    asked = _answered_yes_after(monkeypatch, lambda: api.delete_survey(survey_id))

    refused = run_cli("apply", "--refresh-only")

    assert asked and refused.exit_code == 1
    assert "while the question waited for an answer: Survey/tracker;" in refused.stderr
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5


def test_a_refresh_still_as_shown_when_answered_records_what_it_read_after_the_answer(
    project, manifests, api, run_cli, monkeypatch
):
    _applied(run_cli, manifests)
    survey_id = _tracker_id(project)
    _set_price_by_hand(api, survey_id, 4.0)
    asked = _answered_yes_after(monkeypatch, lambda: None)

    accepted = run_cli("--debug", "apply", "--refresh-only")

    assert asked and accepted.exit_code == 0, accepted.stdout + accepted.stderr
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 4.0
    reads = re.findall(rf"surveyctl\.http > GET \S+/surveys/{survey_id}\b", accepted.stderr)
    assert len(reads) == 2  # once to show it, once more after the answer
