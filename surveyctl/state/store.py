"""What both state backends share: the state in memory and the operations that change it.

A backend supplies how a state is read (`_read`) and how one write is stored (`_persist`);
this base turns every operation (record, journal a create, resolve it, forget, move, or any
`update`) into one `Change` with the next serial that names only the addresses it touches, so
the cost of a write does not grow with the number of resources in the state.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable

from surveyctl.memory import collector_paused
from surveyctl.resources import address, check_name, member_name, member_of, split_address
from surveyctl.state.changes import (
    BASELINE_COMMAND,
    Change,
    Edit,
    Entry,
    HistoryEntry,
    actor,
    apply_change,
    diff,
    entry_of,
    fold,
    history_entries,
)
from surveyctl.state.notes import Note, note_to_stderr
from surveyctl.state.records import (
    GroupRecord,
    JournalEntry,
    Record,
    State,
    StateError,
    SurveyPlace,
    SurveyRecord,
    fingerprint,
    utc_now,
)
from surveyctl.state.status_changes import StatusChange, StatusSet

# An operation's edits, computed from the state as it stands when the write is made.
Edits = Callable[[State], list[Edit]]

_KEEP = object()


class StoreBase:
    """The state of one environment in memory; subclasses store it.

    `load()` reads it afresh; every change goes through `_write`, which computes its edits
    from the current state under an in-process lock, stores them as one `Change` with serial
    + 1, and only then applies them in memory, so a failed write leaves both sides as they
    were. Records are frozen and shared between copies: replace a record, never change one in
    place, and treat `last_applied` bodies as read-only.
    """

    def __init__(self, environment: str | None = None, on_note: Note | None = None):
        self.environment = environment
        self._note = on_note or note_to_stderr
        self._mutex = threading.RLock()
        self._state: State | None = None
        self._operation: str | None = None
        self.actor = actor()  # who the history names; open_state sets the configured one

    # What a backend supplies.

    @property
    def location(self) -> str:
        raise NotImplementedError

    def _read(self) -> State:
        raise NotImplementedError

    def _persist(self, change: Change, state: State) -> object:
        """Stores `change`, made on top of `state`; StateError when it cannot (nothing stored).
        What it returns is handed to `_durable` once the in-process lock is released."""
        raise NotImplementedError

    def _durable(self, written: object) -> None:
        """Returns once the write `_persist` answered `written` for is safe from a crash."""

    def _written(self, state: State) -> None:
        """Called after a write landed, with the state it made."""

    def check_lock(self) -> None:
        """LockLost when the lock taken by `locked()` is no longer this command's."""

    # Reading.

    def load(self, verify: bool = True) -> State:
        """The stored state, read afresh (an empty state with a new lineage if none yet).

        A state that cannot be used as it stands (one survey under two names) is refused with
        StateError; with `verify` False, as the state commands that repair it load it, the
        problem is only noted."""
        with self._mutex:
            self._state = self._read()
            state = self._state.copy()
        problems = state.problems()
        if problems and verify:
            raise StateError(f"{self.location}: {problems[0]}")
        for problem in problems:
            self._note(f"{self.location}: {problem}")
        return state

    def current(self) -> State:
        """A copy of the state as last loaded or written (loads it on first use)."""
        with self._mutex:
            return self._loaded().copy()

    def _loaded(self) -> State:
        if self._state is None:
            self._state = self._read()
        return self._state

    # Writing.

    def update(self, change: Callable[[State], None]) -> State:
        """Applies `change` to a copy of the state, stores what it changed with serial + 1, and
        returns the new state. Nothing is stored when `change` changed nothing."""

        def edits(state: State) -> list[Edit]:
            new = state.copy()
            change(new)
            return diff(state, new)

        with self._mutex:
            self._write(edits)
            return self._loaded().copy()

    def record(self, resource_address: str, record: Record) -> int:
        """Records a managed resource (after a create, an update or an import); returns the
        serial of the write."""
        split_address(resource_address)
        record = copy.deepcopy(record)
        return self._write(lambda state: [_edit(state, resource_address, record=record)])

    def journal_create(self, resource_address: str, body: dict) -> JournalEntry:
        """Notes a create about to be sent; call it BEFORE the POST."""
        split_address(resource_address)
        entry = JournalEntry(resource_address, utc_now(), fingerprint(body))

        def edits(state: State) -> list[Edit]:
            if resource_address in state.journal:
                raise StateError(
                    f"a create of {resource_address} is already in flight since "
                    f"{state.journal[resource_address].started_at}"
                )
            return [_edit(state, resource_address, pending=entry)]

        self._write(edits)
        return entry

    def resolve_create(self, resource_address: str, record: Record | None) -> int:
        """Clears a journaled create: records the resource it made, or nothing if it failed."""
        record = copy.deepcopy(record)

        def edits(state: State) -> list[Edit]:
            if record is None:
                return [_edit(state, resource_address, pending=None)]
            return [_edit(state, resource_address, record=record, pending=None)]

        return self._write(edits)

    def forget(self, resource_address: str) -> int:
        """Drops a resource and any unresolved create of it; the marketplace is not touched."""

        def edits(state: State) -> list[Edit]:
            before = entry_of(state, resource_address)
            if before is None:
                raise StateError(f"{resource_address} is not in the state {self.location}")
            return [Edit(resource_address, before, None)]

        return self._write(edits)

    def move(self, old: str, new: str) -> int:
        """Renames a resource (after a manifest rename); the kind must stay the same."""
        return self.move_all([(old, new)])

    def move_all(self, moves: list[tuple[str, str]]) -> int:
        """Renames several resources in one write, so that either all of them move or none."""
        return self._write(lambda state: self._move_edits(state, moves))

    def move_program(self, old: str, new: str) -> tuple[list[tuple[str, str]], list[str]]:
        """Moves the members of program `old` (surveys, exclusion groups, creates in flight) to
        the same kind, market and wave of program `new`, in one write. Returns the moves, and
        the groups left where they are: those whose reference has the program's name in it."""
        check_name(old, "the program name")
        check_name(new, "the new program name")
        if old == new:
            raise StateError(f"program {old!r} already has that name")
        moves: list[tuple[str, str]] = []
        left: list[str] = []

        def edits(state: State) -> list[Edit]:
            members = _program_moves(state, old, new)
            if not members:
                raise StateError(f"no member of program {old!r} in the state {self.location}")
            # A group is its reference, which cannot change in place. One with the program's
            # name in it most likely comes from `{program}` in the exclusion `ref` (the
            # default), so the renamed program names a new group that the plan creates; moving
            # the old one there would make that plan refuse. If the guess is wrong, the plan
            # names the `state mv` still to run, so it errs on the side that costs a command.
            left[:] = [a for a, _ in members if _ref_names(state.resources.get(a), old)]
            moves[:] = [(a, b) for a, b in members if a not in left]
            return self._move_edits(state, moves)

        self._write(edits)
        return moves, left

    def _move_edits(self, state: State, moves: list[tuple[str, str]]) -> list[Edit]:
        """The edits of `moves`: each resource keeps its kind (and a survey its market), and no
        new address may be in the state already."""
        targets = [new for _, new in moves]
        if len(set(targets)) != len(targets):
            raise StateError("cannot move two resources to one address")
        made = []
        for old, new in moves:
            if split_address(old)[0] != split_address(new)[0]:
                raise StateError(f"cannot move {old} to {new}: a resource keeps its kind")
            before = entry_of(state, old)
            if before is None:
                raise StateError(f"{old} is not in the state {self.location}")
            if entry_of(state, new) is not None:
                raise StateError(f"{new} is already in the state {self.location}")
            _check_market(old, new, before.record)
            pending = before.pending
            if pending is not None:
                pending = JournalEntry(new, pending.started_at, pending.fingerprint)
            made += [Edit(old, before, None), Edit(new, None, Entry(before.record, pending))]
        return made

    def mark_moved(self, moved_to: str, copy_back: str) -> bool:
        """Marks this state as copied to `moved_to` by `state migrate`, so that plan and apply
        refuse to go on with it here (`copy_back` is the migrate that brings it back); False
        when the backend keeps no such mark. PostgreSQL keeps none: its tables have no place
        for it, and a new column would make every older surveyctl sharing the database refuse
        the tables."""
        return False

    def clear_moved(self) -> None:
        """Removes the mark of `mark_moved`: the state here is the current one again."""

    def _write(self, edits: Edits) -> int:
        with self._mutex:
            state = self._loaded()
            made = edits(state)
            if not made:
                return state.serial
            change = Change(
                state.lineage,
                state.serial + 1,
                utc_now(),
                self.actor,
                self._operation or "-",
                tuple(made),
            )
            written = self._persist(change, state)
            apply_change(state, change)
            self._written(state)
        # Outside the lock, so that writers arriving together share one wait for the disk.
        self._durable(written)
        return change.serial

    # Status set on the marketplace (surveyctl.state.status_changes).

    def record_status(self, command: str, what: StatusSet) -> StatusChange:
        """Adds `what`, set by `command` on the marketplace, to the history, after the serial
        the state is at now and under the survey's address when the state manages it. It takes
        no lock and writes no state (see the module of StatusChange); StateError (or a
        backend's error) when it cannot be recorded."""
        with collector_paused():  # the parse of a state makes many objects and no cycle
            place = self._survey_place(what.survey_id)
        change = StatusChange(
            place.lineage if place.serial else "",  # no state yet: its lineage is not made
            place.serial,
            utc_now(),
            self.actor,
            command,
            place.address,
            what,
        )
        self._append_status([change])
        return change

    def _survey_place(self, survey_id: int) -> SurveyPlace:
        """Where the stored state stands now, and where it manages survey `survey_id`, read
        afresh; a backend reads no more of the state than that takes (see `survey_place`).
        This one reads the whole state."""
        with self._mutex:
            state = self._read()
        return SurveyPlace(state.lineage, state.serial, _managed_address(state, survey_id))

    def _append_status(self, changes: list[StatusChange]) -> None:
        """Appends status changes to the history, without the state lock."""
        raise NotImplementedError

    def status_changes(self, address: str | None = None) -> list[StatusChange]:
        """The recorded status changes in the order they were recorded: at least those filed
        under `address` (all if None)."""
        raise NotImplementedError

    def add_status_changes(self, changes: list[StatusChange]) -> int:
        """Adds those of `changes` the history lacks (a migration carries them); how many."""
        known = {change.key for change in self.status_changes()}
        missing = [change for change in changes if change.key not in known]
        if missing:
            self._append_status(missing)
        return len(missing)

    # History.

    def changes(self, address: str | None = None, upto: int | None = None) -> list[Change]:
        """The recorded changes in serial order: at least those that touch `address` (all if
        None), up to `upto` (all if None)."""
        raise NotImplementedError

    def restore(self, state: State, changes: list[Change]) -> None:
        """Replaces the stored state by `state` and its history by `changes` (a migration)."""
        raise NotImplementedError

    def history(self, resource_address: str | None = None) -> list[HistoryEntry]:
        """Every recorded change of this state's lineage (of one address), oldest first, with
        the status changes of this lineage, or made before the state had one, each after the
        write it followed."""
        lineage = self.current().lineage
        writes, statuses = self._history_records(resource_address)
        entries = []
        for change in writes:
            if change.lineage != lineage or change.command == BASELINE_COMMAND:
                continue
            entries.extend(
                entry
                for entry in history_entries(change)
                if resource_address is None or entry.address == resource_address
            )
        entries += [
            HistoryEntry.of_status(change)
            for change in statuses
            if change.lineage in ("", lineage)
            and (resource_address is None or change.address == resource_address)
        ]
        # Stable: the writes of a serial in their order, then what followed it, as recorded.
        return sorted(entries, key=lambda entry: (entry.serial, entry.status is not None))

    def _history_records(
        self, address: str | None = None
    ) -> tuple[list[Change], list[StatusChange]]:
        """The writes (`changes`) and the status changes (`status_changes`) of the history, at
        least those of `address`; a backend that keeps both in one place reads it once."""
        return self.changes(address), self.status_changes(address)

    def state_at(self, serial: int) -> State:
        """The state as it was right after the write with `serial`."""
        current = self.current()
        if serial == current.serial:
            return current
        if not 0 <= serial < current.serial:
            raise StateError(
                f"the state {self.location} has no serial {serial}; it is at {current.serial}"
            )
        return fold(self.changes(upto=serial), serial, current.lineage, self.location)

    # Lifecycle.

    def flush(self) -> None:
        """Makes every write so far part of what a user reads (nothing to do by default)."""

    def close(self) -> None:
        """Releases what the backend holds open (files, connections)."""


def _managed_address(state: State, survey_id: int) -> str | None:
    """The address under which `state` manages survey `survey_id`, if it does."""
    for resource_address in sorted(state.resources):
        record = state.resources[resource_address]
        if isinstance(record, SurveyRecord) and record.ps_survey_id == survey_id:
            return resource_address
    return None


def _program_moves(state: State, old: str, new: str) -> list[tuple[str, str]]:
    """Every member of program `old` in `state`, with its address under program `new`."""
    moves = []
    for resource_address in state.addresses():
        kind, name = split_address(resource_address)
        member = member_of(name)
        if member is not None and member.program == old:
            moves.append(
                (resource_address, address(kind, member_name(new, member.market, member.wave)))
            )
    return moves


def _ref_names(record: object, program: str) -> bool:
    return isinstance(record, GroupRecord) and program in record.buyer_surveygroup_ref


def _check_market(old: str, new: str, record: object) -> None:
    """A survey moves only to a member of its own market: a member's market is its survey's
    locale, so under another market's name the next apply would change the locale of a survey
    that may be in the field. The locale is the one last applied (an imported survey without a
    body is not checked); groups have none."""
    member = member_of(split_address(new)[1])
    if member is None or not isinstance(record, SurveyRecord) or not record.last_applied:
        return
    locale = record.last_applied.get("survey_localization")
    if locale and locale != member.market:
        raise StateError(
            f"cannot move {old} to {new}: its survey was applied in locale {locale}, while a "
            f"member of market {member.market} is a survey in {member.market}, so the next "
            f"apply would change that survey's locale; move it to a member of market {locale}"
        )


def _edit(state: State, address: str, record=_KEEP, pending=_KEEP) -> Edit:
    before = entry_of(state, address)
    old = before or Entry()
    after = Entry(
        old.record if record is _KEEP else record,
        old.pending if pending is _KEEP else pending,
    )
    return Edit(address, before, None if after.record is None and after.pending is None else after)
