"""`surveyctl status`: read or move a survey's status (draft 11, live 22, paused 33, closed 44).

Status is not part of the manifests: launching, pausing and closing are decisions of the day,
not of the repository. The marketplace allows draft -> live, live <-> paused, paused -> closed.
"""

from __future__ import annotations

import click

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.statuses import SURVEY_STATUSES, survey_status_name


def _describe(body: dict) -> str:
    code = body.get("ps_survey_status")
    return f"survey {body.get('ps_survey_id')} is {survey_status_name(code)} ({code})"


@click.command("status")
@click.argument("survey_id", type=int)
@click.argument("new_status", required=False, type=click.Choice(["live", "paused", "closed"]))
@pass_context
def status_command(ctx: CliContext, survey_id: int, new_status: str | None) -> None:
    """Show SURVEY_ID's status, or move it to NEW_STATUS (live, paused or closed)."""
    client = ctx.client()
    if new_status is None:
        click.echo(_describe(client.get_survey(survey_id)))
        return
    click.echo(_describe(client.set_survey_status(survey_id, SURVEY_STATUSES[new_status])))
