"""`surveyctl sandbox simulate`: traffic from the command line, and its refusal elsewhere."""

from __future__ import annotations

import json

import responses
from click.testing import CliRunner

from surveyctl.cli.main import cli

from .conftest import BASE_SURVEY


def test_simulate_prints_the_counts_per_status(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli(
        "sandbox", "simulate", str(survey_id), "--respondents", "25", "--seed", "4",
        "--supplier-ids", "21", "--format", "json",
    )  # fmt: skip
    counts = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert counts["respondents"] == 25
    assert sum(counts["statuses"].values()) == 25


def test_simulate_uses_only_the_given_suppliers(api, live_survey, run_cli):
    survey_id = live_survey()
    run_cli("sandbox", "simulate", str(survey_id), "--respondents", "15", "--supplier-ids", "21")
    items, _ = api.get_transactions_page(survey_id)
    assert {item["Supplier ID"] for item in items} == {21}


def test_simulate_table_names_the_statuses(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli("sandbox", "simulate", str(survey_id), "--respondents", "10", "--hold")
    assert result.exit_code == 0, result.output
    assert "in progress on the buyer survey" in result.stdout
    assert "10 respondent(s), 0 complete(s)" in result.stdout


def test_simulate_names_the_status_the_survey_is_in_after_the_traffic(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli("sandbox", "simulate", str(survey_id), "--respondents", "3", "--hold")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].endswith("; survey status now live (22)")


@responses.activate
def test_simulate_against_a_real_marketplace_says_it_is_sandbox_only(tmp_path, monkeypatch):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: STG}\n"
        "default_environment: staging\n"
    )
    monkeypatch.setenv("STG", "staging-key-1")
    monkeypatch.chdir(tmp_path)
    responses.post(
        "https://staging.example.com/sandbox/surveys/5/simulate", status=404, body="Not Found"
    )
    result = CliRunner().invoke(cli, ["sandbox", "simulate", "5"])
    assert result.exit_code == 1
    assert "environment 'staging' is not a sandbox" in result.stderr


def test_simulate_at_a_draft_names_the_command_that_launches_it(api, run_cli):
    survey_id = api.create_survey(dict(BASE_SURVEY))["ps_survey_id"]
    result = run_cli("sandbox", "simulate", str(survey_id), "--respondents", "5")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: survey {survey_id} is a draft, and respondents reach only a live survey: "
        f"launch it with `surveyctl status {survey_id} live`, then simulate again"
    )
