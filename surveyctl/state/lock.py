"""The lock of an environment's state: one writer at a time, and everyone can see who it is.

A command that writes state (`apply`, `import`, `state rm`, `state mv`...) holds the lock for
its whole run. The lock is a small JSON record beside the state file,
`<environment>.lock.json`, naming who holds it (user@host, pid), since when, for which
operation, and a lock ID. A second holder fails at once with those details, or polls until
`timeout` seconds have passed. `surveyctl force-unlock ID` removes the record, only when the ID
matches, so a stale ID cannot remove a newer holder's lock.

Why a record plus `filelock.FileLock`, rather than `SoftFileLock` alone: the record must
outlive a crash (like Terraform's lock, it is a statement that a write may have been left half
done, and a person decides when to clear it), so an OS lock, which the kernel drops with the
process, cannot be the lock itself. But reading the record, deciding and writing or deleting it
must be one atomic step, or two contenders (or a force-unlock racing a new holder) could both
"win". A `FileLock` on `<environment>.lock.guard` makes that step atomic across threads and
processes, and because it is an OS lock it can never be left stuck by a crash. `SoftFileLock`
gives the existence-marker half but has no compare-and-delete for an ID, no room for the
operation, and, in recent releases, silently breaks a dead holder's marker, where we want to
tell the user that the holder is gone and let them decide.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock

from surveyctl.errors import SurveyctlError
from surveyctl.files import write_atomically

POLL_SECONDS = 0.1


class LockError(SurveyctlError):
    """The lock cannot be taken or released as asked."""


class LockHeld(LockError):
    """Someone else holds the lock; the message names them and how to force-unlock."""

    def __init__(self, message: str, holder: LockInfo):
        super().__init__(message)
        self.holder = holder


@dataclass(frozen=True)
class LockInfo:
    """Who holds a lock: the record written in `<environment>.lock.json`."""

    id: str
    operation: str
    who: str
    host: str
    pid: int
    created: str

    @classmethod
    def mine(cls, operation: str) -> LockInfo:
        host = socket.gethostname()
        return cls(
            id=str(uuid.uuid4()),
            operation=operation,
            who=f"{_user()}@{host}",
            host=host,
            pid=os.getpid(),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )

    def holder_alive(self) -> bool | None:
        """Whether the holding process still runs; None when it ran on another host."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def describe(self) -> str:
        return (
            f"{self.who} (pid {self.pid}) since {self.created} for {self.operation!r} "
            f"(lock ID {self.id})"
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def lock_file(state_path: Path) -> Path:
    """The lock record of a state file: `<environment>.lock.json` beside `<environment>.json`."""
    state_path = Path(state_path)
    return state_path.with_name(f"{state_path.stem}.lock.json")


def read_lock(state_path: Path) -> LockInfo | None:
    """The current holder of the state file's lock, or None."""
    return _read(lock_file(state_path))


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
    ):
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + max(self.timeout, 0.0)
        while True:
            with _guard(self.path):
                holder = _read(self.path)
                if holder is None:
                    mine = LockInfo.mine(self.operation)
                    _write(self.path, mine)
                    self.info = mine
                    return mine
            if time.monotonic() >= deadline:
                raise LockHeld(self._held_message(holder), holder)
            time.sleep(POLL_SECONDS)

    def release(self) -> None:
        """Removes our record; a record someone else wrote after a force-unlock is left alone."""
        if self.info is None:
            return
        with _guard(self.path):
            holder = _read_or_none(self.path)
            if holder is not None and holder.id == self.info.id:
                self.path.unlink(missing_ok=True)
        self.info = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

    def _held_message(self, holder: LockInfo) -> str:
        env = f" of environment {self.environment!r}" if self.environment else ""
        command = "surveyctl" + (f" --env {self.environment}" if self.environment else "")
        waited = f" after waiting {self.timeout:g}s" if self.timeout > 0 else ""
        message = f"the state{env} is locked{waited} by {holder.describe()}"
        if holder.holder_alive() is False:
            return (
                f"{message}; that process is no longer running on this host, so it ended "
                "without releasing the lock (check the state with `surveyctl plan`), then run "
                f"`{command} force-unlock {holder.id}`"
            )
        return (
            f"{message}; wait for it (or pass --lock-timeout SECONDS), or if that process is "
            f"gone run `{command} force-unlock {holder.id}`"
        )


def force_unlock(state_path: Path, lock_id: str) -> LockInfo:
    """Removes the lock of a state file when its ID is `lock_id`; returns the removed record."""
    path = lock_file(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _guard(path):
        holder = _read(path)
        if holder is None:
            raise LockError(f"{path}: the state is not locked, so there is nothing to unlock")
        if holder.id != lock_id:
            raise LockError(
                f"{path}: the lock has ID {holder.id}, not {lock_id}; it is held by "
                f"{holder.describe()}"
            )
        path.unlink()
        return holder


def _guard(path: Path) -> FileLock:
    # A fresh instance per step: held only while a record is read, judged and written or removed.
    return FileLock(str(path.with_name(path.name.removesuffix(".json") + ".guard")))


def _read(path: Path) -> LockInfo | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        return LockInfo(
            id=str(data["id"]),
            operation=str(data["operation"]),
            who=str(data["who"]),
            host=str(data["host"]),
            pid=int(data["pid"]),
            created=str(data["created"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise LockError(
            f"{path}: the lock record is unreadable ({exc}); if no surveyctl command is running, "
            "delete that file"
        ) from exc


def _read_or_none(path: Path) -> LockInfo | None:
    try:
        return _read(path)
    except LockError:
        return None


def _write(path: Path, info: LockInfo) -> None:
    write_atomically(path, json.dumps(asdict(info), indent=2) + "\n")
