"""The one JSON writer of every command's JSON output (plans, apply reports, state, history,
validation, fieldwork, survey lists): the same layout and the same characters everywhere.

A module of its own, light to import: a command that prints a list need not load the plan
renderers.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any, sort_keys: bool = False, compact: bool = False) -> str:
    """`data` as JSON text, indented by two (`compact`: one line), non-ASCII characters as they
    are (UTF-8), without a final newline."""
    return json.dumps(data, indent=None if compact else 2, sort_keys=sort_keys, ensure_ascii=False)
