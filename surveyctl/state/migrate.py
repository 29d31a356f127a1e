"""Copying an environment's state from one backend to another (file -> PostgreSQL and back).

The copy keeps the lineage and the serial, so plans saved before the move still apply after
it, and it carries the history along. It holds both locks for its whole run and refuses when
the target already holds something that the copy would lose: a state of another lineage, or
a newer serial of the same one.
"""

from __future__ import annotations

from dataclasses import dataclass

from surveyctl.state.backend import StateBackend
from surveyctl.state.changes import BASELINE_COMMAND, Change, Edit, entry_of
from surveyctl.state.records import State, StateError


@dataclass(frozen=True)
class Migration:
    """What a migration did."""

    state: State
    history: int  # changes carried along
    copied: bool  # False: the target held this very state already


def migrate(source: StateBackend, target: StateBackend, timeout: float = 0.0) -> Migration:
    """Copies the state (and history) of `source` into `target`, under both locks."""
    with source.locked("state migrate", timeout), target.locked("state migrate", timeout):
        state = source.load()
        there = target.load()
        if state.serial == 0:
            raise StateError(f"there is no state to copy in {source.location}")
        if there.serial > 0 and there.lineage != state.lineage:
            raise StateError(
                f"{target.location} already holds another state (lineage {there.lineage}, "
                f"serial {there.serial}, not lineage {state.lineage}); surveyctl does not mix "
                "two states: remove that one first if it is not needed"
            )
        if there.serial > state.serial:
            raise StateError(
                f"{target.location} is ahead of {source.location} (serial {there.serial} > "
                f"{state.serial}): it was changed after that copy was made, so copying would "
                "lose those changes"
            )
        changes = _history(source, state)
        if there.serial == state.serial and there.lineage == state.lineage:
            return Migration(there, len(changes), copied=False)
        target.restore(state, changes)
        return Migration(state, len(changes), copied=True)


def _history(source: StateBackend, state: State) -> list[Change]:
    """The source's history of this lineage, with a baseline of the state when it does not
    reach back to the first write (a state written before history was kept)."""
    changes = [c for c in source.changes() if c.lineage == state.lineage]
    complete = changes and (
        changes[0].serial == 1 or any(c.command == BASELINE_COMMAND for c in changes)
    )
    if complete:
        return changes
    baseline = Change(
        state.lineage,
        state.serial,
        "",
        "",
        BASELINE_COMMAND,
        tuple(Edit(address, None, entry_of(state, address)) for address in state.addresses()),
    )
    return [baseline, *changes]
