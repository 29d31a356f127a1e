"""`surveyctl sandbox simulate SURVEY_ID`: respondent traffic for a survey of the sandbox.

The route behind it lives under `/sandbox`, outside the marketplace API. The command refuses,
before sending anything, an environment that is not a sandbox (the embedded one, or a host on
loopback); should a loopback host not be a sandbox after all, its 404 says so too.
"""

from __future__ import annotations

import click

from surveyctl.cli.console import console as make_console
from surveyctl.cli.console import plain_table
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import SURVEY_ID, Number, format_option, int_list
from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.jsontext import dumps
from surveyctl.safety import require_sandbox
from surveyctl.statuses import survey_status_name, transaction_status_name

# The sandbox's code for traffic sent at a draft (sandbox/routes/traffic.py, which imports Flask:
# not loaded by a command that only calls it over HTTP).
NOT_LAUNCHED = 1024


@click.command(name="simulate")
@click.argument("survey_id", type=SURVEY_ID)
@click.option(
    "--respondents",
    default=100,
    show_default=True,
    type=click.IntRange(1, 10_000),
    metavar="N",
    help="How many respondents to send.",
)
@click.option(
    "--seed", type=int, metavar="N", help="Same seed, same respondents (and same outcomes)."
)
@click.option(
    "--supplier",
    "--supplier-ids",
    "supplier_ids",
    callback=int_list,
    help="Suppliers to draw from: ids, comma-separated, e.g. 12,13.",
)
@click.option(
    "--bad-hash-share",
    type=Number(0.0, 1.0),
    metavar="P",
    help="Share of returns signed with a wrong secret (recorded as 31, tampered); the "
    "sandbox's default is 0.02.",
)
@click.option(
    "--hold",
    is_flag=True,
    help="Leave respondents in the buyer survey (16) so that returns can be sent by hand.",
)
@format_option("table", "json")
@pass_context
def simulate(
    ctx: CliContext,
    survey_id: int,
    respondents: int,
    seed: int | None,
    supplier_ids: tuple[int, ...],
    bad_hash_share: float | None,
    hold: bool,
    output_format: str,
) -> None:
    """Send simulated respondents at live survey SURVEY_ID (sandbox only)."""
    body: dict = {"respondents": respondents, "hold": hold}
    if seed is not None:
        body["seed"] = seed
    if supplier_ids:
        body["supplier_ids"] = list(supplier_ids)
    if bad_hash_share is not None:
        body["bad_hash_share"] = bad_hash_share
    require_sandbox(ctx.environment(), "sandbox simulate")
    client = ctx.client()
    try:
        result = client.simulate_traffic(survey_id, body)
    except ApiError as exc:
        if exc.status in (404, 405) and exc.code is None:
            raise SurveyctlError(
                f"environment {ctx.environment().name!r} is not a sandbox: "
                "simulated traffic exists only in the sandbox marketplace"
            ) from exc
        if exc.status == 409 and exc.code == NOT_LAUNCHED:
            # The sandbox's own words name no command; a first run of the quickstart meets
            # this right after `apply`, whose surveys are drafts.
            raise SurveyctlError(
                f"survey {survey_id} is a draft, and respondents reach only a live survey: "
                f"launch it with `surveyctl status {survey_id} live`, then simulate again"
            ) from exc
        raise
    if output_format == "json":
        click.echo(dumps(result))
        return
    table = plain_table(title=f"survey {survey_id}", title_justify="left")
    table.add_column("st", justify="right")
    table.add_column("status")
    table.add_column("respondents", justify="right")
    for code, count in result["statuses"].items():
        table.add_row(code, transaction_status_name(code), str(count))
    make_console().print(table)
    now = result["ps_survey_status"]
    # By name: "now 33" did not say that the marketplace paused the survey (its goal or every
    # quota reached, spec 1.5), which is why later respondents are turned away.
    click.echo(
        f"{result['respondents']} respondent(s), {result['completes']} complete(s); "
        f"survey status now {survey_status_name(now)} ({now})"
    )
