"""Copying an environment's state from one backend to another (file -> PostgreSQL and back).

The copy keeps the lineage and the serial, so plans saved before the move still apply after
it, and it carries the history along. It holds both locks for its whole run and refuses when
the target holds something that the copy would lose: a state of another lineage, or one that is
not a past state of the source. Serials alone cannot tell the second: two copies of one state
written separately after a migrate (the old file applied to while PostgreSQL also was) both
count up from where they parted, so either serial may be the higher one. The rule is that the
target's state must be, record for record, the source's state at the target's serial, as the
source's history rebuilds it; a target with the higher serial is refused in any case, and its
own history, rebuilt at the source's serial, tells whether it is simply ahead (copy the other
way) or went on separately (neither copy holds every change, and the refusal says so).

The status changes of the source's history (`surveyctl.state.status_changes`) are added to the
target's when it lacks them; the target's own are kept.

A file it copied from is marked as moved (`surveyctl.state.file.moved`), so that plan and apply
refuse to go on with the old copy.
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
    marked: bool = False  # the source now says it moved (plan and apply refuse it)
    status_changes: int = 0  # status changes of `status` and `set-status` the target lacked


def migrate(
    source: StateBackend, target: StateBackend, timeout: float = 0.0, copy_back: str = ""
) -> Migration:
    """Copies the state (and history) of `source` into `target`, under both locks, and marks
    the source as moved where its backend can (`copy_back`: the command that undoes it)."""
    with source.locked("state migrate", timeout), target.locked("state migrate", timeout):
        # One survey under two names is copied as it is (and said on stderr): the `state rm`
        # that repairs it works on the backend surveyctl.yaml names, the target.
        state = source.load(verify=False)
        there = target.load(verify=False)
        if state.serial == 0:
            raise StateError(f"there is no state to copy in {source.location}")
        if there.serial > 0 and there.lineage != state.lineage:
            raise StateError(
                f"{target.location} already holds another state (lineage {there.lineage}, "
                f"serial {there.serial}) than {source.location} (lineage {state.lineage}, "
                f"serial {state.serial}); surveyctl does not mix two states: remove the one in "
                f"{target.location} first if it is not needed"
            )
        if there.serial > 0:
            _check_descends(source, target, state, there)
        changes = _history(source, state)
        copied = there.serial != state.serial
        if copied:
            target.restore(state, changes)
        # Status changes are not the state's writes: those the target lacks are added, whether
        # or not the state was copied (one recorded here after a copy there and back).
        added = target.add_status_changes(
            [s for s in source.status_changes() if s.lineage in ("", state.lineage)]
        )
        # Also when nothing was copied: the target is then the current copy all the same (a
        # file copied to PostgreSQL and straight back is not "moved"), and a source that an
        # earlier migrate left unmarked gets its mark.
        _call(target, "clear_moved")
        marked = bool(_call(source, "mark_moved", target.location, copy_back))
        return Migration(state if copied else there, len(changes), copied, marked, added)


def _check_descends(source: StateBackend, target: StateBackend, state: State, there: State) -> None:
    """StateError unless the target's state `there` is the source's `state` as it was at the
    target's serial: then the source holds every change of the target and copying loses none."""
    where = f"{target.location} (serial {there.serial})"
    if there.serial > state.serial:
        raise _ahead_refusal(source, target, state, there)
    try:
        then = state if there.serial == state.serial else source.state_at(there.serial)
    except StateError:
        raise StateError(
            f"cannot tell whether {where} holds changes that {source.location} (serial "
            f"{state.serial}) lacks: the history of {source.location} does not reach back to "
            f"serial {there.serial} (it was written by a surveyctl that kept no history), so "
            f"copying could lose them; remove the copy in {target.location} first if it is "
            "not needed"
        ) from None
    if _content(then) != _content(there):
        raise _diverged(source, target, state, there)


def _ahead_refusal(
    source: StateBackend, target: StateBackend, state: State, there: State
) -> StateError:
    """Why a target with the higher serial is refused: copying would lose its changes. Which
    way out helps depends on whether it is a later version of the source (then the source is
    simply behind: copy the other way) or whether both went on after they parted (then
    neither copy holds every change); the target's history, rebuilt at the source's serial,
    tells the two apart."""
    where = f"{target.location} (serial {there.serial})"
    try:
        then = target.state_at(state.serial)
    except StateError:
        return StateError(
            f"{where} is at a later serial than {source.location} (serial {state.serial}), so "
            f"copying would lose its changes, and its history does not reach back to serial "
            f"{state.serial} to tell whether it holds every change of {source.location}; go "
            f"on with {target.location}, which surveyctl.yaml names, or remove it first if "
            "its changes are not needed"
        )
    if _content(then) != _content(state):
        return _diverged(source, target, state, there)
    return StateError(
        f"{where} is ahead of {source.location} (serial {state.serial}): it was changed "
        "after that copy was made, so copying would lose those changes; go on with "
        f"{target.location}, which surveyctl.yaml names, or copy it the other way"
    )


def _diverged(source: StateBackend, target: StateBackend, state: State, there: State) -> StateError:
    """The refusal for two copies that were both written after they parted, whichever serial
    is higher: copying either way loses the other's changes, so the way out is to record
    in one what only the other made."""
    return StateError(
        f"{target.location} (serial {there.serial}) holds changes that {source.location} "
        f"(serial {state.serial}) does not have, so copying would lose them (the two copies "
        "were written separately since they parted); go on with the copy surveyctl.yaml names "
        "and record in it what only the other one made (`surveyctl apply --adopt` records the "
        "surveys it finds on the service, `surveyctl state history` of each copy lists its "
        "changes), or remove that copy first if its changes are not needed"
    )


def _content(state: State) -> dict:
    """What a state holds, records and creates in flight, in the form both backends store."""
    data = state.to_json()
    return {"resources": data["resources"], "journal": data["journal"]}


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


def _call(store: StateBackend, method: str, *args: str) -> object:
    # Not part of the StateBackend protocol: a registered backend without them keeps no mark.
    found = getattr(store, method, None)
    return found(*args) if found is not None else None
