"""`surveyctl adjust FILE --dry-run`: what a submission would do, without submitting, so a CI
job or a person can review the surveys and counts before money moves. Over real HTTP against
the sandbox."""

from __future__ import annotations

import pytest

COMPLETE = 21


@pytest.fixture
def completes(api, new_survey):
    """A live survey with simulated traffic, and the ids of three of its completes."""
    survey_id = new_survey(live=True, expected_ir=90)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 12, "bad_hash_share": 0})
    items, _ = api.get_transactions_page(survey_id, status=[COMPLETE])
    return survey_id, [item["Transaction ID"] for item in items[:3]]


def _write_ids(project, survey_id, ids) -> str:
    lines = ["transaction_id,survey_id"] + [f"{t},{survey_id}" for t in ids]
    (project / "ids.csv").write_text("\n".join(lines) + "\n")
    return "ids.csv"


def test_a_dry_run_shows_the_surveys_and_counts_and_submits_nothing(
    api, completes, run_cli, project
):
    survey_id, ids = completes
    result = run_cli("adjust", _write_ids(project, survey_id, ids), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "3 transaction(s) will be submitted for adjustment" in result.stdout
    assert str(survey_id) in result.stdout
    assert result.stderr.splitlines()[-1] == "Dry run: nothing was submitted."
    assert all(api.get_transaction(survey_id, t)["Reconciliation Status"] == 0 for t in ids)
    assert "No adjustment was submitted" in run_cli("adjustments", "--offline").stderr


def test_a_dry_run_of_transactions_submitted_before_shows_that_submission_and_refuses(
    completes, run_cli, project
):
    survey_id, ids = completes
    name = _write_ids(project, survey_id, ids)
    run_cli("adjust", name, "--yes")
    result = run_cli("adjust", name, "--dry-run")
    assert result.exit_code == 1
    assert "was answered: adjustment" in result.stdout
    assert "were submitted already by 1 earlier adjustment(s)" in result.stderr


def test_a_dry_run_with_output_is_a_usage_error(completes, run_cli, project):
    survey_id, ids = completes
    result = run_cli(
        "adjust", _write_ids(project, survey_id, ids), "--dry-run", "--output", "a.json"
    )
    assert result.exit_code == 2
    assert "--output keeps the service's answer, and a dry run gets none" in result.stderr
    assert not (project / "a.json").exists()
