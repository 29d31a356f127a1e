"""Asking before a write, by the one approval rule of `surveyctl.safety.needs_question`.

Every command that writes to the marketplace, writes state or moves money calls
`confirm_write` before its first write: it refuses (one sentence, exit 1) what the rule does
not let through, asks when a person must confirm, and says whether to go ahead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from surveyctl.cli.context import CliContext
from surveyctl.redacting import nothing_held
from surveyctl.safety import Approval, needs_question
from surveyctl.variables import running_in_ci

if TYPE_CHECKING:  # an annotation only: `apply --help` need not read YAML's modules
    from surveyctl.config import Environment


def terminal() -> bool:
    """Whether there is a person at a terminal to ask: standard input is one, and `$CI` does
    not say this runs in CI. Some runners attach a pseudo-terminal that nobody types into, and
    a question there would hold the job until its timeout instead of refusing at once."""
    return sys.stdin.isatty() and not running_in_ci()


def confirm_write(
    ctx: CliContext,
    action: str,
    *,
    approved: bool,
    flag: str = "--yes",
    always_asks: bool = False,
    hint: str = "",
    can_ask: bool | None = None,
) -> bool:
    """True to go ahead with `action` ("move survey 10001 to live"), False when the person
    said no; NotApproved when it may not happen without a question and none can be asked.

    `approved` is the command's explicit approval (`flag`); `always_asks` marks commands that
    ask on every environment (apply, adjust), the others ask only on a protected one.
    """
    # Whichever command asks: a question or a refusal is never read without the environment.
    ctx.announce()
    environment = ctx.environment()
    approval = Approval(
        approved=approved,
        env_named=ctx.env_named,
        can_ask=terminal() if can_ask is None else can_ask,
        flag=flag,
    )
    if not needs_question(environment, action, approval, always_asks=always_asks, hint=hint):
        return True
    return ask(environment, action)


def ask(environment: Environment, action: str) -> bool:
    """Asks on the terminal; a protected environment wants `yes` typed in full."""
    question = action[0].upper() + action[1:]
    if environment.protected:
        return typed_yes(f"Environment {environment.name!r} is protected. {question}")
    return _interruptible(
        lambda: click.confirm(f"{question}?", default=False, err=True), declined=False
    )


def typed_yes(question: str) -> bool:
    """Asks `question` and goes ahead only when the answer is `yes` typed in full. Questions go
    to stderr, with the messages: on stdout, redirected to a file (`apply > plan.log`), the
    person at the terminal would see nothing and the command would seem to hang."""
    answer = _interruptible(
        lambda: click.prompt(
            f"{question}? Only 'yes' will be accepted", default="", show_default=False, err=True
        ),
        declined="",
    )
    return answer.strip() == "yes"


Answer = TypeVar("Answer")


def _interruptible(question: Callable[[], Answer], declined: Answer) -> Answer:
    """Asks; Ctrl-C (or SIGTERM or SIGHUP, which surveyctl.signals turns into the same) while
    the question waits stays a KeyboardInterrupt. click turns it into Abort ("Aborted!", exit
    1), which would hide it from the command: apply then says that nothing was applied and
    exits 130 (143, 129), as for an interruption anywhere else before its writes.

    End of input (Ctrl-D, or a closed pipe on a terminal's stdin) is the answer `declined`:
    nobody said yes, so the command says in its own words that nothing was changed and exits 1,
    rather than click's bare "Aborted!", which does not say whether the write was made."""
    try:
        with nothing_held():  # the question's last characters are seen before the answer
            return question()
    except click.Abort as exc:
        # The question's line was left open: what is said next starts a line of its own.
        click.echo(err=True)
        if isinstance(exc.__context__, KeyboardInterrupt):
            raise exc.__context__ from None
        return declined


def refuse_unapprovable(ctx: CliContext, approved: bool, flag: str = "--auto-approve") -> None:
    """NotApproved before any request when no answer of the service could make the write
    allowed: a protected environment, no terminal, and not both named with --env and approved.
    Without it the refusal would come only after the plan (and any wait on the network)."""
    environment = ctx.environment()
    if environment.protected:
        ctx.announce()
        approval = Approval(approved=approved, env_named=ctx.env_named, can_ask=False, flag=flag)
        needs_question(environment, f"apply to environment {environment.name!r}", approval)
