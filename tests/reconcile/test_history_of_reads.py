"""`surveyctl state history` after applies against the sandbox: a survey an apply only read
is told apart from one it wrote."""

from __future__ import annotations

from .conftest import survey_manifest


def _applied(run_cli) -> None:
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def _lowered_quota(required_count: int) -> dict:
    manifest = survey_manifest("tracker")
    manifest["spec"]["quotas"][0]["required_count"] = required_count
    return manifest


def test_history_says_mod_on_recorded_for_a_survey_an_apply_only_read(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    _applied(run_cli)
    manifests.write(_lowered_quota(90))  # a quota PUT: the state keeps no mod_on after it
    _applied(run_cli)
    _applied(run_cli)  # reads the survey, finds it as last applied, records its mod_on
    result = run_cli("state", "history", "tracker")
    changes = [line.rsplit("  ", 1)[-1].strip() for line in result.stdout.splitlines()[1:]]
    assert changes == ["create started", "create recorded", "changed", "mod_on recorded"]
