"""`surveyctl status`: fieldwork at a glance, or move a survey's status (draft 11, live 22,
paused 33, closed 44).

Status is not part of the manifests: launching, pausing and closing are decisions of the day,
not of the repository. The marketplace allows draft -> live, live <-> paused, paused -> closed.
Reading (no NEW_STATUS) shows status, completes against the goal, incidence, spend and each
quota's fill (see cli/fieldwork_view.py); without SURVEY_ID, of every managed survey.
"""

from __future__ import annotations

import click

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import format_option
from surveyctl.errors import SurveyctlError
from surveyctl.statuses import SURVEY_STATUSES, survey_status_name


def _describe(body: dict) -> str:
    code = body.get("ps_survey_status")
    return f"survey {body.get('ps_survey_id')} is {survey_status_name(code)} ({code})"


@click.command("status")
@click.argument("survey_id", type=int, required=False)
@click.argument("new_status", required=False, type=click.Choice(["live", "paused", "closed"]))
@format_option("text", "json", help="How to show fieldwork.")
@click.option(
    "--watch",
    type=click.FloatRange(1, 3600),
    metavar="SECONDS",
    help="Refresh the fieldwork every SECONDS (1-3600) until Ctrl-C or every survey is closed.",
)
@click.option(
    "--times",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --watch: stop after N refreshes.",
)
@click.option("--yes", is_flag=True, help="Move without asking (a protected environment asks).")
@pass_context
def status_command(
    ctx: CliContext,
    survey_id: int | None,
    new_status: str | None,
    output_format: str,
    watch: float | None,
    times: int | None,
    yes: bool,
) -> None:
    """Show the fieldwork of SURVEY_ID (of every managed survey without it), or move
    SURVEY_ID to NEW_STATUS (live, paused or closed)."""
    if new_status is None:
        from surveyctl.cli.fieldwork_view import show_fieldwork

        show_fieldwork(ctx, survey_id, output_format, watch, times)
        return
    if watch is not None:
        raise click.UsageError("--watch shows fieldwork; it cannot be combined with NEW_STATUS")
    if survey_id is None:
        raise click.UsageError("moving a status needs SURVEY_ID")
    if not confirm_write(ctx, f"move survey {survey_id} to {new_status}", approved=yes):
        raise SurveyctlError(f"survey {survey_id} was not moved")
    client = ctx.client()
    click.echo(_describe(client.set_survey_status(survey_id, SURVEY_STATUSES[new_status])))
