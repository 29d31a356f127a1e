"""The safety model every command that writes to the service or moves money follows.

- Output paths are checked before the first request (`check_output_path`): an adjustment
  submitted and then lost to a missing folder is money moved with no record of it.
- One approval rule for every write (`needs_question`): on a protected environment a person
  confirms on a terminal, or, without one, the environment is named with `--env` AND the write
  is approved explicitly (`--yes`, `--auto-approve`, a saved plan). Commands that always ask
  (apply, adjust) ask elsewhere too, unless approved.
- Sandbox-only commands refuse any other environment before sending anything
  (`require_sandbox`).
- An interrupted command finishes what is in flight, records it and says what was done
  (`Interrupts`): SIGINT, SIGTERM and SIGHUP stop new writes instead of killing the process.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from surveyctl import signals
from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message, replacing
from surveyctl.redacting import RedactingWriter

if TYPE_CHECKING:  # only for the type: the configuration loads YAML
    from surveyctl.config import Environment


class OutputPathError(SurveyctlError):
    """An output file named on the command line cannot be written."""


def check_output_path(path: Path, option: str, *, make_folders: bool = False) -> None:
    """Refuses an output path that cannot be written, before anything is sent.

    The folder is probed by creating (and removing) a file in it, which is what the write
    itself does (an atomic write creates a temporary file beside the target): so read-only
    mounts, permissions and pseudo file systems such as /proc are judged as the kernel judges
    them, also for root. With `make_folders` the missing folders will be created by the
    command, so the nearest existing one is probed.
    """
    shown = f"{option} {path}"
    try:
        is_folder = path.is_dir()
    except OSError as exc:  # pathlib answers False for a missing path, not for a name too long
        raise OutputPathError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    if is_folder:
        raise OutputPathError(f"cannot write {shown}: it is a folder, not a file")
    folder = path.parent
    if make_folders:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    if not folder.exists():
        raise OutputPathError(f"cannot write {shown}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise OutputPathError(f"cannot write {shown}: {folder} is not a folder")
    if path.exists() and not path.is_file():
        # A device or pipe (/dev/stdout, /dev/null) is written in place, never replaced.
        if os.access(path, os.W_OK):
            return
        raise OutputPathError(f"cannot write {shown}: permission denied")
    try:
        if path.exists():
            open(path, "ab").close()  # opened for writing, not changed
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".surveyctl-", suffix=".probe")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise OutputPathError(
            f"cannot write {shown}: a file cannot be written in {folder} ({reason})"
        ) from exc


class OutputFile:
    """A text file named on the command line and written as it goes (an export of many pages),
    replacing the file only when the command ends well (`files.replacing`): an export stopped
    half-way leaves no partial file, and an earlier file of that name as it was. What the file
    system refuses is one OutputPathError naming the option and the file, not an OSError the
    command cannot explain.

    Everything written passes `redact` (surveyctl.redacting): an export is a file people pass
    on, and a title or an answer of the service may repeat the API key. Its mode is 0600, as
    the temporary file it was written as (`files.replacing`): it holds the account's data.
    It is durable, flushed to disk before the command reports it written: an export of money
    data lost to a power cut would otherwise be an empty file that looks like no transactions."""

    def __init__(self, path: Path, option: str):
        self._path, self._option = path, option
        self._replacing = replacing(path, durable=True, newline="")
        self._file = RedactingWriter(self._guarded(self._replacing.__enter__))

    def write(self, text: str) -> int:
        return self._guarded(lambda: self._file.write(text))

    def flush(self) -> None:
        self._guarded(self._file.flush)

    def __getattr__(self, name: str):  # isatty, encoding...: what writers ask of a file
        return getattr(self._file, name)

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is None:
            try:
                self._guarded(self._file.close)  # what it held: the file's last characters
            except OutputPathError as error:
                exc_info = (OutputPathError, error, error.__traceback__)
                try:
                    self._replacing.__exit__(*exc_info)  # removes the written part
                except OSError:
                    pass  # a device refuses the rest again as it is closed: said already
                raise
        try:
            self._guarded(lambda: self._replacing.__exit__(*exc_info))
        except OutputPathError:
            if exc_info[0] is None:  # else the error already raised says more
                raise

    def _guarded(self, action):
        try:
            return action()
        except OSError as exc:
            where = f"write {self._option} {self._path}"
            raise OutputPathError(os_error_message(exc, self._path, where)) from None


class NotApproved(SurveyctlError):
    """A write that the approval rule does not let through."""


@dataclass(frozen=True)
class Approval:
    """How a write was approved on the command line.

    `approved`: explicitly (`--yes`, `--auto-approve`, a reviewed saved plan); `flag`: the
    option that approves it, for messages; `env_named`: the environment was named with
    `--env`; `can_ask`: there is a terminal to ask on.
    """

    approved: bool
    env_named: bool
    can_ask: bool
    flag: str = "--yes"


def needs_question(
    environment: Environment,
    action: str,
    approval: Approval,
    *,
    always_asks: bool = False,
    hint: str = "",
) -> bool:
    """Whether a person must confirm `action` ("move survey 10001 to live") before it is done.

    Raises NotApproved when the write may not happen at all: on a protected environment
    without a terminal, unless it is named with --env and approved explicitly; on another
    environment, for a command that `always_asks`, without a terminal and without approval.
    `hint` adds another way out to the latter refusal (", or apply a reviewed plan file").
    """
    name = environment.name
    if environment.protected:
        if approval.approved and approval.env_named:
            return False
        if approval.can_ask:
            return True
        missing = (
            f"name it with --env {name}"
            if approval.approved
            else f"name it with --env {name} and pass {approval.flag}"
        )
        raise NotApproved(
            f"environment {name!r} is protected and there is no terminal to ask: to {action}, "
            f"{missing}"
        )
    if approval.approved or not always_asks:
        return False
    if approval.can_ask:
        return True
    raise NotApproved(
        f"a confirmation is needed to {action} and there is no terminal to ask: confirm with "
        f"{approval.flag}{hint}"
    )


def is_sandbox(environment: Environment) -> bool:
    """The embedded sandbox, or a host on loopback, where `surveyctl sandbox serve` listens:
    a marketplace is never reached through a loopback address of one's own machine."""
    if environment.embedded:
        return True
    host = urlsplit(environment.host or "").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_sandbox(environment: Environment, command: str) -> None:
    """Refuses, before anything is sent, a sandbox-only command aimed at another environment."""
    if not is_sandbox(environment):
        raise SurveyctlError(
            f"environment {environment.name!r} is not a sandbox: {command} works only against "
            "the sandbox marketplace (the embedded one, or `surveyctl sandbox serve` on "
            "loopback)"
        )


class Interrupted(SurveyctlError):
    """A command stopped by a signal; `exit_code` is the shell's for the signal: 130 for
    SIGINT (Ctrl-C), 143 for SIGTERM (a cancelled CI job, a stopped container), 129 for SIGHUP
    (the terminal closed)."""

    def __init__(self, message: str, exit_code: int = 128 + signal.SIGINT):
        super().__init__(message)
        self.exit_code = exit_code


class Interrupts:
    """SIGINT (Ctrl-C), SIGTERM and SIGHUP while a command runs, in two phases.

    Before the writes begin a signal stops the command at once (`signals.Stopped`, a
    KeyboardInterrupt: nothing is in flight that could be lost). Once `finish_in_flight()` was
    called, a signal only sets `stop`: the writes in flight finish and are recorded, no new one
    starts, and the command reports what was and was not done. `on_signal(name, first)` is
    told of every signal; it runs inside the signal handler, so it must not use buffered
    output. After SIGHUP the terminal is gone: its streams are pointed at /dev/null so that
    the report cannot fail.

    Signal handlers belong to the main thread: elsewhere (a benchmark's worker thread) this is
    a no-op and `stop` is never set.
    """

    SIGNALS = signals.STOP_SIGNALS

    def __init__(self, on_signal: Callable[[str, bool], None] | None = None):
        self.stop = threading.Event()
        self._on_signal = on_signal
        self._finishing = False
        self._previous: dict[int, object] = {}
        self.received: int | None = None  # the first signal

    @property
    def exit_code(self) -> int:
        """128 + the first signal's number, as a shell reports a command it ended: 130 for
        SIGINT, 143 for SIGTERM, 129 for SIGHUP (130 when none came)."""
        return signals.exit_code(self.received)

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                if not signals.ignored(number):  # `nohup`: SIGHUP stays ignored
                    self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc_info) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def finish_in_flight(self) -> None:
        """From now on a signal stops new writes and lets those in flight finish."""
        self._finishing = True

    def _handle(self, number: int, frame) -> None:
        self.received = self.received or number
        signals.arrived(number)
        if not self._finishing:
            raise signals.Stopped(number)
        first = not self.stop.is_set()
        self.stop.set()
        if self._on_signal is not None:
            self._on_signal(signal.Signals(number).name, first)
