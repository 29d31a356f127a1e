"""The seam between surveyctl and where its state lives.

The reconciler, the importer and the state commands talk to a `StateBackend`; each backend
owns its storage AND its lock, because what makes a lock trustworthy (a record beside a file,
a server-side advisory lock) depends on where the state is. The file backend
(`surveyctl.state.file`) is the zero-setup default.

Every write is one `Change` with the next serial that touches only the addresses it names, so
its cost does not grow with the number of resources; `locked()` ends with `flush()`, which
makes the writes of the command part of what a user reads.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from surveyctl.state.changes import Change, HistoryEntry
from surveyctl.state.lock import LockInfo
from surveyctl.state.records import JournalEntry, Record, State
from surveyctl.state.status_changes import StatusChange, StatusSet


class StateBackend(Protocol):
    """One environment's state: read it, change it one resource at a time, lock it."""

    @property
    def location(self) -> str:
        """Where the state lives, for messages (a path, or a database and schema; never a
        password)."""
        ...

    def load(self, verify: bool = True) -> State:
        """The stored state, read afresh (an empty state with a new lineage if none yet);
        StateError for a state that cannot be used as it stands, unless `verify` is False
        (the state commands that repair it), which only notes the problem."""
        ...

    def current(self) -> State:
        """A copy of the state as last loaded or written (loads it on first use)."""
        ...

    def update(self, change: Callable[[State], None]) -> State:
        """Applies `change` to a copy of the state, stores what it changed with serial + 1,
        returns the new state."""
        ...

    def record(self, resource_address: str, record: Record) -> int:
        """Records a managed resource (after a create, an update or an import); returns the
        serial of the write."""
        ...

    def journal_create(self, resource_address: str, body: dict) -> JournalEntry:
        """Notes a create about to be sent; called BEFORE the POST."""
        ...

    def resolve_create(self, resource_address: str, record: Record | None) -> int:
        """Clears a journaled create: records what it made, or nothing if it was refused."""
        ...

    def forget(self, resource_address: str) -> int:
        """Drops a resource and any unresolved create of it."""
        ...

    def move(self, old: str, new: str) -> int:
        """Renames a resource, keeping its kind."""
        ...

    def history(self, resource_address: str | None = None) -> list[HistoryEntry]:
        """Every recorded change, or those of one address, oldest first."""
        ...

    def state_at(self, serial: int) -> State:
        """The state as it was right after the write with that serial."""
        ...

    def changes(self, address: str | None = None, upto: int | None = None) -> list[Change]:
        """The recorded writes in serial order (at least those touching `address`, up to
        serial `upto`), for history and migration."""
        ...

    def restore(self, state: State, changes: list[Change]) -> None:
        """Replaces the stored state and its history of writes (a migration; under the lock);
        the status changes recorded there are kept."""
        ...

    def record_status(self, command: str, what: StatusSet) -> StatusChange:
        """Adds a status set on the marketplace by `command` to the history, without the lock
        and without a new serial (see `surveyctl.state.status_changes`)."""
        ...

    def status_changes(self, address: str | None = None) -> list[StatusChange]:
        """The recorded status changes (at least those of `address`), as recorded."""
        ...

    def add_status_changes(self, changes: list[StatusChange]) -> int:
        """Adds those of `changes` the history lacks (a migration); how many."""
        ...

    def locked(self, operation: str, timeout: float = 0.0) -> AbstractContextManager[LockInfo]:
        """Holds the environment's lock for a block, and flushes on the way out; LockHeld
        names the holder otherwise."""
        ...

    def check_lock(self) -> None:
        """Returns while the lock this command took in `locked()` is still its own (or when it
        holds none); LockLost otherwise. The applier asks before each marketplace write."""
        ...

    def lock_holder(self) -> LockInfo | None:
        """Who holds the lock now, if anyone."""
        ...

    def force_unlock(self, lock_id: str) -> LockInfo:
        """Removes the lock when its ID is `lock_id`; returns who held it."""
        ...

    def flush(self) -> None:
        """Makes every write so far part of what a user reads (the file backend folds its
        change log into the JSON file); `locked()` calls it at the end of the block."""
        ...

    def close(self) -> None:
        """Releases the files or connections the backend holds open."""
        ...
