"""What a write says before it asks, and what an answer other than yes leaves: every question
names what will happen and, where money moves, how much; a "no", or the end of input, changes
nothing and says so. Over real HTTP against the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys

DRAFT, LIVE, PAUSED = 11, 22, 33


def test_the_question_to_launch_a_survey_shows_its_goal_its_price_and_the_most_it_can_cost(
    api, run_cli, new_survey, on_a_terminal
):
    survey_id = new_survey(completes_required=3, offer_price=1.005)
    result = run_cli("status", str(survey_id), "live", input="n\n")
    assert result.exit_code == 1
    # 3 x 1.005 is 3.015 exactly, rounded half up to $3.02 (a float product gives $3.01).
    said = (
        f"Survey {survey_id} (Questions test) is draft (11): live, it takes respondents until its "
        "goal of 3 completes is reached, each paid at $1.005 (offer_price): up to $3.02 in US "
        "dollars."
    )
    assert said in result.stderr
    assert result.stderr.index(said) < result.stderr.index(f"Move survey {survey_id} to live?")
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT


def test_the_question_to_launch_a_survey_with_quota_based_pricing_leaves_those_quotas_out(
    api, run_cli, new_survey, on_a_terminal
):
    quotas = [
        {"buyer_quota_id": "male", "required_count": 100,
         "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}]},
        {"buyer_quota_id": "female", "required_count": 100,
         "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}]},
    ]  # fmt: skip
    survey_id = new_survey(quotas=quotas, qbp={"enable": True, "quota_ids": ["male"]})
    result = run_cli("status", str(survey_id), "live", input="n\n")
    assert result.exit_code == 1
    assert (
        "up to $500.00 in US dollars at the offer_price; its QBP quotas (male) are priced "
        "individually, at prices the API does not show, so what they cost is not in this sum."
    ) in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT


def test_the_question_to_close_a_survey_says_it_cannot_be_opened_again(
    api, run_cli, new_survey, on_a_terminal
):
    survey_id = new_survey(live=True)
    api.set_survey_status(survey_id, PAUSED)
    result = run_cli("status", str(survey_id), "closed", input="n\n")
    assert result.exit_code == 1
    assert "closed, it takes no respondents and cannot be opened again." in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == PAUSED


def test_end_of_input_at_the_question_moves_nothing_and_says_so(
    api, run_cli, new_survey, on_a_terminal
):
    survey_id = new_survey()
    result = run_cli("status", str(survey_id), "live", input="")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == f"Error: survey {survey_id} was not moved"
    assert "Aborted!" not in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT


def test_end_of_input_at_the_typed_yes_of_a_protected_environment_changes_nothing(
    api, run_cli, new_survey, project, sandbox, on_a_terminal
):
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  prod: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY, protected: true}}\n"
        "default_environment: prod\n",
        encoding="utf-8",
    )
    survey_id = new_survey()
    result = run_cli("status", str(survey_id), "live", "--yes", input="")
    assert result.exit_code == 1
    assert "Environment 'prod' is protected. Move survey" in result.stderr
    assert result.stderr.splitlines()[-1] == f"Error: survey {survey_id} was not moved"
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT


def test_the_question_to_record_a_complete_shows_what_the_complete_pays(
    api, run_cli, new_survey, held, on_a_terminal
):
    survey_id = new_survey(live=True, offer_price=1.75)
    transaction_id = held(survey_id)[0]
    result = run_cli(
        "transactions", "set-status", str(survey_id), transaction_id, "--status", "21",
        input="n\n",
    )  # fmt: skip
    assert result.exit_code == 1
    assert (
        "A complete is paid: $1.75 in US dollars (the transaction's Expected Buyer CPI)."
        in result.stdout
    )
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16


def _on_a_pseudo_terminal(*args: str) -> subprocess.CompletedProcess:
    """`surveyctl ARGS` with a pseudo-terminal as standard input that nobody types into, as
    some CI runners attach one; a question would wait until the timeout fails the test."""
    leader, follower = os.openpty()
    try:
        return subprocess.run(
            [sys.executable, "-m", "surveyctl", *args],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        os.close(follower)
        os.close(leader)


def test_under_ci_a_write_on_a_pseudo_terminal_refuses_without_yes_instead_of_asking(
    api, project, new_survey, monkeypatch
):
    monkeypatch.setenv("CI", "true")
    survey_id = new_survey()
    run = _on_a_pseudo_terminal("status", str(survey_id), "live")
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (
        f"Error: a confirmation is needed to move survey {survey_id} to live and there is no "
        "terminal to ask: confirm with --yes"
    )
    assert api.get_survey(survey_id)["ps_survey_status"] == DRAFT
