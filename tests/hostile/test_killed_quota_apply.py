"""An apply killed between a survey's quota PUTs (or after its last write, before the state
write): the next plan tells surveyctl's own unrecorded writes from drift, and a plain apply
records them without sending them again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.state import FileStateStore

from .conftest import quotas_of, survey_manifest


class Crash(BaseException):
    """The process dying at that point (a BaseException: nothing catches it)."""


def _store(project: Path) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _survey_id(project: Path) -> int:
    return _store(project).load().survey("tracker").ps_survey_id


def _live_counts(api: ApiClient, survey_id: int) -> dict[str, int]:
    return {q["buyer_quota_id"]: q["required_count"] for q in api.get_survey(survey_id)["quotas"]}


def _sent_quotas(monkeypatch) -> list[str]:
    """The quotas of every quota PUT the apply sends from now on, in order."""
    sent: list[str] = []
    original = ApiClient.update_quota

    def update_quota(client, survey_id, quota_id, body):
        sent.append(quota_id)
        return original(client, survey_id, quota_id, body)

    monkeypatch.setattr(ApiClient, "update_quota", update_quota)
    return sent


@pytest.fixture
def applied(project, manifests, run_cli, api) -> int:
    """Survey/tracker applied with both quotas at 100, and its manifest now asking 90 of each
    (a quota update: one PUT per quota, female sent first); its ps_survey_id."""
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", quotas=quotas_of({"male": 90, "female": 90})))
    return _survey_id(project)


def _killed_before_male(run_cli, monkeypatch) -> None:
    """An apply that dies once its PUT of quota female is made, before it sends male's: the
    process is gone before any state write."""
    original = ApiClient.update_quota

    def update_quota(client, survey_id, quota_id, body):
        if quota_id == "male":
            raise Crash()
        return original(client, survey_id, quota_id, body)

    with monkeypatch.context() as patch:
        patch.setattr(ApiClient, "update_quota", update_quota)
        with pytest.raises(Crash):
            run_cli("apply", "manifests", "--auto-approve")


def _killed_before_its_state_write(run_cli, monkeypatch) -> None:
    """An apply that dies after every quota PUT is made, as it writes the state."""

    def record(*args, **kwargs):
        raise Crash()

    with monkeypatch.context() as patch:
        patch.setattr(FileStateStore, "record", record)
        with pytest.raises(Crash):
            run_cli("apply", "manifests", "--auto-approve")


def _drift_lines(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip().startswith("! drift")]


def test_a_quota_put_made_by_an_apply_killed_before_the_next_is_not_shown_as_drift(
    project, manifests, run_cli, monkeypatch, api, applied
):
    _killed_before_male(run_cli, monkeypatch)
    assert _live_counts(api, applied) == {"male": 100, "female": 90}
    plan = run_cli("plan", "manifests")
    assert _drift_lines(plan.stdout) == []
    assert "changed outside surveyctl" not in plan.stdout
    assert "~ quotas[male].required_count: 100 -> 90" in plan.stdout
    assert "quotas[female]" not in plan.stdout.split("Notes:")[0]


# The note of quota female, written by the killed apply and not recorded.
FEMALE_NOTE = (
    "  note: Survey/tracker: quotas[female].required_count is already as the manifest asks "
    "while the state records another value as last applied: written by an apply that could "
    "not record it (stopped before its state write, or its answer lost), or changed so by "
    "hand; not drift: apply records it, with no write of its own (manifests/tracker.yaml:1:1)"
)


def test_the_plan_after_a_killed_quota_update_notes_the_quota_written_and_not_recorded(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_male(run_cli, monkeypatch)
    plan = run_cli("plan", "manifests")
    assert FEMALE_NOTE in plan.stdout.splitlines()
    assert "1 resource is already as its manifest asks in fields the state does not record" in (
        plan.stdout
    )


def test_the_apply_after_a_killed_quota_update_sends_only_the_quota_not_yet_written(
    project, manifests, run_cli, monkeypatch, api, applied
):
    _killed_before_male(run_cli, monkeypatch)
    sent = _sent_quotas(monkeypatch)
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sent == ["male"]
    assert _live_counts(api, applied) == {"male": 90, "female": 90}


def test_the_apply_after_a_killed_quota_update_records_the_quota_written_before_the_kill(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_male(run_cli, monkeypatch)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    recorded = _store(project).load().survey("tracker").last_applied["quotas"]
    assert {q["buyer_quota_id"]: q["required_count"] for q in recorded} == {
        "male": 90,
        "female": 90,
    }
    settled = run_cli("plan", "manifests", "--detailed-exitcode")
    assert settled.exit_code == 0, settled.stdout
    assert "No changes." in settled.stdout
    assert "already as the manifest asks" not in settled.stdout


def test_a_quota_changed_by_hand_to_another_value_after_a_killed_apply_is_still_drift(
    project, manifests, run_cli, monkeypatch, api, applied
):
    _killed_before_male(run_cli, monkeypatch)
    (female,) = quotas_of({"female": 95})
    api.update_quota(applied, "female", {k: v for k, v in female.items() if k != "buyer_quota_id"})
    plan = run_cli("plan", "manifests")
    assert _drift_lines(plan.stdout) == [
        "! drift: quotas[female].required_count was 100 when last applied, is 95 live"
    ]
    assert "already as the manifest asks" not in plan.stdout


def test_a_field_changed_by_hand_beside_a_killed_quota_put_is_still_drift(
    project, manifests, run_cli, monkeypatch, api, applied
):
    from surveyctl.reconcile.normalise import update_body

    _killed_before_male(run_cli, monkeypatch)
    api.update_survey(applied, {**update_body(api.get_survey(applied)), "expected_loi": 12})
    plan = run_cli("plan", "manifests")
    assert _drift_lines(plan.stdout) == [
        "! drift: expected_loi was 10 when last applied, is 12 live"
    ]
    assert FEMALE_NOTE in plan.stdout.splitlines()


def test_a_plan_after_an_apply_killed_after_its_last_quota_put_has_a_state_write_to_make(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_its_state_write(run_cli, monkeypatch)
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 2  # apply has a state write to make
    assert _drift_lines(plan.stdout) == []
    assert "Plan: 0 to add, 0 to change, 0 to destroy." in plan.stdout
    assert "quotas[female].required_count, quotas[male].required_count are already as" in (
        plan.stdout
    )


def test_the_apply_after_one_killed_after_its_last_quota_put_sends_nothing_and_settles(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_its_state_write(run_cli, monkeypatch)
    sent = _sent_quotas(monkeypatch)
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sent == []
    assert "Apply complete! Resources: 0 added, 0 changed, 0 destroyed." in result.stdout
    settled = run_cli("plan", "manifests", "--detailed-exitcode")
    assert settled.exit_code == 0, settled.stdout
    assert "No changes." in settled.stdout


def test_a_json_plan_after_a_killed_quota_update_lists_the_survey_as_unrecorded_not_drifted(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_male(run_cli, monkeypatch)
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    assert plan["unrecorded"] == ["Survey/tracker"]
    (tracker,) = plan["resources"]
    assert tracker["drift"] == []
    assert [c["path"] for c in tracker["changes"]] == ["quotas[male].required_count"]


def test_a_saved_plan_made_after_a_killed_quota_update_applies_and_settles(
    project, manifests, run_cli, monkeypatch, api, applied
):
    _killed_before_male(run_cli, monkeypatch)
    assert run_cli("plan", "manifests", "--out", "killed.plan").exit_code == 0
    sent = _sent_quotas(monkeypatch)
    result = run_cli("apply", "killed.plan")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert sent == ["male"]
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_with_its_state_in_postgresql_a_killed_quota_update_is_noted_and_settled(
    project, manifests, run_cli, monkeypatch, api, postgres
):
    config = project / "surveyctl.yaml"
    setting = (
        f", state: {{backend: postgres, dsn_env: STATE_DSN, schema: {postgres.fresh_schema()}}}"
    )
    config.write_text(
        config.read_text().replace("SURVEYCTL_LOCAL_KEY}", f"SURVEYCTL_LOCAL_KEY{setting}}}")
    )
    monkeypatch.setenv("STATE_DSN", postgres.dsn())
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", quotas=quotas_of({"male": 90, "female": 90})))
    _killed_before_male(run_cli, monkeypatch)
    plan = run_cli("plan", "manifests")
    assert _drift_lines(plan.stdout) == []
    assert FEMALE_NOTE in plan.stdout.splitlines()
    sent = _sent_quotas(monkeypatch)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert sent == ["male"]
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0
    assert not (project / ".surveyctl" / "state" / "local.json").exists()


def test_a_field_the_manifest_dropped_and_a_killed_apply_reset_is_noted_not_drift(
    project, manifests, run_cli, monkeypatch, api
):
    manifests.write(survey_manifest("tracker", buyer_message="Thank you"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker"))  # the full PUT resets buyer_message
    _killed_before_its_state_write(run_cli, monkeypatch)
    assert not api.get_survey(_survey_id(project)).get("buyer_message")  # the PUT was made
    plan = run_cli("plan", "manifests")
    assert _drift_lines(plan.stdout) == []
    assert "note: Survey/tracker: buyer_message is already as the manifest asks" in plan.stdout


# What a refresh says once it finds drift: it reads no manifest, so it cannot tell a killed
# apply's writes from drift, and names the plan that can.
MAYBE_UNRECORDED = (
    "  note: a refresh reads no manifest, so it cannot tell a change made outside surveyctl "
    "from a write of an apply stopped before its state write (killed, or its answer lost): if "
    "an apply was stopped, some drift of this refresh may be its writes, already as the "
    "manifests ask. `surveyctl plan` tells them apart (it names such writes in a note, not as "
    "drift), and `surveyctl apply` records them without sending them again; `surveyctl apply "
    "--refresh-only` records every live value it shows as last applied"
)


def test_a_refresh_after_a_killed_quota_update_says_its_drift_may_be_that_apply_s_writes(
    project, manifests, run_cli, monkeypatch, applied
):
    _killed_before_male(run_cli, monkeypatch)
    refresh = run_cli("plan", "--refresh-only")
    assert _drift_lines(refresh.stdout) == [
        "! drift: quotas[female].required_count was 100 when last applied, is 90 live"
    ]
    assert MAYBE_UNRECORDED in refresh.stdout.splitlines()
