"""Standard streams that the shell closed (`>&-`, `2>&-`, `<&-`), settled before anything runs.

Python starts with `sys.stdout` (or stdin, stderr) set to None when its descriptor is closed:
click would then drop every line silently, and the first `isatty()` ends in a traceback. The
descriptor is also free, so the next file opened (the sandbox's database, a state file, a lock)
would take its number, and anything written to "standard output" would land in that file.

So each closed descriptor gets /dev/null. A closed stdin is no terminal, as `</dev/null`; a
closed stderr silences messages, as `2>/dev/null`, and the exit code still tells. A closed
stdout is refused before the command starts: the output is what was asked for, and a script
would otherwise read an exit code 0 from a command whose output went nowhere.

While a command runs, both output streams pass every write through `redact` (`redacting`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

STDIN, STDOUT, STDERR = 0, 1, 2

# One sentence on stderr, exit 1 (as any error of a command), when stdout is closed.
CLOSED_STDOUT = (
    "Error: standard output is closed (>&-), so nothing the command prints could be read; "
    "send it to /dev/null or a file instead (>/dev/null)\n"
)


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _fill(fd: int) -> None:
    """Puts /dev/null at descriptor `fd`, so no file opened later takes its number."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def settle() -> bool:
    """Gives every closed standard descriptor /dev/null and Python a stream for it; False
    when stdout was closed (the caller refuses to run), True otherwise."""
    closed = {fd: _closed(fd) for fd in (STDIN, STDOUT, STDERR)}
    for fd in (STDIN, STDOUT, STDERR):  # in order: os.open takes the lowest free number
        if closed[fd]:
            _fill(fd)
    if closed[STDIN] or sys.stdin is None:
        sys.stdin = open(STDIN, encoding="utf-8", closefd=False)
    if closed[STDERR] or sys.stderr is None:
        sys.stderr = open(
            STDERR, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
    if closed[STDOUT] or sys.stdout is None:
        sys.stdout = open(STDOUT, "w", encoding="utf-8", closefd=False)
        return False
    return True


@contextmanager
def redacting() -> Iterator[None]:
    """stdout and stderr wrapped for the block so that every write passes `redact`: whatever
    a command prints (tables, plans, progress lines, errors, the --debug log) can repeat text
    of the service, and a survey title may hold the key that a buyer once pasted into it.
    The streams are put back as they were at the end (a test runner calls commands in turn)."""
    from surveyctl.redacting import RedactingWriter

    before = sys.stdout, sys.stderr
    wrapped = [
        stream if isinstance(stream, RedactingWriter) else RedactingWriter(stream)
        for stream in before
    ]
    sys.stdout, sys.stderr = wrapped
    try:
        yield
    finally:
        for stream in wrapped:
            try:
                stream.close()  # what it held, as the output's end: redacted, never lost
            except (OSError, ValueError):
                pass  # the reader went away (a closed pipe): nothing more can reach it
        sys.stdout, sys.stderr = before
