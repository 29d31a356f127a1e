"""The file backend: the state in one plain JSON file, a change log beside it, and its lock.

See `surveyctl.state` for the file format, `surveyctl.state.file.changelog` for the change log and
the history, and `surveyctl.state.file.lock` for the lock.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson

from surveyctl.files import fsync_directory, os_error_message, write_atomically
from surveyctl.state.changes import (
    BASELINE_COMMAND,
    Change,
    Edit,
    apply_change,
    entry_of,
)
from surveyctl.state.file.changelog import (
    ChangeLog,
    append_to_history,
    changes_file,
    encode,
    encode_status,
    history_file,
    read_changes,
    read_history_file,
)
from surveyctl.state.file.lock import StateLock, force_unlock, history_guard, read_lock
from surveyctl.state.file.moved import Moved, remove_moved, write_moved
from surveyctl.state.lock import LockError, LockInfo, LockLost, lock_lost
from surveyctl.state.notes import Note
from surveyctl.state.records import (
    Record,
    State,
    StateError,
    SurveyPlace,
    survey_place,
    utc_now,
)
from surveyctl.state.status_changes import StatusChange
from surveyctl.state.store import StoreBase

# The change log is folded into the state file at the end of every command that holds the
# lock, and also whenever it grows past the state file (and this floor), so that a long-lived
# writer without a lock reads and writes in amortised O(1) per change too.
COMPACT_FLOOR_BYTES = 1 << 20

# A corrupt state file is not the end: the surveys exist on the service, and the manifests
# say which are managed (docs/state.md, "Rebuilding a lost state").
_CORRUPT_WAY_OUT = (
    "restore it from a backup, or move it aside and run `surveyctl state rebuild`, which "
    "records again what exists on the service for the manifests"
)


_T = TypeVar("_T")


class FileStateStore(StoreBase):
    """The file backend: `<environment>.json`, plus `<environment>.changes.jsonl` while a
    command writes, plus `<environment>.history.jsonl`.

    A write appends one line to the change log and fsyncs it; the JSON file is rewritten once,
    when the command that holds the lock ends (`flush()`). Whoever reads the state reads the
    JSON file and replays the newer lines of the log, so a command killed at any point loses
    nothing it wrote, and the next command that takes the lock folds the log in.
    """

    def __init__(self, path: Path, environment: str | None = None, on_note: Note | None = None):
        super().__init__(environment, on_note)
        self.path = Path(path)
        self._log = ChangeLog(changes_file(self.path))
        self._history = history_file(self.path)
        self._encoded: dict[str, tuple[Record, str]] = {}
        self._snapshot_id: tuple[int, int, int] | None = None  # the JSON file as last seen
        self._snapshot_bytes = 0
        self._snapshot_serial = 0
        self._lock_id: str | None = None  # the lock this command holds, checked by each write

    @property
    def location(self) -> str:
        return str(self.path)

    # The lock.

    @contextmanager
    def locked(self, operation: str, timeout: float = 0.0) -> Iterator[LockInfo]:
        """Holds `<environment>.lock.json` beside the state file for the block; on the way out
        the writes of the block are compacted into the JSON file."""
        with StateLock(
            self.path,
            operation,
            timeout=timeout,
            environment=self.environment,
            on_note=self._note,
            actor=self.actor,
        ) as lock:
            assert lock.info is not None
            with self._mutex:
                self._remove_leftovers()
                self._state = None  # read afresh now that nobody else writes
                self._operation = operation
                self._lock_id = lock.info.id
            try:
                yield lock.info
            except BaseException:
                self._flush_quietly()
                raise
            else:
                self._flush_at_end()
            finally:
                self._operation = None
                self._lock_id = None
                self._log.close()

    def _remove_leftovers(self) -> None:
        """Removes the temporary files of state writes that were interrupted (a command killed
        while it rewrote the JSON file or restored the history); called under the lock, when
        no other command can be writing them."""
        patterns = (f".{self.path.name}.*.tmp", f".{self._history.name}.migrating")
        for pattern in patterns:
            for leftover in self.path.parent.glob(pattern):
                leftover.unlink(missing_ok=True)

    def lock_holder(self) -> LockInfo | None:
        return read_lock(self.path)

    def check_lock(self) -> None:
        self._check_lock(refused=False)

    def _check_lock(self, refused: bool) -> None:
        """LockLost when the lock is no longer this command's; `refused` when a write asks."""
        if self._lock_id is None:
            return
        holder = read_lock(self.path)
        if holder is None or holder.id != self._lock_id:
            raise lock_lost(self.environment, str(self.path), refused)

    def force_unlock(self, lock_id: str) -> LockInfo:
        return force_unlock(self.path, lock_id)

    # Reading.

    def _stable(self, read: Callable[[], _T]) -> tuple[_T, tuple[int, int, int] | None]:
        """`read()` of the JSON file and the log, with the JSON file's identity it was made
        under. A compaction by another process between reading the JSON file and the log would
        make the pair disagree; the JSON file's identity tells, and the read is repeated."""
        for _ in range(10):
            seen = _file_id(self.path)
            result = read()
            if _file_id(self.path) == seen:
                return result, seen
        raise StateError(f"{self.path}: the state file keeps changing while it is read")

    def _read(self) -> State:
        (state, (changes, size)), seen = self._stable(
            lambda: (self._read_snapshot(), read_changes(self._log.path))
        )
        self._snapshot_id = seen
        self._snapshot_serial = state.serial
        self._log.reset(size)
        if not seen and changes:
            state = State(lineage=changes[0].lineage)
        for number, change in enumerate(changes, start=1):
            if change.lineage == state.lineage and change.serial <= state.serial:
                continue  # compacted already, by a command stopped before removing the log
            if change.lineage != state.lineage or change.serial != state.serial + 1:
                raise StateError(
                    f"{self._log.path}:{number}: this change log does not continue the state "
                    f"file {self.path} (it holds serial {change.serial} of lineage "
                    f"{change.lineage}, the file is at serial {state.serial} of "
                    f"{state.lineage}); if the state file was replaced on purpose, remove "
                    "the change log"
                )
            apply_change(state, change)
        return state

    def _survey_place(self, survey_id: int) -> SurveyPlace:
        """Parses the JSON file without checking each record (see `survey_place`); while the
        change log holds writes not folded into it yet (a command writing now), it reads the
        whole state, as every reader does, to replay them."""
        with self._mutex:
            (parsed, logged), _ = self._stable(
                lambda: (self._parsed_snapshot(), _holds_a_line(self._log.path))
            )
        if logged:
            return super()._survey_place(survey_id)
        if parsed is None:
            return SurveyPlace("", 0, None)
        return survey_place(parsed[0], survey_id, self.path)

    def _read_snapshot(self) -> State:
        parsed = self._parsed_snapshot()
        if parsed is None:
            self._snapshot_bytes = 0
            return State.empty()
        data, self._snapshot_bytes = parsed
        return State.from_json(data, self.path)

    def _parsed_snapshot(self) -> tuple[Any, int] | None:
        """The JSON file parsed, and its length in characters; None when there is none."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateError(os_error_message(exc, self.path, "read the state file")) from exc
        except UnicodeDecodeError as exc:
            raise StateError(
                f"{self.path}: the state file is corrupt (not UTF-8 text: byte {exc.start}); "
                f"{_CORRUPT_WAY_OUT}"
            ) from exc
        try:
            # orjson: the state of a thousand surveys (3.4 MB) parses about twice as fast, and
            # a plan reads it before its first request.
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise StateError(
                f"{self.path}:{exc.lineno}: the state file is corrupt (not valid JSON: {exc.msg}); "
                f"{_CORRUPT_WAY_OUT}"
            ) from exc
        return data, len(text)

    # Writing.

    def _persist(self, change: Change, state: State) -> tuple[int, int]:
        self._check_lock(refused=True)  # after a force-unlock another command may be the writer
        if self._log.moved_on() or _file_id(self.path) != self._snapshot_id:
            raise StateError(
                f"{self.path}: the state was changed by another process since this command "
                f"read it (this command is at serial {state.serial}); the write was refused so "
                "that neither change is lost: run the command again"
            )
        return self._log.append(encode(change))

    def _durable(self, written: tuple[int, int]) -> None:
        self._log.sync(written)

    def _written(self, state: State) -> None:
        if self._log.size > max(self._snapshot_bytes, COMPACT_FLOOR_BYTES):
            self._compact(state)

    def flush(self) -> None:
        """Folds the change log into the JSON file (see `surveyctl.state.file.changelog`)."""
        with self._mutex:
            state = self._loaded()
            if self._log.size or self._log.path.exists():
                self._compact(state)

    def _flush_if_locked(self) -> None:
        """Folds the log in unless the lock went (force-unlock): the JSON file then belongs to
        whoever holds the lock now, and the next holder folds in what this command wrote."""
        try:
            self.check_lock()
        except LockLost:
            return
        self.flush()

    def _flush_at_end(self) -> None:
        """Folds the log in at the end of a command that went well. Its writes are on disk in
        the log already, so a fold that fails (a full disk, a file that cannot be replaced)
        loses nothing: the next reader replays the log. It is a note, not the failure of a
        command whose work is done and recorded (an apply would lose its report to it)."""
        try:
            self._flush_if_locked()
        except StateError as exc:
            self._note(
                f"{exc}; every write of this command is kept in {self._log.path}, and the "
                f"next command folds it into {self.path.name}"
            )

    def _flush_quietly(self) -> None:
        # On the way out of a failed command: whatever cannot be compacted now stays in the
        # log, which the next reader replays, so the original error is the one to report.
        # The files are read afresh first: a Ctrl-C between a line's append and its use in
        # memory leaves the memory without a change the log holds, and folding the memory in
        # would lose it.
        try:
            with self._mutex:
                self._state = None
            self._flush_if_locked()
        except (StateError, LockError):
            pass

    def _compact(self, state: State) -> None:
        logged = self._log_lines()
        if logged and not self._history.exists() and self._snapshot_serial > 0:
            logged = self._baseline() + logged
        self._write_snapshot(state)
        if logged:
            self._add_to_history(logged)
        self._log.remove()
        fsync_directory(self.path.parent)

    def _add_to_history(self, lines: bytes) -> None:
        """Appends whole lines to the history, under the guard that status changes, appended
        without the state lock, take as well."""
        try:
            with history_guard(self.path):
                append_to_history(self._history, lines)
        except OSError as exc:  # the guard's file
            raise StateError(
                os_error_message(exc, self._history, "write the state history")
            ) from exc

    def _append_status(self, changes: list[StatusChange]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(
                os_error_message(exc, self._history, "write the state history")
            ) from exc
        self._add_to_history(encode_status(changes))

    def status_changes(self, address: str | None = None) -> list[StatusChange]:
        return read_history_file(self._history)[1]

    def _log_lines(self) -> bytes:
        try:
            data = self._log.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise StateError(os_error_message(exc, self._log.path, "read the state")) from exc
        return data[: data.rfind(b"\n") + 1]

    def _baseline(self) -> bytes:
        """The state file as it stood before the first compaction of a state without history,
        as one change, so that `state_at` has a starting point."""
        before = self._read_snapshot()
        edits = tuple(
            Edit(address, None, entry)
            for address in before.addresses()
            if (entry := entry_of(before, address)) is not None
        )
        return encode(Change(before.lineage, before.serial, "", "", BASELINE_COMMAND, edits))

    def _write_snapshot(self, state: State) -> None:
        """Atomic and durable: readers see the old or the new file, and a crash loses neither."""
        text = self._encode(state)
        try:
            write_atomically(self.path, text, durable=True)
        except OSError as exc:
            raise StateError(os_error_message(exc, self.path, "write the state file")) from exc
        self._snapshot_id = _file_id(self.path)
        self._snapshot_bytes = len(text)
        self._snapshot_serial = state.serial

    def _encode(self, state: State) -> str:
        """The file's text: one line per resource, so that a diff of the file stays readable."""
        encoded: dict[str, tuple[Record, str]] = {}
        for key in sorted(state.resources):
            record = state.resources[key]
            cached = self._encoded.get(key)
            if cached is None or cached[0] is not record:
                cached = (record, _compact_json(record.to_json()))
            encoded[key] = cached
        self._encoded = encoded
        resources = ",\n".join(
            f"    {_compact_json(key)}: {text}" for key, (_, text) in encoded.items()
        )
        journal = ",\n".join(
            f"    {_compact_json(key)}: {_compact_json(state.journal[key].to_json())}"
            for key in sorted(state.journal)
        )
        return (
            "{\n"
            f'  "format_version": {state.format_version},\n'
            f'  "lineage": {_compact_json(state.lineage)},\n'
            f'  "serial": {state.serial},\n'
            f'  "resources": {{{_block(resources)}}},\n'
            f'  "journal": {{{_block(journal)}}}\n'
            "}\n"
        )

    # History.

    def changes(self, address: str | None = None, upto: int | None = None) -> list[Change]:
        """The history file's changes and the log's, once each, in serial order (a baseline
        before the change of the same serial); the callers filter."""
        return self._history_records()[0]

    def _history_records(
        self, address: str | None = None
    ) -> tuple[list[Change], list[StatusChange]]:
        """The writes (as `changes`) and the status changes of the history, from one read of
        the history file, which holds both; the callers filter."""
        with self._mutex:
            logged, _ = read_changes(self._log.path)
            history, statuses = read_history_file(self._history)
        unique = {(c.lineage, c.serial, c.command): c for c in history + logged}
        writes = sorted(unique.values(), key=lambda c: (c.serial, c.command != BASELINE_COMMAND))
        return writes, statuses

    def restore(self, state: State, changes: list[Change]) -> None:
        """Replaces the state by `state` and the history by `changes` (a migration); the
        state as this store last read it must still be the one on disk."""
        with self._mutex:
            self._loaded()
            if self._log.moved_on() or _file_id(self.path) != self._snapshot_id:
                raise StateError(f"{self.path}: the state changed while it was being replaced")
            history = b"".join(encode(change) for change in changes)
            try:
                with history_guard(self.path):
                    # Status changes are no part of the state: those recorded here are kept
                    # (a migration adds the source's after this).
                    kept = encode_status(read_history_file(self._history)[1])
                    write_atomically(self._history, (history + kept).decode("utf-8"))
            except OSError as exc:
                raise StateError(
                    os_error_message(exc, self._history, "write the state history")
                ) from exc
            self._write_snapshot(state)
            self._log.remove()
            fsync_directory(self.path.parent)
            self._state = state.copy()

    def mark_moved(self, moved_to: str, copy_back: str) -> bool:
        """Leaves `<environment>.moved.json` beside the state file (see `file.moved`)."""
        state = self.current()
        mark = Moved(state.lineage, state.serial, moved_to, copy_back, utc_now(), self.actor)
        write_moved(self.path, mark)
        return True

    def clear_moved(self) -> None:
        remove_moved(self.path)

    def close(self) -> None:
        with self._mutex:
            self._log.close()


def _holds_a_line(path: Path) -> bool:
    """Whether the change log at `path` holds a whole line (a torn one is no write)."""
    try:
        with open(path, "rb") as handle:
            return b"\n" in handle.read()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StateError(os_error_message(exc, path, "read the state")) from exc


def _file_id(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(lines: str) -> str:
    return f"\n{lines}\n  " if lines else ""
