"""What a command's --help loads: the options alone, never the workflow behind them (so that
`surveyctl plan --help` answers at once; benchmarks/startup.py measures how fast)."""

from __future__ import annotations

import subprocess
import sys

import pytest

WORKFLOW = ("surveyctl.reconcile.run", "surveyctl.state", "surveyctl.manifests", "deepdiff")


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
