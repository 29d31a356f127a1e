"""plan, apply, import and the state commands give the same results whichever backend keeps
the state: one suite, run over real HTTP against the sandbox on the file and on PostgreSQL."""

from __future__ import annotations

import getpass
import json
import os
import socket
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.state import open_state

from ..reconcile.conftest import Manifests, survey_manifest, survey_title
from .conftest import local_project


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch, state_setting) -> Path:
    """The `local` environment on the session sandbox, its state in the backend under test."""
    local_project(tmp_path, sandbox.url, state_setting, monkeypatch)
    return tmp_path


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def state_of(project: Path):
    config = load_config(project / "surveyctl.yaml")
    return open_state(config, config.environment("local")).load()


def test_apply_records_what_it_created_and_the_next_plan_has_no_changes(
    run_cli, manifests, project
):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("concept", completes_required=300))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "Apply complete! Resources: 2 added, 0 changed, 0 destroyed." in applied.stdout
    state = state_of(project)
    assert sorted(state.resources) == ["Survey/concept", "Survey/tracker"]
    assert state.journal == {} and state.serial == 4  # a journal entry and its resolution each
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0 and "No changes." in replanned.stdout


def test_an_update_records_the_body_applied_and_its_history(run_cli, manifests, project, api):
    manifests.write(survey_manifest("tracker"))
    run_cli("apply", "manifests", "--auto-approve")
    manifests.write(survey_manifest("tracker", survey_title="Tracker, renamed"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stderr
    record = state_of(project).survey("tracker")
    assert record.last_applied["survey_title"] == "Tracker, renamed"
    assert api.get_survey(record.ps_survey_id)["survey_title"] == "Tracker, renamed"
    history = json.loads(run_cli("state", "history", "tracker", "--format", "json").stdout)
    assert [(e["command"], e["change"]) for e in history] == [
        ("apply", "create started"),
        ("apply", "create recorded"),
        ("apply", "changed"),
    ]
    assert history[-1]["before"]["last_applied"]["survey_title"] == survey_title("tracker")
    assert history[-1]["after"]["last_applied"]["survey_title"] == "Tracker, renamed"


def test_import_adopts_a_live_survey_that_then_plans_as_no_change(run_cli, api, project):
    created = api.create_survey(survey_manifest("x")["spec"])
    result = run_cli(
        "import", str(created["ps_survey_id"]), "--name", "adopted", "--out", "manifests/a.yaml"
    )
    assert result.exit_code == 0, result.stderr
    assert state_of(project).survey("adopted").ps_survey_id == created["ps_survey_id"]
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0 and "No changes." in replanned.stdout


def test_destroy_deletes_and_forgets(run_cli, manifests, project, api):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("gone-soon"))
    run_cli("apply", "manifests", "--auto-approve")
    survey_id = state_of(project).survey("gone-soon").ps_survey_id
    manifests.remove("gone-soon")
    applied = run_cli("apply", "manifests", "--auto-approve", "--destroy")
    assert applied.exit_code == 0, applied.stderr
    assert sorted(state_of(project).resources) == ["Survey/tracker"]
    assert survey_id not in {s["ps_survey_id"] for s in api.list_surveys()}


def test_a_saved_plan_is_refused_once_the_state_moved(run_cli, manifests, project):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "tracker.plan").exit_code == 0
    manifests.write(survey_manifest("other"))
    run_cli("apply", "manifests/other.yaml", "--auto-approve")
    refused = run_cli("apply", "tracker.plan")
    assert refused.exit_code == 1
    assert "the state changed since this plan was made (serial 0 -> 2)" in refused.stderr


def test_an_unresolved_create_blocks_the_plan_until_state_rm(run_cli, manifests, project, api):
    manifests.write(survey_manifest("tracker"))
    config = load_config(project / "surveyctl.yaml")
    # An attempt whose body is not the manifest's any more, and a survey made since (another
    # one, made by hand) that it could have made: which cannot be told, so the plan asks.
    open_state(config, config.environment("local")).journal_create("Survey/tracker", {"x": 1})
    api.create_survey(survey_manifest("made-by-hand")["spec"])
    blocked = run_cli("plan", "manifests")
    assert blocked.exit_code == 1 and "surveyctl state rm Survey/tracker" in blocked.stdout
    assert run_cli("state", "rm", "Survey/tracker").exit_code == 0
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_bug_quoting_the_dsn_shows_its_traceback_without_it(
    run_cli, project, postgres, monkeypatch
):
    from surveyctl.state.postgres.store import PostgresStateStore

    def broken(self):
        raise RuntimeError(f"could not read {postgres.dsn()} (password {postgres.password})")

    monkeypatch.setattr(PostgresStateStore, "_read", broken)
    result = run_cli("state", "list")
    assert result.exit_code == 1
    assert "Traceback" in result.stderr and "could not read [redacted]" in result.stderr
    assert "(password [redacted])" in result.stderr
    assert postgres.password not in result.stdout + result.stderr


@pytest.mark.parametrize("backend", ["postgres"])
def test_the_dsn_and_its_password_never_appear_in_output_logs_plans_or_state(
    run_cli, manifests, project, postgres, monkeypatch
):
    manifests.write(survey_manifest("tracker"))
    results = [
        run_cli("--debug", "plan", "manifests", "--out", "tracker.plan"),
        run_cli("--debug", "apply", "tracker.plan"),
        run_cli("state", "list"),
        run_cli("state", "show"),
        run_cli("state", "history", "--format", "json"),
        run_cli("force-unlock", "not-a-lock"),
    ]
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn(password="Wr0ng-pa55word"))
    refused = run_cli("state", "list")
    assert refused.exit_code == 1 and "refused the login" in refused.stderr
    results.append(refused)
    dsn = postgres.dsn()
    for result in results:
        shown = result.stdout + result.stderr
        assert postgres.password not in shown and "Wr0ng-pa55word" not in shown
        assert dsn not in shown
    assert results[1].exit_code == 0, results[1].stderr
    assert postgres.password not in (project / "tracker.plan").read_text()
    assert not (project / ".surveyctl" / "state").exists()  # nothing of it written to disk


def test_a_lock_held_in_ci_names_the_actor_who_started_it_and_the_runner(
    run_cli, manifests, project, monkeypatch
):
    # On a CI runner the OS user is `runner` on a host named for the machine: the lock message
    # must name who to ask, as the history does ($SURVEYCTL_ACTOR, set by the CI workflows).
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    monkeypatch.setenv("SURVEYCTL_ACTOR", "ann (apply-on-main run 42)")
    config = load_config(project / "surveyctl.yaml")
    holder = open_state(config, config.environment("local"))
    monkeypatch.delenv("SURVEYCTL_ACTOR")
    try:
        with holder.locked("apply"):
            refused = run_cli("state", "rm", "Survey/tracker")
    finally:
        holder.close()

    assert refused.exit_code == 1
    account = f"{getpass.getuser()}@{socket.gethostname()}"
    assert f"is locked by ann (apply-on-main run 42) on {account} (pid {os.getpid()})" in (
        refused.stderr
    ), refused.stderr


def test_a_lock_held_without_an_actor_names_the_user_and_host_alone(
    run_cli, manifests, project, monkeypatch
):
    monkeypatch.delenv("SURVEYCTL_ACTOR", raising=False)
    config = load_config(project / "surveyctl.yaml")
    holder = open_state(config, config.environment("local"))
    try:
        with holder.locked("apply"):
            refused = run_cli("state", "rm", "Survey/tracker")
    finally:
        holder.close()

    account = f"{getpass.getuser()}@{socket.gethostname()}"
    assert f"is locked by {account} (pid {os.getpid()})" in refused.stderr, refused.stderr
