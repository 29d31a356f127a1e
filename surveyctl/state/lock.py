"""What the state lock of every backend shares: the holder's record (`LockInfo`), the errors,
and the sentences a person reads when a lock is held, waited for, interrupted or lost.

The file backend's lock is `surveyctl.state.file.lock`, PostgreSQL's is
`surveyctl.state.postgres.lock`; both say the same thing in the same words, from here.
"""

from __future__ import annotations

import getpass
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from surveyctl.errors import SurveyctlError
from surveyctl.processes import boot_id, process_running, process_start_time
from surveyctl.render.values import printable
from surveyctl.signals import describe, exit_code
from surveyctl.state.records import StateError

POLL_SECONDS = 0.1


class LockError(SurveyctlError):
    """The lock cannot be taken or released as asked."""


class LockLost(LockError, StateError):
    """A state write refused because the lock this command took is no longer its own (a
    `force-unlock`, or the database session holding it ended): it must not write to the state
    or the marketplace any more, since another command may hold the lock by now."""


def of_environment(environment: str | None) -> str:
    """` of environment 'staging'` for the messages of the lock, '' when none is named."""
    return f" of environment {environment!r}" if environment else ""


def lock_lost(
    environment: str | None, where: str, refused: bool = True, how: str | None = None
) -> LockLost:
    """The one sentence both backends say when their lock went while the command ran:
    `refused` by a state write, or found by a check before any (the applier's, before each
    marketplace write), when no write was refused and saying so would send a person looking
    for one. `how` is what ended it, when the backend knows (the server's words)."""
    env = of_environment(environment)
    write = "its state write was refused and " if refused else ""
    cause = (
        f": {how}"
        if how
        else " (a `force-unlock`, or the end of the session that held it: a database restart "
        "or a dropped connection)"
    )
    return LockLost(
        f"this command lost the state lock{env} in {where}{cause}, so {write}it starts no "
        "further change; run `surveyctl plan` to see what is left to do"
    )


class LockWaitInterrupted(LockError):
    """Ctrl-C, SIGTERM or SIGHUP while waiting for the lock another command holds: nothing
    was done and nothing is held, so the command ends there, with the exit code of a command
    the signal stopped (130, 143, 129) rather than click's "Aborted!" and 1."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def wait_interrupted(
    environment: str | None, holder: LockInfo | None, stop: KeyboardInterrupt
) -> LockWaitInterrupted:
    """The one sentence both backends say when a wait for their lock is interrupted."""
    env = of_environment(environment)
    held = f" (held by {holder.describe()})" if holder is not None else ""
    how = "interrupted" if describe(stop) == "Ctrl-C" else f"stopped by {describe(stop)}"
    return LockWaitInterrupted(
        f"{how} while waiting for the state lock{env}{held}; nothing was changed",
        exit_code(stop),
    )


def waiting_note(environment: str | None, holder: LockInfo | None, timeout: float) -> str:
    """What both backends say once when they start waiting for a lock someone holds: without
    it a command given --lock-timeout sat silent for up to that long."""
    env = of_environment(environment)
    held = f", held by {holder.describe()}" if holder is not None else ""
    return f"waiting up to {timeout:g}s for the state lock{env}{held}"


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
    started: int | None = None  # the holder's start time, clock ticks since boot
    boot_id: str | None = None  # the kernel boot the holder ran under

    @classmethod
    def mine(cls, operation: str, actor: str | None = None) -> LockInfo:
        """This process's record; `actor` is who the history names ($SURVEYCTL_ACTOR), which
        a lock message names too: a CI runner's `runner@host` says nobody whom to ask."""
        host = socket.gethostname()
        account = f"{_user()}@{host}"
        return cls(
            id=str(uuid.uuid4()),
            operation=operation,
            who=account if actor in (None, "", account) else f"{actor} on {account}",
            host=host,
            pid=os.getpid(),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            started=process_start_time(os.getpid()),
            boot_id=boot_id(),
        )

    def holder_alive(self) -> bool | None:
        """Whether the holding process still runs; None when it ran on another host."""
        if self.host != socket.gethostname():
            return None
        return process_running(self.pid, self.started, self.boot_id)

    def describe(self) -> str:
        # Printable: who is the OS user name ($USER may hold a line break) and the record is
        # read from a file or a table anyone with access may have written; an error message
        # keeps its line breaks.
        return printable(
            f"{self.who} (pid {self.pid}) since {self.created} for {self.operation!r} "
            f"(lock ID {self.id})"
        )


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
