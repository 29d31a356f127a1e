"""How a value from a body is shown in a plan: compact JSON, shortened when long."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

LIMIT = 120


def show(value: Any, limit: int | None = LIMIT) -> str:
    """`"text"`, `12`, `true`, `["111","112"]`; `(absent)` for a field that is not set.
    Longer than `limit` characters, it is cut with `...` (never with `limit=None`)."""
    if value is None:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


# Characters that a terminal or a pull-request comment acts on rather than shows: controls
# (ESC starts a colour, a screen clear or a window title; CR and LF break a line), format
# characters (right-to-left overrides that reorder what is read) and line separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})
# Format characters that belong to the text: the zero-width non-joiner and joiner, which
# Persian and Indic words and emoji sequences are written with; they reorder nothing.
_JOINERS = frozenset("\u200c\u200d")


def printable(text: str) -> str:
    """`text` with every character a terminal would act on written as an escape (`\\u001b`),
    as JSON writes it: names, ids and titles come from manifests in pull requests and from
    the service, and reach a terminal or a comment verbatim otherwise."""
    if text.isprintable():  # the usual case, checked in C
        return text
    return "".join(
        _escaped(c) if unicodedata.category(c) in _HIDDEN and c not in _JOINERS else c for c in text
    )


def printable_lines(text: str) -> str:
    """`text` made printable line by line: its own line breaks kept (a message of several
    lines), any other character a terminal acts on escaped. For what the CLI says on stderr:
    an error or a finding quotes file names, arguments and the service's words."""
    if text.isprintable():
        return text
    return "\n".join(printable(line) for line in text.split("\n"))


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
