"""`status` of a survey the marketplace does not have, over real HTTP: one sentence naming the
id and the environment, the service's own words only under --debug."""

from __future__ import annotations

MISSING = "999999999"
SAID = f"no survey {MISSING} in the marketplace of environment 'local'"


def test_status_of_a_missing_survey_names_it_and_the_environment(project, run_cli):
    result = run_cli("status", MISSING)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == f"Error: {SAID}"
    assert "answered 404" not in result.stderr


def test_a_move_of_a_missing_survey_names_it_and_the_environment(project, run_cli):
    result = run_cli("status", MISSING, "live", "--yes")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == f"Error: {SAID}"


def test_debug_keeps_the_marketplace_answer_of_a_missing_survey(project, run_cli):
    result = run_cli("--debug", "status", MISSING)
    assert result.exit_code == 1
    assert f"/surveys/{MISSING}/status answered 404" in result.stderr
