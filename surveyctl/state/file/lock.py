"""The lock of the file backend: one writer of an environment's state at a time, and everyone
can see who it is.

A command that writes state (`apply`, `import`, `state rm`, `state mv`...) holds the lock for
its whole run. The lock is a small JSON record beside the state file,
`<environment>.lock.json`, naming who holds it (user@host, pid), since when, for which
operation, and a lock ID. A second holder fails at once with those details, or polls until
`timeout` seconds have passed. `surveyctl force-unlock ID` removes the record, only when the ID
matches, so a stale ID cannot remove a newer holder's lock.

A record whose holder ran on this host and whose process no longer exists is taken over, with
a note on stderr: the state loses nothing when its writer dies (every write is in the change
log, see `surveyctl.state.file.changelog`), so there is nothing for a person to decide. A holder on
another host cannot be checked from here; its lock still needs `force-unlock`. Whether the
holder still runs is `LockInfo.holder_alive` (its PID, start time and kernel boot: see
`surveyctl.processes`); the record is read and written by `surveyctl.state.file.lock_record`.

Why a record plus `filelock.FileLock`, rather than `SoftFileLock` alone: the record must say
who holds the lock and survive a crash long enough for the next command to tell a dead holder
from a live one on another host, so an OS lock, which the kernel drops with the process,
cannot be the lock itself. But reading the record, deciding and writing or deleting it must
be one atomic step, or two contenders (or a force-unlock racing a new holder) could both
"win". A `FileLock` on `<environment>.lock.guard` makes that step atomic across threads and
processes, and because it is an OS lock it can never be left stuck by a crash. `SoftFileLock`
gives the existence-marker half but has no compare-and-delete for an ID and no room for the
holder's details.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from surveyctl.files import os_error_message
from surveyctl.state.file.lock_record import read_record, write_record
from surveyctl.state.lock import (
    POLL_SECONDS,
    LockError,
    LockHeld,
    LockInfo,
    of_environment,
    wait_interrupted,
    waiting_note,
)
from surveyctl.state.notes import Note, note_to_stderr

if TYPE_CHECKING:  # loaded by the first lock taken: a plan, which takes none, skips 16 ms
    from filelock import FileLock


def lock_file(state_path: Path) -> Path:
    """The lock record of a state file: `<environment>.lock.json` beside `<environment>.json`."""
    state_path = Path(state_path)
    return state_path.with_name(f"{state_path.stem}.lock.json")


def read_lock(state_path: Path) -> LockInfo | None:
    """The current holder of the state file's lock, or None."""
    return read_record(lock_file(state_path))


class StateLock:
    """The lock of one state file, as a context manager.

    `StateLock(path, "apply", timeout=30, environment="staging")` waits up to 30 s for another
    holder; with timeout 0 a held lock fails at once. `environment` only makes the messages
    say which `--env` to pass to `surveyctl force-unlock`.
    """

    def __init__(
        self,
        state_path: Path,
        operation: str,
        *,
        timeout: float = 0.0,
        environment: str | None = None,
        on_note: Note = note_to_stderr,
        actor: str | None = None,
    ):
        self.on_note = on_note
        self.actor = actor
        self.state_path = Path(state_path)
        self.path = lock_file(self.state_path)
        self.operation = operation
        self.timeout = timeout
        self.environment = environment
        self.info: LockInfo | None = None

    def acquire(self) -> LockInfo:
        """Takes the lock, waiting up to `timeout` seconds; LockHeld when someone keeps it."""
        if self.info is not None:
            raise LockError(f"{self.path}: this lock is already held by this command")
        deadline = time.monotonic() + max(self.timeout, 0.0)
        waiting = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                with _guard(self.path):
                    holder = read_record(self.path)
                    if holder is None or holder.holder_alive() is False:
                        _remove_leftovers(self.path)
                        mine = LockInfo.mine(self.operation, self.actor)
                        write_record(self.path, mine)
                        self.info = mine
                        if holder is not None:
                            self.on_note(self._takeover_note(holder))
                        return mine
                if time.monotonic() >= deadline:
                    raise LockHeld(self._held_message(holder), holder)
                try:  # the note too: a Ctrl-C that answers it is still one during the wait
                    if not waiting:
                        waiting = True
                        self.on_note(waiting_note(self.environment, holder, self.timeout))
                    time.sleep(POLL_SECONDS)
                except KeyboardInterrupt as stop:
                    raise wait_interrupted(self.environment, holder, stop) from None
        except OSError as exc:
            raise _refused(exc, self.path, "take the state lock") from exc

    def release(self) -> None:
        """Removes our record; a record someone else wrote after a force-unlock is left alone."""
        if self.info is None:
            return
        try:
            with _guard(self.path):
                holder = _read_or_none(self.path)
                if holder is not None and holder.id == self.info.id:
                    self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise _refused(exc, self.path, "release the state lock") from exc
        finally:
            self.info = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def _held_message(self, holder: LockInfo) -> str:
        env = of_environment(self.environment)
        command = "surveyctl" + (f" --env {self.environment}" if self.environment else "")
        waited = f" after waiting {self.timeout:g}s" if self.timeout > 0 else ""
        elsewhere = f" on host {holder.host}" if holder.holder_alive() is None else ""
        return (
            f"the state{env} is locked{waited} by {holder.describe()}{elsewhere}; wait for it "
            f"(or pass --lock-timeout SECONDS), or if that process is gone run "
            f"`{command} force-unlock {holder.id}`"
        )

    def _takeover_note(self, holder: LockInfo) -> str:
        env = of_environment(self.environment)
        return (
            f"took over the state lock{env} left by {holder.describe()}: that process is no "
            "longer running on this host, and everything it wrote is in the state"
        )


def force_unlock(state_path: Path, lock_id: str) -> LockInfo:
    """Removes the lock of a state file when its ID is `lock_id`; returns the removed record."""
    path = lock_file(state_path)
    try:
        if not path.parent.is_dir():
            raise LockError(f"{path}: the state is not locked, so there is nothing to unlock")
        with _guard(path):
            holder = read_record(path)
            if holder is None:
                raise LockError(f"{path}: the state is not locked, so there is nothing to unlock")
            if holder.id != lock_id:
                raise LockError(
                    f"{path}: the lock has ID {holder.id}, not {lock_id}; it is held by "
                    f"{holder.describe()}"
                )
            if holder.holder_alive():
                # Its command would go on writing the state beside the next one's.
                raise LockError(
                    f"{path}: the lock is held by {holder.describe()}, which is still running "
                    f"on this host; let it finish or stop it (kill {holder.pid}): a command "
                    "that ends removes its lock, and one killed leaves a lock the next command "
                    "takes over"
                )
            path.unlink()
            return holder
    except OSError as exc:
        raise _refused(exc, path, "remove the state lock") from exc


def history_guard(state_path: Path) -> FileLock:
    """The guard of the lock record, held for an instant around each write of the history
    file (a status change is appended without the state lock, beside a compaction's append)."""
    return _guard(lock_file(state_path))


def _guard(path: Path) -> FileLock:
    # A fresh instance per step: held only while a record is read, judged and written or removed.
    from filelock import FileLock

    return FileLock(str(_guard_file(path)))


def _guard_file(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".json") + ".guard")


def _refused(exc: OSError, path: Path, action: str) -> LockError:
    """LockError naming the file the system refused: the guard's (a folder where it should
    be), or else the lock record's."""
    guard = _guard_file(path)
    return LockError(os_error_message(exc, guard if exc.filename == str(guard) else path, action))


def _read_or_none(path: Path) -> LockInfo | None:
    try:
        return read_record(path)
    except LockError:
        return None


def _remove_leftovers(lock_path: Path) -> None:
    """Removes the temporary lock records of commands killed mid-write: the caller holds the
    guard, under which alone they are written."""
    for leftover in lock_path.parent.glob(f".{lock_path.name}.*.tmp"):
        leftover.unlink(missing_ok=True)
