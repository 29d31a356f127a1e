"""The one shape of what the history keeps: a write of the state and a status change alike.

A write (`surveyctl.state.changes.Change`) and a status set on the marketplace
(`surveyctl.state.status_changes.StatusChange`) are both kept as a history line: a line of the
file backend's `<environment>.history.jsonl`, or, one row per changed address, rows of the
PostgreSQL backend's `history` table. Both are made by `history_line` here, so the two cannot
drift apart: a surveyctl from before status changes reads every line as a write, and must find
a status change in a write's shape (it then refuses it as a field it does not know, rather than
show it wrongly or drop it in a migration).

The keys and their order are part of the file format: a state written by an earlier release is
read as before, and what is written now is what that release wrote.
"""

from __future__ import annotations

from typing import Any


def history_line(
    lineage: str, serial: int, at: str, who: str, command: str, changes: list[dict]
) -> dict[str, Any]:
    """A history line: after which serial of which state, when, who, in which command, and
    the addresses changed (each made by `line_change`)."""
    return {
        "lineage": lineage,
        "serial": serial,
        "at": at,
        "who": who,
        "command": command,
        "changes": changes,
    }


def line_change(address: str, before: dict | None, after: dict | None) -> dict[str, Any]:
    """One address of a history line: its entry before and after (None: none)."""
    return {"address": address, "before": before, "after": after}
