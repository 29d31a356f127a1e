"""What a person approved at apply's question is what apply does: a survey changed in the
marketplace (or a manifest edited) while the question waited for an answer is not written
from the plan shown before, which would revert the change without showing it."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.cli import confirm
from surveyctl.reconcile.normalise import update_body
from surveyctl.state import FileStateStore

from .conftest import survey_manifest


def _survey_id(project: Path, name: str) -> int:
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    return state.survey(name).ps_survey_id


def _answered_yes_after(monkeypatch, meanwhile) -> list[str]:
    """A person at a terminal who answers `yes` once `meanwhile()` has happened."""
    asked: list[str] = []

    def typed_yes(question: str) -> bool:
        asked.append(question)
        meanwhile()
        return True

    monkeypatch.setattr(confirm, "terminal", lambda: True)
    monkeypatch.setattr(confirm, "typed_yes", typed_yes)
    return asked


@pytest.fixture
def tracker(project, manifests, api, run_cli) -> int:
    """Survey `tracker` applied, its manifest then raising offer_price to 3; its id."""
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", offer_price=3))
    return _survey_id(project, "tracker")


def _colleague_raises_the_target(api, survey_id: int):
    """What a colleague does meanwhile: raises the survey's completes_required to 900 live."""

    def raise_it() -> None:
        live = api.get_survey(survey_id)
        api.update_survey(survey_id, {**update_body(live), "completes_required": 900})

    return raise_it


def test_a_survey_changed_live_while_the_question_waited_is_not_written(
    tracker, api, run_cli, monkeypatch
):
    asked = _answered_yes_after(monkeypatch, _colleague_raises_the_target(api, tracker))
    result = run_cli("apply", "manifests")
    assert asked
    assert result.exit_code == 1
    assert (
        "Error: changed outside surveyctl while the question waited for an answer: "
        "Survey/tracker; nothing was applied: run apply again to see the plan as it is now"
    ) in result.stderr
    live = api.get_survey(tracker)
    assert live["completes_required"] == 900  # the colleague's change stands
    assert live["offer_price"] == 2.5


def test_a_manifest_edited_while_the_question_waited_is_not_applied_unseen(
    tracker, manifests, api, run_cli, monkeypatch
):
    asked = _answered_yes_after(
        monkeypatch, lambda: manifests.write(survey_manifest("tracker", offer_price=9))
    )
    result = run_cli("apply", "manifests")
    assert asked
    assert result.exit_code == 1
    assert (
        "Error: the plan changed while the question waited for an answer (the manifests or "
        "the marketplace changed): Survey/tracker; nothing was applied: run apply again to see "
        "the plan as it is now"
    ) in result.stderr
    assert api.get_survey(tracker)["offer_price"] == 2.5


def test_a_plan_still_as_shown_when_answered_is_applied(tracker, api, run_cli, monkeypatch):
    asked = _answered_yes_after(monkeypatch, lambda: None)
    result = run_cli("apply", "manifests")
    assert asked
    assert result.exit_code == 0, result.stdout + result.stderr
    assert api.get_survey(tracker)["offer_price"] == 3


def test_a_saved_plan_asked_about_is_checked_again_once_answered(
    project, tracker, api, run_cli, monkeypatch
):
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    config = project / "surveyctl.yaml"  # protected and not named with --env: apply asks
    config.write_text(
        config.read_text().replace("SURVEYCTL_LOCAL_KEY}", "SURVEYCTL_LOCAL_KEY, protected: true}")
    )

    asked = _answered_yes_after(monkeypatch, _colleague_raises_the_target(api, tracker))
    result = run_cli("apply", "change.plan")
    assert asked
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: Survey/tracker" in result.stderr
    assert api.get_survey(tracker)["completes_required"] == 900


def test_the_plan_made_again_after_the_answer_repeats_no_warning(
    manifests, api, run_cli, monkeypatch
):
    manifests.write(survey_manifest("tracker"))  # an empty state: a warning of the plan
    asked = _answered_yes_after(monkeypatch, lambda: None)
    result = run_cli("apply", "manifests")
    assert asked
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stderr.count("is empty, so the plan creates 1 resource(s)") == 1
