"""A path as one word of a command that surveyctl suggests (`surveyctl apply FILE`), so that
the command copied into a shell names that file and nothing else."""

from __future__ import annotations

import shlex
from pathlib import Path


def path_word(path: Path | str) -> str:
    """`path` quoted for a POSIX shell; one that starts with "-" (a file named --format) gets
    "./" first, or the command would read it as an option."""
    text = str(path)
    if text.startswith("-"):
        text = f"./{text}"
    return shlex.quote(text)
