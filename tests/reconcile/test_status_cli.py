"""`surveyctl status`: read and move a survey's status over HTTP."""

from __future__ import annotations

from .conftest import survey_manifest, survey_title


def test_status_shows_a_new_survey_as_draft(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"survey {survey_id} is draft: {survey_title('x')}\n")


def test_status_launches_pauses_and_closes_a_survey(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    for name, code in (("live", 22), ("paused", 33), ("closed", 44)):
        result = run_cli("status", str(survey_id), name)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip() == f"survey {survey_id} is {name} ({code})"
    assert api.get_survey(survey_id)["ps_survey_status"] == 44


def test_a_move_the_marketplace_refuses_is_one_sentence_and_exit_1(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id), "closed")
    assert result.exit_code == 1
    assert "cannot move from draft 11 to closed 44" in result.stderr
    assert "Traceback" not in result.stderr
