"""The lock of an environment's state: one writer at a time, and everyone can see who it is.

A command that writes state (`apply`, `import`, `state rm`, `state mv`...) holds the lock for
its whole run. The lock is a small JSON record beside the state file,
`<environment>.lock.json`, naming who holds it (user@host, pid), since when, for which
operation, and a lock ID. A second holder fails at once with those details, or polls until
`timeout` seconds have passed. `surveyctl force-unlock ID` removes the record, only when the ID
matches, so a stale ID cannot remove a newer holder's lock.

A record whose holder ran on this host and whose process no longer exists is taken over, with
a note on stderr: the state loses nothing when its writer dies (every write is in the change
log, see `surveyctl.state.file.changelog`), so there is nothing for a person to decide. A holder on
another host cannot be checked from here; its lock still needs `force-unlock`.

A PID alone does not name a process: a container restarted with the same host name starts a
new PID namespace, where the dead holder's PID soon belongs to another process (often the
next surveyctl itself). So the record also keeps the holder's start time (clock ticks since
boot, from /proc) and the kernel's boot ID: a live process with the holder's PID but another
start time, or a record from an earlier boot, is not the holder, and its lock is taken over.
Where /proc is absent, or in records written before these fields, the PID alone decides.

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

import getpass
import json
import os
import socket
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from surveyctl.errors import SurveyctlError
from surveyctl.files import file_in_the_way, os_error_message, write_atomically
from surveyctl.render.values import printable
from surveyctl.signals import describe, exit_code
from surveyctl.state.notes import Note, note_to_stderr
from surveyctl.state.records import StateError

if TYPE_CHECKING:  # loaded by the first lock taken: a plan, which takes none, skips 16 ms
    from filelock import FileLock

POLL_SECONDS = 0.1
# A pid_t is a C int; os.kill overflows past it, and 0 or below names a process group, which
# would answer for a holder that is no process at all.
_PID_MAX = 2**31 - 1


def is_process_id(pid: int) -> bool:
    """Whether `pid` can be the ID of one process, and so be asked whether it runs."""
    return 1 <= pid <= _PID_MAX


class LockError(SurveyctlError):
    """The lock cannot be taken or released as asked."""


class LockLost(LockError, StateError):
    """A state write refused because the lock this command took is no longer its own (a
    `force-unlock`, or the database session holding it ended): it must not write to the state
    or the marketplace any more, since another command may hold the lock by now."""


def of_environment(environment: str | None) -> str:
    """` of environment 'staging'` for the messages of the lock, '' when none is named."""
    return f" of environment {environment!r}" if environment else ""


def lock_lost(environment: str | None, where: str, refused: bool = True) -> LockLost:
    """The one sentence both backends say when their lock went while the command ran:
    `refused` by a state write, or found by a check before any (the applier's, before each
    marketplace write), when no write was refused and saying so would send a person looking
    for one."""
    env = of_environment(environment)
    write = "its state write was refused and " if refused else ""
    return LockLost(
        f"this command lost the state lock{env} in {where} (a `force-unlock`, or the end of "
        "the session that held it: a database restart or a dropped connection), so "
        f"{write}it starts no further change; run `surveyctl plan` to see what is left to do"
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


def process_running(pid: int, started: int | None, boot: str | None) -> bool:
    """Whether the process of this host that had `pid`, start time `started` and ran under
    kernel boot `boot` still runs (None for what was not recorded: not checked)."""
    if boot is not None and boot_id() not in (None, boot):
        return False  # the host was restarted since: nothing of that boot still runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if _zombie(pid):
        return False  # killed, its exit not yet collected by its parent: it runs no more
    if started is not None:
        now = process_start_time(pid)
        if now is not None and now != started:
            return False  # the PID was reused by another process
    return True


def _stat_fields(pid: int) -> list[str]:
    """The fields of `/proc/PID/stat` after the command name, field 3 (the state) first; empty
    where that cannot be read (no such process, or no /proc). The command name (field 2) is in
    parentheses and may hold spaces and parentheses: the fields start after the last `)`."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return text[text.rindex(")") + 2 :].split()
    except (OSError, ValueError):
        return []


def _zombie(pid: int) -> bool:
    """Whether process `pid` has ended and waits for its parent to collect it (Linux /proc,
    state Z); False where that cannot be read."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] == "Z"


def process_start_time(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux /proc, field 22); None
    elsewhere."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19])
    except (ValueError, IndexError):
        return None


def boot_id() -> str | None:
    """The ID of the running kernel boot (Linux); None elsewhere."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return None


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
                    holder = _read(self.path)
                    if holder is None or holder.holder_alive() is False:
                        _remove_leftovers(self.path)
                        mine = LockInfo.mine(self.operation, self.actor)
                        _write(self.path, mine)
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
            holder = _read(path)
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


def _read(path: Path) -> LockInfo | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        if file_in_the_way(path) is not None:
            raise LockError(
                os_error_message(NotADirectoryError(), path, "read the state lock")
            ) from None
        return None
    except UnicodeDecodeError:
        raise _unreadable(path, "it is not UTF-8 text") from None
    except OSError as exc:
        raise LockError(os_error_message(exc, path, "read the state lock")) from exc
    try:
        info = _lock_info(json.loads(text))
    except _Damaged as exc:
        raise _unreadable(path, str(exc)) from None
    except ValueError:  # not JSON
        raise _unreadable(path, "it is not JSON") from None
    # Not "no such process": a lock is never taken from a holder that may still run, so a
    # record that cannot say which process holds it is left to a person, as other damage.
    if not is_process_id(info.pid):
        raise _unreadable(path, f"pid {info.pid} is not a process ID")
    return info


class _Damaged(Exception):
    """What is wrong with a lock record that is JSON but not one surveyctl writes."""


def _lock_info(data: object) -> LockInfo:
    """The holder a lock record's JSON names; _Damaged saying what is wrong otherwise (the
    message quotes it, so it names the field, never Python's types)."""
    if not isinstance(data, dict):
        raise _Damaged(f"it holds {_json_kind(data)}, not an object with the holder's details")
    return LockInfo(
        id=_text(data, "id"),
        operation=_text(data, "operation"),
        who=_text(data, "who"),
        host=_text(data, "host"),
        pid=_number(data, "pid"),
        created=_text(data, "created"),
        started=None if data.get("started") is None else _number(data, "started"),
        boot_id=None if data.get("boot_id") is None else _text(data, "boot_id"),
    )


def _text(data: dict, field: str) -> str:
    if field not in data:
        raise _Damaged(f"it has no {field!r}")
    return str(data[field])


def _number(data: dict, field: str) -> int:
    if field not in data:
        raise _Damaged(f"it has no {field!r}")
    value = data[field]
    # bool is an int to Python, and int() would cut 1.5 or read "12": none is a number here.
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Damaged(f"its {field!r} is {_json_kind(value)}, not a whole number")
    return value


def _json_kind(value: object) -> str:
    """How a JSON value is named in a message: `null`, `true`, `a list`..."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds = ((dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "a JSON value")


def _unreadable(path: Path, reason: str) -> LockError:
    return LockError(
        f"{path}: the lock record is unreadable ({reason}); if no surveyctl command is "
        "running, delete that file"
    )


def _read_or_none(path: Path) -> LockInfo | None:
    try:
        return _read(path)
    except LockError:
        return None


def _remove_leftovers(lock_path: Path) -> None:
    """Removes the temporary lock records of commands killed mid-write: the caller holds the
    guard, under which alone they are written."""
    for leftover in lock_path.parent.glob(f".{lock_path.name}.*.tmp"):
        leftover.unlink(missing_ok=True)


def _write(path: Path, info: LockInfo) -> None:
    write_atomically(path, json.dumps(asdict(info), indent=2) + "\n")
