"""Recording a status set on the marketplace (`surveyctl status`, `transactions set-status`)
in the environment's history, and saying so when it cannot be recorded.

The record comes after the change, and never stands in its way: a pause must go through while
the state database is down, and a change already made cannot be taken back because its record
failed. So a record that fails is one sentence saying that the change was made (or may have
been) and is not in the history, and why; the command then ends with exit 1, as `adjust` does
when an adjustment was submitted but its answer could not be recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from surveyctl.errors import SurveyctlError
from surveyctl.state.backend import StateBackend
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
