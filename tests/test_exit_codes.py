"""Exit codes with `--detailed-exitcode`: 0 no changes, 2 changes, 1 for everything else,
usage errors included (a CI step that takes 2 for "changes" must not pass on a typo)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from surveyctl.cli.main import cli

from .test_cli_root import _command_paths


def _run(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("path", _command_paths(cli), ids=" ".join)
def test_an_unknown_option_exits_1_with_detailed_exitcode(path, tmp_path, monkeypatch):
    result = _run(tmp_path, monkeypatch, *path, "--detailed-exitcode", "--bogus")
    assert result.exit_code == 1, result.output
    assert "No such option" in result.output


@pytest.mark.parametrize("path", _command_paths(cli), ids=" ".join)
def test_an_unknown_option_exits_2_without_detailed_exitcode(path, tmp_path, monkeypatch):
    # README.md, "Conventions": 2 as click's commands do, 1 only under --detailed-exitcode.
    result = _run(tmp_path, monkeypatch, *path, "--bogus")
    assert result.exit_code == 2, result.output
    assert "No such option" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--detailed-exitcode", "--format", "yaml"),
        ("plan", "--detailed-exitcode", "--parallelism", "0"),
        ("plan", "--detailed-exitcode", "--refresh-only", "--destroy"),
        ("--detailed-exitcode", "--bogus", "plan"),
        ("plna", "--detailed-exitcode"),
        ("plan", "--detailed-exitcode=1"),  # the option takes no value
    ],
    ids=" ".join,
)
def test_a_plan_usage_error_exits_1_with_detailed_exitcode(args, tmp_path, monkeypatch):
    result = _run(tmp_path, monkeypatch, *args)
    assert result.exit_code == 1, result.output
    assert "Error:" in result.output


def test_a_usage_error_without_detailed_exitcode_keeps_click_exit_code_2(tmp_path, monkeypatch):
    assert _run(tmp_path, monkeypatch, "plan", "--bogus").exit_code == 2


@pytest.mark.parametrize("option", ["--env", "--config", "--timeout"])
def test_a_global_option_last_after_the_command_without_a_value_says_so(
    option, tmp_path, monkeypatch
):
    result = _run(tmp_path, monkeypatch, "plan", option)
    assert result.exit_code == 2
    assert f"Error: Option '{option}' requires an argument." in result.output
    assert "No such option" not in result.output
    assert _run(tmp_path, monkeypatch, "plan", "--detailed-exitcode", option).exit_code == 1
