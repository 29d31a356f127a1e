"""What a command's --help loads: the options alone, never the workflow behind them (so that
`surveyctl plan --help` answers at once; benchmarks/startup.py measures how fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = (
    "surveyctl.reconcile.run",
    "surveyctl.reconcile.plan_run",
    "surveyctl.reconcile.apply_run",
    "surveyctl.state",
    "surveyctl.manifests",
    "deepdiff",
    "yaml",  # the reader of manifests and of surveyctl.yaml: 30 ms to import
)
# The plan model and the renderers: what a plan needs once it is made, not its --help.
PLAN_AND_RENDERERS = ("surveyctl.reconcile.plan", "surveyctl.render.text", "surveyctl.render.json")


def modules_after(*arguments: str) -> set[str]:
    code = (
        "import sys\n"
        "from surveyctl.cli.main import cli\n"
        "try:\n"
        f"    cli({list(arguments)!r}, prog_name='surveyctl')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_help_of_plan_and_apply_loads_no_workflow(command):
    loaded = modules_after(command, "--help")

    assert "surveyctl.cli.run_options" in loaded  # the options were read
    assert not [module for module in WORKFLOW if module in loaded]


def test_help_of_plan_loads_neither_the_plan_model_nor_the_renderers():
    loaded = modules_after("plan", "--help")

    assert "surveyctl.cli.run_options" in loaded
    assert [module for module in PLAN_AND_RENDERERS if module in loaded] == []


@pytest.mark.parametrize(
    ("command", "for_apply"), [("plan", False), ("show", False), ("apply", True)]
)
def test_the_formats_a_help_lists_are_those_the_command_takes(command, for_apply):
    import click
    from click.testing import CliRunner

    from surveyctl.cli.main import cli
    from surveyctl.render import formats

    shown = CliRunner().invoke(cli, [command, "--help"]).stdout
    option = next(
        p for p in cli.get_command(click.Context(cli), command).params if p.name == "output_format"
    )

    assert f"--format [{'|'.join(formats.names(for_apply))}]" in shown
    assert option.type.choices == tuple(formats.names(for_apply))


def test_an_offline_validate_loads_no_http_client_nor_the_plan_workflow():
    # `validate --offline` reads manifests only: requests and urllib3 alone take 0.1-0.2 s to
    # import on a slow machine, a tenth of validating a thousand surveys from the cache.
    examples = Path(__file__).resolve().parents[1] / "examples"
    loaded = modules_after("validate", "--offline", str(examples))

    assert "surveyctl.manifests.build" in loaded  # the manifests were read
    workflow = ("surveyctl.reconcile.run", "surveyctl.reconcile.plan_run")
    assert [m for m in ("requests", "urllib3", *workflow) if m in loaded] == []
