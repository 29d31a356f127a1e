"""`surveyctl status`: fieldwork at a glance, or move a survey's status (draft 11, live 22,
paused 33, closed 44).

Status is not part of the manifests: launching, pausing and closing are decisions of the day,
not of the repository. The marketplace allows draft -> live, live <-> paused, paused -> closed;
a move to where the survey is already is "already live" and exit 0, and a move it does not make
directly names the steps. A move asks as apply does (a terminal, else --yes). A move made, or
whose answer was lost, is recorded in the environment's history (`surveyctl state history`).
Reading (no NEW_STATUS) shows status, completes against the goal, incidence, spend and each
quota's fill (see cli/fieldwork_view.py); without SURVEY_ID, of every managed survey.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import click

from surveyctl.cli import confirm
from surveyctl.cli.console import note_quoting_the_service
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import SURVEY_ID, Number, format_option, yes_help
from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.ops import status_history
from surveyctl.ops.survey_moves import what_it_was_said_to_cost, what_the_move_does
from surveyctl.render.values import printable
from surveyctl.state.status_changes import MADE, MADE_ANSWER_LOST, MAYBE_MADE, StatusSet
from surveyctl.statuses import CLOSED, SURVEY_STATUSES, survey_move_path, survey_status_name


def _describe(body: dict) -> str:
    code = body.get("ps_survey_status")
    return f"survey {body.get('ps_survey_id')} is {survey_status_name(code)} ({code})"


@click.command("status")
@click.argument("survey_id", type=SURVEY_ID, required=False)
@click.argument(
    "new_status",
    required=False,
    type=click.Choice(["live", "paused", "closed"]),
    metavar="[NEW_STATUS]",  # the name its help and errors use; the help lists the values
)
@format_option("text", "json", help="How to show fieldwork.")
@click.option(
    "--watch",
    type=Number(1, 3600),
    metavar="SECONDS",
    help="Refresh the fieldwork every SECONDS (1-3600) until Ctrl-C or every survey is closed.",
)
@click.option(
    "--times",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --watch: stop after N refreshes.",
)
@click.option(
    "--yes",
    is_flag=True,
    help=yes_help("Move", always_asks=True),
)
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
    if times is not None and watch is None:
        raise click.UsageError("--times counts the refreshes of --watch: give --watch SECONDS too")
    if new_status is None:
        from surveyctl.cli.fieldwork_view import show_fieldwork

        with _named_when_missing(ctx, survey_id):
            show_fieldwork(ctx, survey_id, output_format, watch, times)
        return
    if watch is not None:
        raise click.UsageError("--watch shows fieldwork; it cannot be combined with NEW_STATUS")
    if output_format == "json":
        # A move says what it did in a line of text: a program that asked for JSON would
        # otherwise fail to parse it, after the survey moved.
        raise click.UsageError(
            "--format json shows fieldwork; it cannot be combined with NEW_STATUS"
        )
    # Click fills the positional SURVEY_ID before NEW_STATUS: a NEW_STATUS comes with an id.
    _move(ctx, survey_id, new_status, yes)


def _move(ctx: CliContext, survey_id: int, new_status: str, yes: bool) -> None:
    """Moves the survey one step, by the approval rule of apply (asks on a terminal, else
    needs --yes; a protected environment also needs --env): a refusal that needs no answer
    comes before any request, and a move the marketplace does not make names the way there."""
    action = f"move survey {survey_id} to {new_status}"
    # Named before any refusal or question, as set-status, adjust and apply do: "no --yes"
    # or "protected" must not be read without knowing which marketplace it is about.
    ctx.announce()
    ctx.config().actor_name()  # a name the history cannot keep is refused before any change
    if not confirm.terminal():  # refuses here, or lets the move through without a question
        confirm.confirm_write(ctx, action, approved=yes, always_asks=True)
    client = ctx.client()
    with _named_when_missing(ctx, survey_id):
        survey = client.get_survey(survey_id)
    current = survey.get("ps_survey_status")
    wanted = SURVEY_STATUSES[new_status]
    path = survey_move_path(current, wanted) if isinstance(current, int) else [wanted]
    now = f"survey {survey_id} is {survey_status_name(current)} ({current})"
    if path == []:
        click.echo(f"{now} already; nothing to do.")
        return
    if path is None:
        raise SurveyctlError(f"{now} and cannot move to {new_status}: {_dead_end(current)}")
    if len(path) > 1:
        steps = ", then ".join(
            f"`surveyctl status {survey_id} {survey_status_name(step)}`" for step in path
        )
        raise SurveyctlError(
            f"{now} and cannot move to {new_status} directly (the marketplace moves draft -> "
            f"live <-> paused -> closed): {steps}"
        )
    # What the move does, and for a launch what it can cost, before the question (and in a
    # CI log before the move): "move survey 10001 to live" alone does not say it spends.
    click.echo(f"{_named(survey, survey_id, now)}: {what_the_move_does(survey, wanted)}.", err=True)
    asked = confirm.terminal()
    if asked and not confirm.confirm_write(ctx, action, approved=yes, always_asks=True):
        raise SurveyctlError(f"survey {survey_id} was not moved")
    moved = partial(
        StatusSet,
        survey_id,
        wanted,
        from_status=current if isinstance(current, int) else None,
        cost=what_it_was_said_to_cost(survey, wanted),
    )
    with status_history.in_flight("status"):  # a signal now waits for the answer and record
        try:
            answer = client.set_survey_status(survey_id, wanted)
            outcome = MADE
        except SurveyctlError as exc:
            try:
                answer = _read_back(client, survey_id, wanted, exc)
            except _Unknown as unknown:
                _record(ctx, moved(MAYBE_MADE), failing=unknown)
                raise
            outcome = MADE_ANSWER_LOST
        click.echo(_describe(answer))
        got = answer.get("ps_survey_status")
        # The move was made even when the marketplace paused the survey again at once.
        stayed = None
        if got != wanted:
            stayed = SurveyctlError(
                f"survey {survey_id} did not stay {new_status}: {_why_not(got)}"
            )
        _record(ctx, moved(outcome), failing=stayed)


@contextmanager
def _named_when_missing(ctx: CliContext, survey_id: int | None) -> Iterator[None]:
    """A survey the marketplace does not have (404) said as one sentence naming the id and the
    environment, rather than the request and the service's words (kept for --debug): a
    mistyped id, or one of another environment, is the usual cause."""
    try:
        yield
    except ApiError as exc:
        if survey_id is None or exc.status != 404:
            raise
        if ctx.debug:
            click.echo(f"surveyctl: the marketplace answered: {exc}", err=True)
        environment = ctx.environment().name
        raise SurveyctlError(
            f"no survey {survey_id} in the marketplace of environment {environment!r}"
        ) from None


def _record(ctx: CliContext, what: StatusSet, failing: SurveyctlError | None) -> None:
    """Adds the move to the environment's history (docs/operations.md), then raises `failing`
    if there is one; a move whose record failed is said, and ends with exit 1, as an
    adjustment whose answer could not be recorded does."""
    environment = ctx.environment().name
    status_history.record_or_say(ctx.state_store, environment, "status", what, failing)


def _named(survey: dict, survey_id: int, now: str) -> str:
    """`Survey 10001 (Brand tracker US) is draft (11)`: the title says which survey an id is."""
    title = survey.get("survey_title")
    named = f" ({printable(title)})" if isinstance(title, str) and title else ""
    return f"Survey {survey_id}{named}{now.removeprefix(f'survey {survey_id}')}"


def _read_back(client, survey_id: int, wanted: int, failure: SurveyctlError) -> dict:
    """The survey's status after a move that ended in an error, when the move was made anyway:
    a PUT whose answer was lost is sent again, and the service, which made the first, refuses
    the second (a survey cannot move from live to live); a 5xx may come after the write. Said
    as failed, the move would be made again by hand or by a CI re-run, or taken as not made.
    The error stands, with the status read now, when the survey is not where it was sent."""
    try:
        now = client.get_survey(survey_id)
    except SurveyctlError:
        raise _Unknown(
            f"{failure}; whether survey {survey_id} moved could not be read back: "
            f"`surveyctl status {survey_id}` shows where it is"
        ) from failure
    got = now.get("ps_survey_status")
    if got != wanted:
        raise SurveyctlError(
            f"{failure}; survey {survey_id} is {survey_status_name(got)} ({got}), not moved"
        ) from failure
    note_quoting_the_service(
        f"surveyctl: the move of survey {survey_id} ended in an error ({failure}), but the "
        f"survey is {survey_status_name(got)} now: the move was made"
    )
    return now


class _Unknown(SurveyctlError):
    """A move whose answer was lost and whose survey could not be read back: it may have been
    made."""


def _why_not(got: object) -> str:
    """Why the marketplace answered another status than the one asked for."""
    if got == SURVEY_STATUSES["paused"]:
        # Spec 1.5: paused automatically once the goal or every quota is reached.
        return (
            "the marketplace pauses a survey whose goal or every quota is reached (spec 1.5); "
            "raise completes_required or the quotas in its manifest and apply, then move it again"
        )
    return "the marketplace answered another status than the one asked for"


def _dead_end(current: object) -> str:
    if current == CLOSED:
        return "a closed survey stays closed"
    return "no moves of the marketplace lead there"
