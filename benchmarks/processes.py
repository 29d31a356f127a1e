"""How the benchmarks start surveyctl as a process, as a user's machine would.

`command` is the installed console script next to this Python (the README's way), else
`python -m surveyctl`. `user_environment` is this environment less PYTHONDONTWRITEBYTECODE: a
user's Python keeps surveyctl's compiled modules, and a session that sets it would compile them
again in every run (0.1-0.2 s a start).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def command(*arguments: str) -> list[str]:
    """The command line of `surveyctl ARGUMENTS`."""
    script = Path(sys.executable).parent / "surveyctl"
    if script.exists():
        return [str(script), *arguments]
    return [sys.executable, "-m", "surveyctl", *arguments]


def user_environment(**extra: str) -> dict[str, str]:
    """This process's environment with `extra`, compiled modules kept."""
    environment = {**os.environ, **extra}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment
