"""What recovery makes of lost creates, and the steps every kind's recovery shares.

`surveyctl.reconcile.recovery` runs the recovery of each kind (`Kind.recover`); a kind decides
from what the marketplace shows and reports through these helpers: adopt what the create made,
plan it again, or leave it blocked with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.plan import Note
from surveyctl.state import JournalEntry, Record, State
from surveyctl.variables import DEFAULT_SETTLE_SECONDS


@dataclass
class Recovery:
    """What the plan makes of the lost creates: the state as the planner should see it (adopted
    resources recorded, resolved entries gone; the others stay journaled, so the plan lists
    them as blocked), what apply records (`recovered`: address -> record, or None when the
    create is planned again), and the notes saying which is which. `settle_seconds`: how old
    a lost create must be before "the marketplace shows nothing" means it made nothing;
    `rule`: the environment's identity rule, which tells what a lost create could have made
    (`surveyctl.reconcile.identity`)."""

    state: State
    recovered: dict[str, dict | None] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    rule: Rule = field(default_factory=lambda: Rule(""))


def adopt(recovery: Recovery, lost: str, record: Record, message: str) -> None:
    """The lost create made `record`'s resource: it is managed from now on."""
    recovery.state.resources[lost] = record
    recovery.state.journal.pop(lost, None)
    recovery.recovered[lost] = record.to_json()
    recovery.notes.append(Note("note", lost, message))


def plan_again(
    recovery: Recovery, lost: str, entry: JournalEntry, now: datetime, outcome: str
) -> None:
    """The lost create made nothing: planned again once it is older than the settle time."""
    started = parse_time(entry.started_at)
    settled_at = started + timedelta(seconds=recovery.settle_seconds) if started else None
    if settled_at is not None and now < settled_at:
        recovery.notes.append(
            Note(
                "warning",
                lost,
                f"the create sent at {entry.started_at} lost its answer and has {outcome} so "
                "far; the service may still be processing it, so it is left out of this plan "
                f"(run it again after {settled_at.isoformat(timespec='seconds')})",
            )
        )
        return
    recovery.state.journal.pop(lost, None)
    recovery.recovered[lost] = None
    recovery.notes.append(
        Note(
            "note",
            lost,
            f"the create sent at {entry.started_at} lost its answer and {outcome}; it is "
            "planned again",
        )
    )


def cannot_check(recovery: Recovery, lost: str, entry: JournalEntry, problem: str) -> None:
    """What the lost create made could not be read: it stays blocked for a later run."""
    recovery.notes.append(
        Note(
            "warning",
            lost,
            f"cannot check what the create sent at {entry.started_at} made (reading {problem}); "
            "it is left out of this plan and apply does not attempt it (run it again)",
        )
    )


def parse_time(text: object) -> datetime | None:
    """An ISO 8601 time (UTC when it has no zone), or None."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
