"""Safety of apply: saved plans, the state lock, faults, crashes and the API key."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.reconcile.normalise import update_body
from surveyctl.state import FileStateStore
from surveyctl.state.file.lock import StateLock

from ..processes import surveyctl
from .conftest import point_project_at, survey_manifest, survey_title

SECRET_KEY = "sk-live-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b"


def _state_path(project: Path, environment: str = "local") -> Path:
    return project / ".surveyctl" / "state" / f"{environment}.json"


def test_saved_plan_is_refused_after_a_change_made_elsewhere(project, manifests, api, run_cli):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", survey_title="New title"))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    survey_id = FileStateStore(_state_path(project)).load().survey("tracker").ps_survey_id
    api.update_survey(survey_id, {**update_body(api.get_survey(survey_id)), "field_time": 30})
    result = run_cli("apply", "change.plan")
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: Survey/tracker" in result.stderr
    assert api.get_survey(survey_id)["survey_title"] == survey_title("tracker")


def test_saved_plan_is_refused_after_the_state_moved(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "create.plan").exit_code == 0
    manifests.write(survey_manifest("other"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    result = run_cli("apply", "create.plan")
    assert result.exit_code == 1
    assert "the state changed since this plan was made" in result.stderr


def test_saved_plan_is_refused_in_another_environment(project, manifests, api, run_cli):
    config = project / "surveyctl.yaml"
    text = config.read_text()
    local = text.split("  local: ")[1].split("\n")[0]  # `other`: the same marketplace
    config.write_text(
        text.replace("default_environment:", f"  other: {local}\ndefault_environment:")
    )
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "create.plan").exit_code == 0
    result = run_cli("apply", "create.plan", "--env", "other")
    assert result.exit_code == 1
    assert "create.plan was planned for environment 'local', not 'other'" in result.stderr
    assert not _state_path(project, "other").exists()
    assert survey_title("tracker") not in {s["survey_title"] for s in api.list_surveys()}


def test_saved_plan_applies_what_was_planned(project, manifests, api, run_cli):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "create.plan").exit_code == 0
    result = run_cli("apply", "create.plan")
    assert result.exit_code == 0, result.stderr
    survey_id = FileStateStore(_state_path(project)).load().survey("tracker").ps_survey_id
    assert api.get_survey(survey_id)["survey_title"] == survey_title("tracker")


def test_edited_plan_file_is_refused(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    run_cli("plan", "manifests", "--out", "create.plan")
    path = project / "create.plan"
    path.write_text(path.read_text().replace(survey_title("tracker"), "Survey tempered"))
    result = run_cli("apply", "create.plan")
    assert result.exit_code == 1
    assert "damaged or was edited" in result.stderr


def test_apply_fails_at_once_while_another_holds_the_lock(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    with StateLock(_state_path(project), "apply", environment="local") as held:
        holder_id = held.info.id
        result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert holder_id in result.stderr
    assert "apply" in result.stderr
    assert FileStateStore(_state_path(project)).load().survey("tracker") is None


def test_apply_with_a_lock_timeout_waits_for_the_holder_then_names_the_wait(
    project, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    with StateLock(_state_path(project), "apply", environment="local"):
        result = run_cli("apply", "manifests", "--auto-approve", "--lock-timeout", "0.3")
    assert result.exit_code == 1
    assert "after waiting 0.3s" in result.stderr
    assert FileStateStore(_state_path(project)).load().survey("tracker") is None


@pytest.mark.parametrize("seconds", ["-1", "nan"])
def test_apply_refuses_a_lock_timeout_that_is_not_a_number_of_seconds(
    seconds, project, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("apply", "manifests", "--auto-approve", "--lock-timeout", seconds)
    assert result.exit_code == 2
    assert "--lock-timeout" in result.stderr
    assert not _state_path(project).exists()


def test_two_concurrent_applies_one_is_refused(project, manifests, start_sandbox):
    slow = start_sandbox(latency_ms=300)
    point_project_at(project, slow.url)
    for index in range(3):
        manifests.write(survey_manifest(f"tracker-{index}"))
    key = {"SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1"}
    first = surveyctl(project, "apply", "manifests", "--auto-approve", env=key)
    second = surveyctl(project, "apply", "manifests", "--auto-approve", env=key)
    results = [process.communicate(timeout=120) for process in (first, second)]
    codes = sorted([first.returncode, second.returncode])
    assert codes == [0, 1], results
    refused = next(
        err for (out, err), p in zip(results, (first, second), strict=True) if p.returncode == 1
    )
    assert "locked" in refused.lower()
    with ApiClient(slow.url, "sandbox-buyer-1") as client:
        titles = [s["survey_title"] for s in client.list_surveys()]
    assert sorted(titles) == [survey_title(f"tracker-{i}") for i in range(3)]


def test_apply_converges_without_duplicates_when_the_service_fails_a_fifth_of_requests(
    project, manifests, start_sandbox, run_cli
):
    flaky = start_sandbox(fail_rate=0.2, seed=11, retry_after=0)
    point_project_at(project, flaky.url)
    names = [f"tracker-{index}" for index in range(8)]
    for name in names:
        manifests.write(survey_manifest(name))
    for _attempt in range(3):
        run_cli("apply", "manifests", "--auto-approve", "--parallelism", "4")
        if run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0:
            break
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0
    with ApiClient(flaky.url, "sandbox-buyer-1") as client:
        titles = [s["survey_title"] for s in client.list_surveys()]
    assert sorted(titles) == sorted(survey_title(name) for name in names)


class Crash(BaseException):
    """The process dying between the create's answer and the state write."""


def test_a_crash_between_post_and_state_write_is_resolved_without_a_duplicate(
    project, manifests, api, run_cli, monkeypatch, unique
):
    title = f"Survey tracker {unique}"
    manifests.write(survey_manifest("tracker", survey_title=title))

    def crash(self, address, record):
        raise Crash()

    with monkeypatch.context() as patch:
        patch.setattr(FileStateStore, "resolve_create", crash)
        with pytest.raises(Crash):
            run_cli("apply", "manifests", "--auto-approve")
    made = [s["ps_survey_id"] for s in api.list_surveys() if s["survey_title"] == title]
    assert len(made) == 1
    plan = run_cli("plan", "manifests")
    assert f"lost its answer but made survey {made[0]}" in plan.stdout
    again = run_cli("apply", "manifests", "--auto-approve")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert [s["ps_survey_id"] for s in api.list_surveys() if s["survey_title"] == title] == made
    assert FileStateStore(_state_path(project)).load().survey("tracker").ps_survey_id == made[0]
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_the_api_key_never_appears_in_output_or_files(
    project, manifests, start_sandbox, run_cli, monkeypatch
):
    private = start_sandbox(keys={SECRET_KEY: 1})
    point_project_at(project, private.url, "SURVEYCTL_SECRET_KEY")
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET_KEY)
    manifests.write(survey_manifest("tracker"))
    outputs = []
    for args in (
        ("validate", "manifests"),
        ("--debug", "plan", "manifests", "--out", "saved.plan"),
        ("--debug", "apply", "saved.plan"),
        ("plan", "manifests", "--format", "json"),
        ("plan", "manifests", "--format", "markdown"),
        ("state", "show", "tracker"),
    ):
        result = run_cli(*args)
        outputs.append(result.stdout + result.stderr)
    assert "> PUT" in "".join(outputs) or "> POST" in "".join(outputs)  # debug shows HTTP
    assert not any(SECRET_KEY in text for text in outputs)
    for path in project.rglob("*"):
        if path.is_file():
            assert SECRET_KEY not in path.read_text(errors="replace"), path


def test_parallelism_sizes_the_connection_pool(project, manifests, start_sandbox, run_cli):
    slow = start_sandbox(latency_ms=100)
    point_project_at(project, slow.url)
    for index in range(60):
        manifests.write(survey_manifest(f"survey-{index:02d}"))
    applied = run_cli("apply", "manifests", "--auto-approve", "--parallelism", "64")
    assert applied.exit_code == 0, applied.stderr
    planned = run_cli("--debug", "plan", "manifests", "--parallelism", "64")
    assert planned.exit_code == 0, planned.stderr
    assert "No changes." in planned.stdout
    assert "Connection pool is full" not in planned.stderr
