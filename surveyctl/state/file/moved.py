"""The mark `state migrate` leaves on a state file it copied elsewhere: `<environment>.moved.json`.

`state migrate` leaves its source as it was, so after file -> PostgreSQL the old file still
reads as a whole state. Anyone who then plans or applies against it (the `state:` setting
removed, a second checkout) writes to a copy the team no longer reads, and the next migrate
would have to choose between the two. The mark says where the state went, at which serial, and
the command that copies it back; plan and apply refuse a marked state
(`surveyctl.state.placement`), and a migrate into the file removes the mark (the file is the
state again). The state file itself is not changed: its format stays what older surveyctl
versions read.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from surveyctl.files import os_error_message, write_atomically
from surveyctl.state.records import StateError


@dataclass(frozen=True)
class Moved:
    """Where a state file's state was copied to, and how to bring it back."""

    lineage: str
    serial: int
    moved_to: str  # the target's location, for people (never a password)
    copy_back: str  # the `surveyctl state migrate ...` that copies it back into the file
    at: str
    who: str


def moved_file(state_path: Path) -> Path:
    """The mark of a state file: `<environment>.moved.json` beside it."""
    return state_path.with_name(f"{state_path.stem}.moved.json")


def write_moved(state_path: Path, moved: Moved) -> None:
    path = moved_file(state_path)
    try:
        write_atomically(path, json.dumps(asdict(moved), indent=2) + "\n", durable=True)
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "mark the state as moved")) from exc


def read_moved(state_path: Path) -> Moved | None:
    """The mark of the state file at `state_path`, or None when it has none; StateError naming
    the file when it is not one surveyctl wrote."""
    path = moved_file(state_path)
    try:
        return Moved(**json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "read the state")) from exc
    except (ValueError, TypeError):  # not JSON, not UTF-8, not a mapping of these fields
        raise StateError(
            f"{path} is not the mark `surveyctl state migrate` leaves on a state it copied "
            "elsewhere; remove it"
        ) from None


def remove_moved(state_path: Path) -> None:
    path = moved_file(state_path)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "write the state")) from exc
