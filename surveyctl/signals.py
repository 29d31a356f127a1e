"""How surveyctl ends when it is asked to stop: Ctrl-C (SIGINT), SIGTERM (a cancelled CI job, a
stopped container) and SIGHUP (the terminal or the ssh session closed).

All three take the one way out that every command is built for: a KeyboardInterrupt (here
`Stopped`, which carries the signal), so the state lock is released, what a state write
recorded stays recorded, and the command says in one sentence what happened, exiting with the
shell's code for the signal (130, 143, 129). Without this SIGTERM and SIGHUP ended a command
where it stood, silently; `apply` and `adjust` turn any of them into "finish what is in flight"
(`surveyctl.safety.Interrupts`).

After a hang-up the terminal is gone and every write to it fails, which would turn finishing
and recording the writes in flight into a failure: the terminal's file descriptors are pointed
at /dev/null first (`detach_terminal`).
"""

from __future__ import annotations

import os
import signal
import sys

# SIGHUP does not exist on Windows.
STOP_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
_NAMES = {signal.SIGINT: "Ctrl-C"}
_TERMINAL_FDS: list[int] = []  # standard streams that were a terminal when the command began


class Stopped(KeyboardInterrupt):
    """A command stopped by a signal; `number` is the signal's."""

    def __init__(self, number: int = signal.SIGINT):
        super().__init__()
        self.number = number


def exit_code(stop: BaseException | int | None) -> int:
    """128 + the signal's number, as a shell reports a command a signal ended: 130 for Ctrl-C
    (also a plain KeyboardInterrupt, or no signal), 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + _number(stop)


def describe(stop: BaseException | int | None) -> str:
    """'Ctrl-C', 'SIGTERM' or 'SIGHUP', for messages."""
    number = _number(stop)
    return _NAMES.get(number) or signal.Signals(number).name


def _number(stop: BaseException | int | None) -> int:
    """The signal of a `Stopped` or a number; SIGINT for a plain KeyboardInterrupt or None."""
    return stop if isinstance(stop, int) else getattr(stop, "number", signal.SIGINT)


def stop_like_ctrl_c() -> None:
    """Called once as the command begins (main thread): SIGTERM and SIGHUP raise `Stopped`
    where Ctrl-C raises KeyboardInterrupt, unless they are ignored (`nohup`). Commands that
    handle signals themselves (apply's writes, `sandbox serve`) put their own handlers in
    place and restore these after."""
    _TERMINAL_FDS[:] = [fd for fd in (0, 1, 2) if _is_terminal(fd)]
    for number in STOP_SIGNALS:
        if number != signal.SIGINT and not ignored(number):
            signal.signal(number, _stop)


def tell_from_handler(text: str) -> None:
    """Writes `text` to stderr from inside a signal handler: straight to the file descriptor,
    because a buffered write could re-enter one the main thread was in the middle of. Nothing
    is written when stderr is not a file (a test runner's): the command's report says it all."""
    try:
        os.write(sys.stderr.fileno(), text.encode())
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        pass


def ignored(number: int) -> bool:
    """Whether the signal was set to be ignored before surveyctl started: `nohup` ignores
    SIGHUP so that the command outlives the terminal, and a shell ignores SIGINT for a
    background job; a handler of surveyctl's would undo what the user asked for."""
    return signal.getsignal(number) is signal.SIG_IGN


def _stop(number: int, frame) -> None:
    arrived(number)
    raise Stopped(number)


def arrived(number: int) -> None:
    """What every handler of a stop signal does first: after a hang-up, the terminal is gone,
    and its streams are pointed at /dev/null (`detach_terminal`)."""
    if number == getattr(signal, "SIGHUP", None):
        detach_terminal()


def detach_terminal() -> None:
    """Points the standard streams that were a terminal at /dev/null (after a hang-up: writing
    to a terminal that is gone fails with EIO, and reading from it ends). Safe inside a signal
    handler: file descriptors only, no buffered output."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    try:
        for fd in _TERMINAL_FDS:
            try:
                os.dup2(null, fd)
            except OSError:
                pass
    finally:
        os.close(null)


def _is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False
