"""Where the state package says something worth knowing that is not an error (a lock taken
over from a dead process, a state loaded for repair despite a problem)."""

from __future__ import annotations

import sys
from collections.abc import Callable

Note = Callable[[str], None]


def note_to_stderr(message: str) -> None:
    """The default: one line on stderr (the core has no terminal of its own)."""
    print(f"surveyctl: {message}", file=sys.stderr, flush=True)
