"""`surveyctl adjust FILE`: submit transactions for reconciliation (spec 4.10).

An adjustment moves money, so the command shows what it will submit and asks first; without
a terminal to ask on, it needs `--yes`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.errors import SurveyctlError
from surveyctl.ops.adjust import load_upload, render_preview, render_summary


def _interactive() -> bool:
    return sys.stdin.isatty()


@click.command(name="adjust")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Submit without asking (needed without a terminal).")
@click.option(
    "--survey",
    "survey_id",
    type=int,
    help="Submit through the per-survey path for this survey id.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the service's full answer as JSON to this file.",
)
@pass_context
def adjust(
    ctx: CliContext, file: Path, yes: bool, survey_id: int | None, output: Path | None
) -> None:
    """Submit the transactions listed in FILE (CSV or JSON) for adjustment."""
    upload = load_upload(file)
    client = ctx.client()  # names the environment before anything is asked
    console = Console()
    render_preview(upload, console)
    if not yes:
        if not _interactive():
            raise SurveyctlError(
                "an adjustment moves money: confirm with --yes when there is no terminal to ask on"
            )
        if not click.confirm("Submit these transactions for adjustment?", default=False):
            click.echo("nothing submitted", err=True)
            return
    response = client.adjust(upload.transaction_ids, survey_id=survey_id)
    if output is not None:
        output.write_text(json.dumps(response, indent=2) + "\n", encoding="utf-8")
    render_summary(response, console)
