"""`surveyctl status`: read or move a survey's status (draft 11, live 22, paused 33, closed 44).

Status is not part of the manifests: launching, pausing and closing are decisions of the day,
not of the repository. The marketplace allows draft -> live, live <-> paused, paused -> closed.
"""

from __future__ import annotations

import click

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.errors import SurveyctlError
from surveyctl.statuses import SURVEY_STATUSES, survey_status_name


def _describe(body: dict) -> str:
    code = body.get("ps_survey_status")
    return f"survey {body.get('ps_survey_id')} is {survey_status_name(code)} ({code})"


@click.command("status")
@click.argument("survey_id", type=int)
@click.argument("new_status", required=False, type=click.Choice(["live", "paused", "closed"]))
@click.option("--yes", is_flag=True, help="Move without asking (a protected environment asks).")
@pass_context
def status_command(ctx: CliContext, survey_id: int, new_status: str | None, yes: bool) -> None:
    """Show SURVEY_ID's status, or move it to NEW_STATUS (live, paused or closed)."""
    if new_status is not None and not confirm_write(
        ctx, f"move survey {survey_id} to {new_status}", approved=yes
    ):
        raise SurveyctlError(f"survey {survey_id} was not moved")
    client = ctx.client()
    if new_status is None:
        click.echo(_describe(client.get_survey(survey_id)))
        return
    click.echo(_describe(client.set_survey_status(survey_id, SURVEY_STATUSES[new_status])))
