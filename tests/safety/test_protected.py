"""Protected environments guard every write: a question on a terminal, else --env and --yes."""

from __future__ import annotations

import json

import pytest
import responses
from click.testing import CliRunner

from surveyctl.cli.main import cli
from surveyctl.state import FileStateStore, SurveyRecord
from surveyctl.state.file.lock import StateLock

from ..state.conftest import held_elsewhere
from .conftest import SURVEY_SPEC, adjustment_count, configure, survey_manifest, write_manifest

DRAFT, LIVE = 11, 22


@pytest.fixture
def on_a_terminal(monkeypatch):
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)


@pytest.fixture
def draft(api) -> int:
    return api.create_survey(dict(SURVEY_SPEC))["ps_survey_id"]


def _state(project):
    return FileStateStore(project / ".surveyctl" / "state" / "prod.json")


def test_status_on_a_protected_environment_without_a_terminal_is_refused(prod, draft, api, run_cli):
    result = run_cli("status", str(draft), "live")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod and pass --yes" in result.stderr
    assert api.get_survey(draft)["ps_survey_status"] == DRAFT


def test_status_with_yes_but_without_env_is_refused(prod, draft, api, run_cli):
    result = run_cli("status", str(draft), "live", "--yes")
    assert result.exit_code == 1
    assert "name it with --env prod" in result.stderr
    assert api.get_survey(draft)["ps_survey_status"] == DRAFT


def test_status_with_env_and_yes_moves_the_survey(prod, draft, api, run_cli):
    result = run_cli("--env", "prod", "status", str(draft), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert api.get_survey(draft)["ps_survey_status"] == LIVE


def test_status_on_a_terminal_moves_only_after_yes_is_typed(
    prod, draft, api, run_cli, on_a_terminal
):
    declined = run_cli("status", str(draft), "live", input="y\n")
    assert declined.exit_code == 1
    assert "Environment 'prod' is protected. Move survey" in declined.stderr
    assert api.get_survey(draft)["ps_survey_status"] == DRAFT
    accepted = run_cli("status", str(draft), "live", input="yes\n")
    assert accepted.exit_code == 0, accepted.stderr
    assert api.get_survey(draft)["ps_survey_status"] == LIVE


def test_reading_a_status_on_a_protected_environment_asks_nothing(prod, draft, run_cli):
    result = run_cli("status", str(draft))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"survey {draft} is draft")
    assert "is protected" not in result.stderr


def test_adjust_on_a_protected_environment_needs_env_besides_yes(
    prod, sandbox, completes, api, run_cli
):
    survey_id, ids = completes
    before = adjustment_count(sandbox)
    refused = run_cli("adjust", "ids.csv", "--yes")
    assert refused.exit_code == 1
    assert "environment 'prod' is protected" in refused.stderr
    assert adjustment_count(sandbox) == before
    allowed = run_cli("--env", "prod", "adjust", "ids.csv", "--yes")
    assert allowed.exit_code == 0, allowed.stderr
    assert adjustment_count(sandbox) == before + 1


def test_import_on_a_protected_environment_without_a_terminal_writes_no_state(prod, draft, run_cli):
    result = run_cli("import", str(draft), "--name", "tracker", "--out", "tracker.yaml")
    assert result.exit_code == 1
    assert "environment 'prod' is protected" in result.stderr
    assert "name it with --env prod and pass --yes" in result.stderr
    assert _state(prod).load().survey("tracker") is None
    assert not (prod / "tracker.yaml").exists()
    allowed = run_cli(
        "--env", "prod", "import", str(draft), "--name", "tracker", "--out", "tracker.yaml",
        "--yes",
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.stderr
    assert _state(prod).load().survey("tracker").ps_survey_id == draft


@pytest.mark.parametrize(
    "command", [("state", "rm", "Survey/tracker"), ("state", "mv", "tracker", "renamed")]
)
def test_state_surgery_on_a_protected_environment_needs_env_and_yes(prod, run_cli, command):
    store = _state(prod)
    store.record("Survey/tracker", SurveyRecord(10001))
    refused = run_cli(*command)
    assert refused.exit_code == 1
    assert "environment 'prod' is protected" in refused.stderr
    assert store.load().addresses() == ["Survey/tracker"]
    allowed = run_cli("--env", "prod", *command, "--yes")
    assert allowed.exit_code == 0, allowed.stderr
    assert store.load().addresses() != ["Survey/tracker"]


@pytest.mark.parametrize(
    "command", [("state", "rm", "Survey/tracker"), ("state", "mv", "tracker", "renamed")]
)
def test_state_surgery_on_a_protected_environment_answered_no_on_a_terminal_changes_nothing(
    prod, run_cli, on_a_terminal, command
):
    store = _state(prod)
    store.record("Survey/tracker", SurveyRecord(10001))
    declined = run_cli(*command, input="y\n")  # a protected environment wants `yes` in full
    assert declined.exit_code == 1
    assert "Environment 'prod' is protected." in declined.stderr
    assert "the state was not changed" in declined.stderr
    assert store.load().addresses() == ["Survey/tracker"]


def test_force_unlock_on_a_protected_environment_needs_env_and_yes(prod, run_cli):
    path = prod / ".surveyctl" / "state" / "prod.json"
    with StateLock(path, "apply", environment="prod") as held:
        held_elsewhere(path)  # a holder on another machine, which force-unlock may remove
        refused = run_cli("force-unlock", held.info.id)
        assert refused.exit_code == 1
        assert "environment 'prod' is protected" in refused.stderr
        assert _state(prod).lock_holder().id == held.info.id
        allowed = run_cli("--env", "prod", "force-unlock", held.info.id, "--yes")
        assert allowed.exit_code == 0, allowed.stderr
        assert _state(prod).lock_holder() is None


def test_a_saved_plan_on_a_protected_environment_needs_it_named(prod, api, run_cli):
    write_manifest(prod, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "create.plan").exit_code == 0
    refused = run_cli("apply", "create.plan")
    assert refused.exit_code == 1
    assert "name it with --env prod" in refused.stderr
    assert _state(prod).load().survey("tracker") is None
    allowed = run_cli("--env", "prod", "apply", "create.plan")
    assert allowed.exit_code == 0, allowed.stderr
    assert _state(prod).load().survey("tracker") is not None


def test_apply_on_a_protected_environment_asks_on_a_terminal_even_with_auto_approve(
    prod, run_cli, on_a_terminal
):
    write_manifest(prod, survey_manifest("tracker"))
    result = run_cli("apply", "manifests", "--auto-approve", input="no\n")
    assert result.exit_code == 1
    assert "apply cancelled; nothing was changed" in result.stderr
    assert _state(prod).load().survey("tracker") is None


def test_an_unprotected_environment_changes_state_without_a_question(project, run_cli):
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    store.record("Survey/tracker", SurveyRecord(10001))
    result = run_cli("state", "rm", "tracker")
    assert result.exit_code == 0, result.stderr
    assert store.load().addresses() == []


@responses.activate
def test_simulate_refuses_a_remote_environment_before_sending_anything(tmp_path, monkeypatch):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: STG}\n"
        "default_environment: staging\n"
    )
    monkeypatch.setenv("STG", "staging-key-1")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["sandbox", "simulate", "5"])
    assert result.exit_code == 1
    assert "environment 'staging' is not a sandbox" in result.stderr
    assert len(responses.calls) == 0


def test_simulate_runs_against_a_sandbox_served_on_loopback(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli(
        "sandbox", "simulate", str(survey_id), "--respondents", "5", "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["respondents"] == 5


def test_apply_on_a_protected_environment_is_refused_before_any_request(project, run_cli):
    # A host that nothing answers on: a refusal that came after the plan would first wait on it.
    configure(project, "http://127.0.0.1:9", name="prod", protected=True)
    write_manifest(project, survey_manifest("tracker"))
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod" in result.stderr
    assert "retrying" not in result.stderr and "cannot reach" not in result.stderr


def test_the_protected_refusal_of_adjust_names_what_it_would_submit(prod, completes, run_cli):
    refused = run_cli("adjust", "ids.csv", "--yes")
    assert refused.stderr.splitlines()[-1].startswith(
        "Error: environment 'prod' is protected and there is no terminal to ask: to submit 3 "
        "transaction(s) for adjustment (money moves), "
    )


def test_import_resolving_a_journaled_create_on_a_protected_environment_writes_no_state(
    prod, draft, run_cli
):
    # A create whose answer was lost: importing the survey it made records it in the state,
    # which on a protected environment needs the question or --env and --yes like any import.
    store = _state(prod)
    store.journal_create("Survey/tracker", dict(SURVEY_SPEC))
    refused = run_cli("import", str(draft), "--name", "tracker")
    assert refused.exit_code == 1
    assert "environment 'prod' is protected" in refused.stderr
    assert store.load().survey("tracker") is None
    assert store.load().pending_create("Survey/tracker") is not None
    allowed = run_cli("--env", "prod", "import", str(draft), "--name", "tracker", "--yes")
    assert allowed.exit_code == 0, allowed.stderr
    assert store.load().survey("tracker").ps_survey_id == draft


@pytest.mark.parametrize(
    "command",
    [
        ("status", "{draft}", "live", "--yes"),
        ("transactions", "set-status", "{draft}", "T1", "--status", "21", "--yes"),
        ("adjust", "ids.csv", "--yes"),
        ("apply", "manifests", "--auto-approve"),
        ("import", "{draft}", "--name", "tracker", "--out", "tracker.yaml"),
        ("conformance", "--yes"),
    ],
    ids=["status-move", "set-status", "adjust", "apply", "import", "conformance"],
)
def test_a_write_refused_on_a_protected_environment_names_the_environment_first(
    prod, draft, run_cli, command
):
    write_manifest(prod, survey_manifest("tracker"))
    (prod / "ids.csv").write_text(f"survey_id,transaction_id\n{draft},T1\n")
    result = run_cli(*(word.format(draft=draft) for word in command))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    refusal = next(i for i, line in enumerate(lines) if "is protected" in line)
    assert any(line.startswith("surveyctl: environment prod") for line in lines[:refusal])
