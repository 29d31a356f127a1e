"""Recording a status set on the marketplace (`surveyctl status`, `transactions set-status`)
in the environment's history, and saying so when it cannot be recorded.

The record comes after the change, and never stands in its way: a pause must go through while
the state database is down, and a change already made cannot be taken back because its record
failed. So a record that fails is one sentence saying that the change was made (or may have
been) and is not in the history, and why; the command then ends with exit 1, as `adjust` does
when an adjustment was submitted but its answer could not be recorded.

A signal (Ctrl-C, SIGTERM, SIGHUP) while the change is in flight does not stop the command
there, which would leave a change that may have been made and no record of it: the answer is
awaited and the change recorded first (`in_flight`), as `adjust` does for an adjustment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from surveyctl.errors import SurveyctlError
from surveyctl.safety import Interrupted, Interrupts
from surveyctl.signals import tell_from_handler
from surveyctl.state.backend import StateBackend
from surveyctl.state.notes import Note, note_to_stderr
from surveyctl.state.status_changes import MAYBE_MADE, StatusSet
from surveyctl.statuses import survey_status_name


def record(open_store: Callable[[], StateBackend], command: str, what: StatusSet) -> str | None:
    """Adds `what`, set by `command`, to the history of the store `open_store` opens; None
    when it is recorded, else why not (one clause, no secret: the backends' errors name the
    database by user, host and name only)."""
    try:
        store = open_store()
        try:
            store.record_status(command, what)
        finally:
            store.close()
    except SurveyctlError as exc:
        return exc.message
    except OSError as exc:  # what no backend turned into a sentence (it names no secret)
        return exc.strerror or str(exc)
    return None


def record_or_say(
    open_store: Callable[[], StateBackend],
    environment: str,
    command: str,
    what: StatusSet,
    failing: SurveyctlError | None = None,
    note: Note = note_to_stderr,
) -> None:
    """Records `what` (see `record`), then raises `failing` when the change also went wrong
    (a move the marketplace undid at once, a lost answer not read back). A record that failed
    is the error itself (exit 1), or beside `failing` a note before it."""
    why = record(open_store, command, what)
    if why is not None:
        unrecorded = not_recorded(what, environment, why)
        if failing is None:
            raise SurveyctlError(unrecorded)
        note(unrecorded)
    if failing is not None:
        raise failing


def not_recorded(what: StatusSet, environment: str, why: str) -> str:
    """The sentence of a change made (or that may have been) whose record failed."""
    where = f"the history of environment {environment!r}"
    maybe = what.outcome == MAYBE_MADE
    if what.transaction_id is None:
        wanted = survey_status_name(what.to_status)
        if maybe:
            return (
                f"the move of survey {what.survey_id} to {wanted} may have been made, and is "
                f"not in {where}: {why}"
            )
        return (
            f"survey {what.survey_id} was moved to {wanted}, but the move is not in {where}: {why}"
        )
    if maybe:
        return (
            f"status {what.to_status} of transaction {what.transaction_id} may have been "
            f"recorded, and is not in {where}: {why}"
        )
    return (
        f"transaction {what.transaction_id} of survey {what.survey_id} has status "
        f"{what.to_status}, but that is not in {where}: {why}"
    )


@contextmanager
def in_flight(command: str) -> Iterator[None]:
    """The block that sends a status change, reads it back and records it: a signal that
    arrives meanwhile lets it finish, then stops the command with the signal's exit code
    (130, 143, 129) and what was done; an error the block raises stays the one reported."""
    with Interrupts(_told) as signals:
        signals.finish_in_flight()
        try:
            yield
        except SurveyctlError as exc:
            if signals.stop.is_set() and not isinstance(exc, Interrupted):
                raise Interrupted(str(exc), signals.exit_code) from exc
            raise
        if signals.stop.is_set():
            raise Interrupted(
                f"{command} interrupted: the change in flight was answered and recorded",
                signals.exit_code,
            )


def _told(signal_name: str, first: bool) -> None:
    tell_from_handler(
        f"\n{signal_name} received: the status change in flight is answered and recorded "
        "before surveyctl stops.\n"
        if first
        else f"{signal_name} received again: still finishing the status change in flight.\n"
    )
