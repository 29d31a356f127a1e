"""The root command: version, help on every command, and environment selection."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from surveyctl import __version__
from surveyctl.cli.main import COMMANDS, SUMMARIES, cli
from surveyctl.config import SANDBOX, load_config
from surveyctl.errors import ConfigError


def test_version_prints_the_package_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    context = click.Context(group)
    paths = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths.extend(_command_paths(command, (*prefix, name)))
    return paths


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_root_help_lists_each_command_with_the_first_line_of_its_own_help(name):
    command = cli.get_command(click.Context(cli), name)
    assert SUMMARIES[name] == command.get_short_help_str(limit=1_000)
    listed = CliRunner().invoke(cli, ["--help"], terminal_width=200).output
    assert f"  {name}  " in listed and SUMMARIES[name] in listed


def _unwrapped(text: str) -> str:
    # Without any blank: the help wraps lines, also after a hyphen (`--all-` `unmanaged`).
    return "".join(text.split())


def test_root_help_at_80_columns_shows_each_commands_summary_whole():
    # click cuts a summary to one line ("Submit the transactions listed in FILE (CSV or
    # JSON) for..."); wrapped, each reads to its end.
    shown = CliRunner().invoke(cli, ["--help"], terminal_width=80).output
    listed = _unwrapped(shown.split("Commands:", 1)[1])
    assert "..." not in listed
    for name, summary in SUMMARIES.items():
        assert f"{name}{_unwrapped(summary)}" in listed, name


@pytest.mark.parametrize("group", ["state", "transactions", "sandbox", "link", "surveys"])
def test_a_groups_help_at_80_columns_shows_each_commands_first_sentence_whole(group):
    command = cli.get_command(click.Context(cli), group)
    shown = CliRunner().invoke(cli, [group, "--help"], terminal_width=80).output
    listed = _unwrapped(shown.split("Commands:", 1)[1])
    assert "..." not in listed
    for name in command.list_commands(click.Context(command)):
        first = command.get_command(click.Context(command), name).get_short_help_str(10_000)
        assert f"{name}{_unwrapped(first)}" in listed, name


def test_root_help_lists_exactly_the_commands_there_are():
    assert set(SUMMARIES) == set(COMMANDS)


def test_root_help_and_version_import_no_command():
    # Listing the commands from SUMMARIES is what keeps `surveyctl --help` quick to start.
    # The root needs only itself, the errors and the option types (which import click alone),
    # and the redaction of its output streams (which imports the standard library alone).
    code = (
        "import sys; from surveyctl.cli.main import cli; "
        "cli([sys.argv[1]], standalone_mode=False); "
        "print(sorted(m for m in sys.modules if m.startswith('surveyctl.') "
        "and m not in ('surveyctl.cli', 'surveyctl.cli.main', 'surveyctl.cli.options', "
        "'surveyctl.errors', 'surveyctl.cli.streams', 'surveyctl.redacting')))"
    )
    for option in ("--help", "--version"):
        run = subprocess.run(
            [sys.executable, "-c", code, option], capture_output=True, text=True, check=True
        )
        assert run.stdout.splitlines()[-1] == "[]", option


@pytest.mark.parametrize("path", _command_paths(cli), ids=" ".join)
def test_every_command_and_sub_command_has_help(path):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    usage = result.output.splitlines()[0]
    assert usage.startswith("Usage:") and " ".join(path) in usage


def test_sandbox_is_the_environment_when_nothing_is_configured(tmp_path, monkeypatch):
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    config = load_config(cwd=tmp_path)
    assert config.environment().name == SANDBOX
    assert config.environment().embedded


def test_env_variable_selects_a_configured_environment(tmp_path, monkeypatch):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: K}\n"
    )
    monkeypatch.setenv("SURVEYCTL_ENV", "staging")
    assert load_config(cwd=tmp_path).environment().host == "https://staging.example.com"


@pytest.mark.parametrize("args", [["--env", "", "state", "list"], ["state", "list", "--env="]])
def test_an_empty_env_is_a_usage_error_not_the_default_environment(tmp_path, monkeypatch, args):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: K}\n"
        "default_environment: staging\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "Invalid value for '--env': an empty name is no environment" in result.stderr
    assert result.stdout == ""


def test_unknown_environment_names_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    with pytest.raises(ConfigError, match="unknown environment 'prod'.*known: sandbox"):
        load_config(cwd=tmp_path).environment("prod")


def test_missing_api_key_names_the_variable(tmp_path, monkeypatch):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: STG_KEY}\n"
    )
    monkeypatch.delenv("STG_KEY", raising=False)
    environment = load_config(cwd=tmp_path).environment("staging")
    with pytest.raises(ConfigError, match=r"\$STG_KEY"):
        environment.api_key()
