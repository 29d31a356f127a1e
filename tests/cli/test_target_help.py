"""--target's help says what the command does to the resource it names."""

from __future__ import annotations

from click.testing import CliRunner

from surveyctl.cli.main import cli


def _target_help(command: str) -> str:
    shown = CliRunner().invoke(cli, [command, "--help"]).output
    return " ".join(shown.split("--target ADDRESS", 1)[1].split())


def test_apply_help_says_target_applies_only_that_resource():
    assert _target_help("apply").startswith("Apply only this resource")


def test_plan_help_says_target_plans_only_that_resource():
    assert _target_help("plan").startswith("Plan only this resource")
