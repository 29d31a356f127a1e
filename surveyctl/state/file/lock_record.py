"""The record of the file backend's lock, `<environment>.lock.json`: written whole, and read
as a file anyone with access may have damaged.

A record that is not UTF-8, not JSON, not an object, without a field or with a field of
another type, or whose pid cannot be a process ID, is refused in one sentence naming the file
and what is wrong, and left for a person to delete: a lock is never taken from a holder that
may still run. Kept apart from the lock itself (`surveyctl.state.file.lock`), which decides
what to do with the holder a record names.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from surveyctl.files import file_in_the_way, os_error_message, write_atomically
from surveyctl.processes import is_process_id
from surveyctl.state.lock import LockError, LockInfo


def read_record(path: Path) -> LockInfo | None:
    """The holder the lock record at `path` names; None when there is no record."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        if file_in_the_way(path) is not None:
            raise LockError(
                os_error_message(NotADirectoryError(), path, "read the state lock")
            ) from None
        return None
    except UnicodeDecodeError:
        raise _unreadable(path, "it is not UTF-8 text") from None
    except OSError as exc:
        raise LockError(os_error_message(exc, path, "read the state lock")) from exc
    try:
        info = _lock_info(json.loads(text))
    except _Damaged as exc:
        raise _unreadable(path, str(exc)) from None
    except ValueError:  # not JSON
        raise _unreadable(path, "it is not JSON") from None
    # Not "no such process": a lock is never taken from a holder that may still run, so a
    # record that cannot say which process holds it is left to a person, as other damage.
    if not is_process_id(info.pid):
        raise _unreadable(path, f"pid {info.pid} is not a process ID")
    return info


class _Damaged(Exception):
    """What is wrong with a lock record that is JSON but not one surveyctl writes."""


def _lock_info(data: object) -> LockInfo:
    """The holder a lock record's JSON names; _Damaged saying what is wrong otherwise (the
    message quotes it, so it names the field, never Python's types)."""
    if not isinstance(data, dict):
        raise _Damaged(f"it holds {_json_kind(data)}, not an object with the holder's details")
    return LockInfo(
        id=_text(data, "id"),
        operation=_text(data, "operation"),
        who=_text(data, "who"),
        host=_text(data, "host"),
        pid=_number(data, "pid"),
        created=_text(data, "created"),
        started=None if data.get("started") is None else _number(data, "started"),
        boot_id=None if data.get("boot_id") is None else _text(data, "boot_id"),
    )


def _text(data: dict, field: str) -> str:
    if field not in data:
        raise _Damaged(f"it has no {field!r}")
    return str(data[field])


def _number(data: dict, field: str) -> int:
    if field not in data:
        raise _Damaged(f"it has no {field!r}")
    value = data[field]
    # bool is an int to Python, and int() would cut 1.5 or read "12": none is a number here.
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Damaged(f"its {field!r} is {_json_kind(value)}, not a whole number")
    return value


def _json_kind(value: object) -> str:
    """How a JSON value is named in a message: `null`, `true`, `a list`..."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds = ((dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "a JSON value")


def _unreadable(path: Path, reason: str) -> LockError:
    return LockError(
        f"{path}: the lock record is unreadable ({reason}); if no surveyctl command is "
        "running, delete that file"
    )


def write_record(path: Path, info: LockInfo) -> None:
    """Writes the record of `info` at `path`, whole or not at all."""
    write_atomically(path, json.dumps(asdict(info), indent=2) + "\n")
