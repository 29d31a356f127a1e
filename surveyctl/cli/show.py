"""`surveyctl show PLANFILE`: a saved plan as text, JSON or markdown, without a connection.

A saved plan carries everything its renderers need (the names of its codes included), so it can
be reviewed where no key or catalogue is at hand, e.g. as a CI artifact.
"""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.cli.options import PLAN_FORMATS, FilePath, output_format_option
from surveyctl.cli.run_options import render_plan, warn


@click.command("show")
@click.argument("planfile", type=FilePath(dir_okay=False, path_type=Path))
@output_format_option(help=PLAN_FORMATS)
def show_command(planfile: Path, output_format: str) -> None:
    """Show a plan saved by `surveyctl plan --out PLANFILE`; reads nothing else."""
    from surveyctl.reconcile.planfile import load_plan
    from surveyctl.variables import plan_signing_key

    plan = load_plan(planfile, plan_signing_key())
    if output_format == "text":
        # `plan` said these on stderr as it made the plan; a reviewer of the saved file did not
        # see them (JSON and markdown carry them in the document).
        for warning in plan.warnings:
            warn(warning)
    click.echo(render_plan(plan, output_format), nl=False)
