"""The help of every command is whole and says the same thing the same way: each option is
explained in `--help` and in the docs, a help names only options its command has, and `--yes`
says alike on every command when it is needed."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from surveyctl.cli.main import COMMANDS, cli

REPOSITORY = Path(__file__).resolve().parents[2]
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
# An option named in a help text; `--allow-...` stands for the three of them.
OPTION = re.compile(r"(?:(\S+) )?(--[a-z][a-z-]*[a-z])(?![\w.-])")
ALWAYS_ASKS = (
    "without asking (needed without a terminal; a protected environment also needs --env NAME)."
)
PROTECTED_ASKS = (
    "without asking (only a protected environment asks; without a terminal it needs "
    "--env NAME too)."
)


def _commands(group: click.Group = cli, prefix: str = "") -> list[tuple[str, click.Command]]:
    context = click.Context(group)
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
    return found


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


def _docs() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def test_every_option_of_every_command_has_a_help_text():
    missing = [
        f"{path} {option.opts[0]}"
        for path, command in _commands()
        for option in _options(command)
        if not option.help
    ]
    assert missing == []


def test_every_option_of_every_command_is_described_in_the_docs():
    docs = _docs()
    missing = [
        f"{path} {name}"
        for path, command in [("", cli), *_commands()]
        for option in _options(command)
        for name in option.opts + option.secondary_opts
        if name.startswith("--") and name != "--help"
        if not re.search(re.escape(name) + r"(?![\w-])", docs)
    ]
    assert missing == []


# Options of other programs that the docs name: pytest's, for running the tests; the `--json`
# of other command-line tools, which the README names as told to use `--format json`.
OTHER_PROGRAMS_OPTIONS = {"--pdb", "--json"}


def _benchmark_options() -> set[str]:
    """The options the benchmark scripts take (each written as a string in its argparse)."""
    return {
        name
        for script in (REPOSITORY / "benchmarks").glob("*.py")
        for name in re.findall(r"[\"'](--[a-z][a-z-]*[a-z])[\"']", script.read_text("utf-8"))
    }


def test_every_option_the_docs_name_is_an_option_of_surveyctl_or_of_a_benchmark():
    known = {
        name
        for _, command in [("", cli), *_commands()]
        for param in command.params
        for name in getattr(param, "opts", []) + getattr(param, "secondary_opts", [])
    }
    known |= _benchmark_options() | OTHER_PROGRAMS_OPTIONS
    named = {name for _, name in OPTION.findall(_docs())}
    assert sorted(named - known) == []


def test_a_help_text_names_only_options_of_its_own_command():
    global_options = {name for param in cli.params for name in getattr(param, "opts", [])}
    wrong = []
    for path, command in _commands():
        own = {name for param in command.params for name in getattr(param, "opts", [])}
        texts = [command.help or "", *(option.help or "" for option in _options(command))]
        for text in texts:
            for before, name in OPTION.findall(" ".join(text.split())):
                other_command = before.strip("`").removesuffix("'s") in COMMANDS
                if name not in own | global_options and not other_command:
                    wrong.append(f"{path}: {name}")
    assert wrong == []


def _asking_everywhere() -> set[str]:
    """The commands that docs/safety.md says ask on every environment, not only a protected one."""
    safety = " ".join((REPOSITORY / "docs" / "safety.md").read_text(encoding="utf-8").split())
    sentence = re.search(r"On other environments, (.*?) ask unless approved", safety).group(1)
    return set(re.findall(r"`([^`]+)`", sentence))


def test_yes_says_alike_on_every_command_when_it_is_needed():
    asking_everywhere = _asking_everywhere()
    assert asking_everywhere == {"apply", "adjust", "status", "transactions set-status"}
    for path, command in _commands():
        for option in _options(command):
            if "--yes" in option.opts:
                expected = ALWAYS_ASKS if path in asking_everywhere else PROTECTED_ASKS
                assert option.help.endswith(expected), path


def test_the_default_of_plan_refresh_is_shown_as_it_is_typed():
    plan = cli.get_command(click.Context(cli), "plan")
    (refresh,) = [p for p in _options(plan) if p.opts == ["--refresh"]]
    assert "[default: true]" in refresh.get_help_record(click.Context(plan))[1]


@pytest.mark.parametrize(
    ("path", "placeholder"),
    [
        ("status", "NEW_STATUS"),
        ("attributes", "LOCALE"),
        ("sandbox serve", "HOST"),
        ("sandbox serve", "PORT"),
    ],
)
def test_a_value_its_help_names_is_named_so_in_its_usage(path, placeholder):
    command = dict(_commands())[path]
    context = click.Context(command, info_name=path)
    assert placeholder in command.help
    usage = command.collect_usage_pieces(context)
    metavars = [param.make_metavar(context) for param in command.params]
    assert any(placeholder in shown for shown in usage + metavars)


# The names click gives its number types: they say what the value is made of, not what it is.
CLICK_NUMBER_NAMES = {"INTEGER", "INTEGER RANGE", "FLOAT", "FLOAT RANGE", "NUMBER"}


def test_no_option_shows_its_value_by_the_name_of_clicks_number_type():
    shown = [
        f"{path} {option.opts[0]}"
        for path, command in _commands()
        for option in _options(command)
        if not option.is_flag and option.make_metavar(click.Context(command)) in CLICK_NUMBER_NAMES
    ]
    assert shown == []


def test_apply_names_its_arguments_paths_or_planfile_not_target_as_its_option_is_named():
    apply = dict(_commands())["apply"]
    usage = apply.collect_usage_pieces(click.Context(apply, info_name="apply"))
    assert usage == ["[OPTIONS]", "[PATHS]... | PLANFILE"]
    assert "PATHS" in apply.help and "PLANFILE" in apply.help
