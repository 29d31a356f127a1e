"""The file backend's append-only files: the change log and the history.

`<environment>.changes.jsonl` holds, one JSON line per write, the changes made since the state
file was last rewritten; reading the state means reading the JSON file and replaying the lines
whose serial is newer. At the end of a command the log is compacted: the state file is
rewritten once, the log's lines are appended to `<environment>.history.jsonl`, and the log is
removed. A write therefore appends one line (and fsyncs it) instead of rewriting the file.

The history also holds status changes (`surveyctl.state.status_changes`), appended by `status`
and `transactions set-status` without the state lock. Every append to the history, theirs and
a compaction's, and a migration's rewrite of it, holds the lock's guard (an OS lock, for an
instant), so no line is cut or lost by another writer's.

A process killed in the middle of an append leaves a last line without its newline: it was
never acknowledged to anyone, so readers ignore it and the next writer cuts it off. History
lines are only ever appended whole, but an append cut short is repeated by the next
compaction, so the history reader skips such a fragment and keeps one line per serial.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from pathlib import Path
from typing import BinaryIO

from surveyctl.files import append_lines, open_private, os_error_message
from surveyctl.state.changes import Change
from surveyctl.state.records import NewerState, StateError
from surveyctl.state.status_changes import StatusChange, from_history


def changes_file(state_path: Path) -> Path:
    """The change log of a state file: `<environment>.changes.jsonl` beside it."""
    return state_path.with_name(f"{state_path.stem}.changes.jsonl")


def history_file(state_path: Path) -> Path:
    """The history of a state file: `<environment>.history.jsonl` beside it."""
    return state_path.with_name(f"{state_path.stem}.history.jsonl")


def encode(change: Change) -> bytes:
    """One line of a change log or history file."""
    return encode_line(change.to_json())


def encode_line(line: dict) -> bytes:
    """A history line (`surveyctl.state.history_line`) as the files hold it: compact JSON,
    UTF-8 as it is (not escaped), ended by a newline; a write's and a status change's alike."""
    text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def read_changes(path: Path) -> tuple[list[Change], int]:
    """The whole lines of a change log and how many bytes they take (a torn last line, from
    an append cut short, is left out); StateError naming the file and line of a bad one."""
    data = _read_bytes(path)
    if data is None:
        return [], 0
    end = data.rfind(b"\n") + 1
    changes = []
    for number, line in enumerate(data[:end].splitlines(), start=1):
        try:
            changes.append(Change.from_json(json.loads(line), f"{path}:{number}"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise StateError(
                f"{path}:{number}: the state's change log is corrupt ({exc}); it holds writes "
                "not yet in the state file, so restore it from a backup rather than delete it"
            ) from exc
    return changes, end


def read_history_file(path: Path) -> tuple[list[Change], list[StatusChange]]:
    """The writes of a history file, one per serial, oldest first (see the module's note), and
    its status changes in the order they were appended (each is appended once, whole)."""
    data = _read_bytes(path)
    if data is None:
        return [], []
    by_serial: dict[tuple[str, int, str], Change] = {}
    statuses: list[StatusChange] = []
    for line in data.splitlines():
        try:
            parsed = json.loads(line)
            status = from_history(parsed, path)
            if status is not None:
                statuses.append(status)
                continue
            change = Change.from_json(parsed, path)
        except NewerState:
            raise  # a whole line, of a later surveyctl: left out, it would be lost in a migrate
        except (ValueError, UnicodeDecodeError, StateError):
            continue
        by_serial.setdefault((change.lineage, change.serial, change.command), change)
    return list(by_serial.values()), statuses


def encode_status(changes: list[StatusChange]) -> bytes:
    """The history lines of status changes."""
    return b"".join(encode_line(change.to_json()) for change in changes)


def append_to_history(path: Path, lines: bytes) -> None:
    """Appends whole lines to a history file, starting on a line of their own, and syncs."""
    try:
        append_lines(path, lines)
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "write the state history")) from exc


class ChangeLog:
    """The change log open for appending; one instance per store.

    `append` runs under the store's lock and only writes; `sync` runs after the store's lock is
    released and waits until the line is on disk. One fsync covers every line written before
    it, so writers that append at nearly the same time share it (a group commit) instead of
    queueing one fsync each behind the store's lock.
    """

    def __init__(self, path: Path):
        self.path = path
        self.size = 0  # bytes of whole lines, as this store knows the file
        self._handle: BinaryIO | None = None
        self._sync_lock = threading.Lock()
        self._generation = 0  # grows whenever the open file is let go (compacted, re-read)
        self._synced = 0

    def reset(self, size: int) -> None:
        """Forgets the open handle; the file now holds `size` bytes of whole lines."""
        self.close()
        self.size = size

    def append(self, line: bytes) -> tuple[int, int]:
        """Writes one line; returns what `sync` needs to wait for it. StateError (and the log
        as it was) when it fails."""
        try:
            _write_at(self._open(), line, self.size)
        except OSError as exc:
            self._cut_back()
            raise StateError(os_error_message(exc, self.path, "write the state")) from exc
        self.size += len(line)
        return self._generation, self.size

    def sync(self, written: tuple[int, int]) -> None:
        """Returns once the line that `append` answered `written` for is on disk."""
        generation, end = written
        with self._sync_lock:
            # A log let go since was compacted into the (fsynced) state file, or closed after
            # a sync of its own.
            if generation != self._generation or self._synced >= end or self._handle is None:
                return
            upto = self.size
            try:
                os.fsync(self._handle.fileno())
            except OSError as exc:
                raise StateError(os_error_message(exc, self.path, "write the state")) from exc
            self._synced = upto

    def moved_on(self) -> bool:
        """Whether another process wrote to the log since this store last read or wrote it."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return self.size != 0
        except OSError:
            return False  # the append will say what is wrong
        if self._handle is not None:
            opened = os.fstat(self._handle.fileno())
            return info.st_ino != opened.st_ino or info.st_size != self.size
        if info.st_size < self.size:
            return True
        # Beyond what was read there may be a torn line; a whole one means another writer.
        with open(self.path, "rb") as handle:
            handle.seek(self.size)
            return b"\n" in handle.read()

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self.size = 0

    def close(self) -> None:
        with self._sync_lock:
            if self._handle is not None:
                try:
                    os.fsync(self._handle.fileno())
                except OSError:
                    pass
                self._handle.close()
                self._handle = None
            self._generation += 1
            self._synced = 0

    def _open(self) -> BinaryIO:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_private(self.path, os.O_RDWR | os.O_CREAT)
            # Unbuffered: a line the disk refused must not wait in a buffer, to be flushed by
            # a later write or by close() (which would then fail, or record a failed write).
            self._handle = os.fdopen(fd, "r+b", buffering=0)
            # Cut a torn line a killed writer left, so that the next line starts cleanly.
            self._handle.truncate(self.size)
        return self._handle

    def _cut_back(self) -> None:
        try:
            if self._handle is not None:
                self._handle.truncate(self.size)
        except OSError:
            pass


def _write_at(handle: BinaryIO, data: bytes, offset: int) -> None:
    """Writes all of `data` at `offset` through an unbuffered handle; OSError when the file
    system takes only a part (a full disk takes what fits, then refuses the rest)."""
    handle.seek(offset)
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "read the state")) from exc
