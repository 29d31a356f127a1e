"""surveyctl as a real process, for the tests of what only a process shows: signals, pipes,
exit codes, kernel limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CREATE_DONE = ": create ok"  # a progress line of apply: one create made and recorded


def command(*args: str) -> list[str]:
    """`surveyctl ARGS` as this interpreter runs it."""
    return [sys.executable, "-m", "surveyctl", *args]


def environment(**extra: str) -> dict[str, str]:
    """This process's environment (with the test's monkeypatched variables), without colour,
    with `extra` set."""
    return {**os.environ, "NO_COLOR": "1", **extra}


def surveyctl(project: Path, *args: str, env: dict[str, str] | None = None, **popen):
    """`surveyctl ARGS` started in `project`, its stdout and stderr text pipes unless `popen`
    says otherwise (a pseudo-terminal, a function run in the child before it starts)."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **popen}
    return subprocess.Popen(command(*args), cwd=project, env=environment(**(env or {})), **options)


def signal_after_creates(process: subprocess.Popen, creates: int, number: int) -> tuple[str, str]:
    """Sends signal `number` once `creates` creates were reported done, then waits for the
    end; returns stdout and the whole stderr."""
    seen, lines = 0, []
    for line in process.stderr:
        lines.append(line)
        seen += CREATE_DONE in line
        if seen == creates:
            process.send_signal(number)
            break
    out, err = process.communicate(timeout=120)
    return out, "".join(lines) + err
