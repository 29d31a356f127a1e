"""The merge job of a CI pipeline applies the plan file the pull request's job saved. When
that artifact is missing (its download failed, a typo in its name), apply says so, instead of
taking the name for manifests and asking for an approval the job already gives."""

from __future__ import annotations


def test_apply_of_a_missing_plan_file_says_the_file_does_not_exist(prod, run_cli):
    result = run_cli("--env", "prod", "apply", "change.plan")
    assert result.exit_code == 1
    assert "change.plan does not exist" in result.stderr
    assert "--auto-approve" not in result.stderr
    assert "Traceback" not in result.stderr


def test_apply_of_a_missing_plan_file_with_auto_approve_says_the_file_does_not_exist(prod, run_cli):
    result = run_cli("--env", "prod", "apply", "change.plan", "--auto-approve")
    assert result.exit_code == 1
    assert "change.plan does not exist" in result.stderr
    assert "in the manifests" not in result.stderr
