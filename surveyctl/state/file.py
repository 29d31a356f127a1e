"""The file backend: the state in one JSON file, atomic writes, safe from several threads.

See `surveyctl.state` for the file format and `surveyctl.state.lock` for its lock.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from surveyctl.files import write_atomically
from surveyctl.resources import split_address
from surveyctl.state.lock import LockInfo, StateLock, force_unlock, read_lock
from surveyctl.state.records import (
    JournalEntry,
    Record,
    State,
    StateError,
    fingerprint,
    utc_now,
)


class FileStateStore:
    """The file backend: one state file; writes are atomic and safe from several threads.

    `load()` reads the file once; every change goes through `update(fn)`, which applies `fn` to
    a copy of the current state under an in-process lock, bumps the serial and writes the file.
    When the write fails the in-memory state stays as it was, like the file. The cross-process
    guard is the lock of `locked()`, which commands that write hold for their whole run.

    The applier records every success at once, so a write must stay cheap with hundreds of
    surveys in state: records are frozen and shared between copies (replace a record, never
    change one in place; treat the `last_applied` bodies as read-only), and each record's JSON
    is encoded once and reused until the record is replaced.
    """

    def __init__(self, path: Path, environment: str | None = None):
        self.path = Path(path)
        self.environment = environment
        self._lock = threading.Lock()
        self._state: State | None = None
        self._encoded: dict[str, tuple[Record, str]] = {}

    @property
    def location(self) -> str:
        return str(self.path)

    @contextmanager
    def locked(self, operation: str, timeout: float = 0.0) -> Iterator[LockInfo]:
        """Holds `<environment>.lock.json` beside the state file for the block."""
        with StateLock(self.path, operation, timeout=timeout, environment=self.environment) as lock:
            assert lock.info is not None
            yield lock.info

    def lock_holder(self) -> LockInfo | None:
        return read_lock(self.path)

    def force_unlock(self, lock_id: str) -> LockInfo:
        return force_unlock(self.path, lock_id)

    def load(self) -> State:
        """The state in the file; an empty state with a fresh lineage when there is none yet."""
        with self._lock:
            self._state = self._read()
            return self._state.copy()

    def current(self) -> State:
        """A copy of the state as last loaded or written (loads it on first use)."""
        with self._lock:
            if self._state is None:
                self._state = self._read()
            return self._state.copy()

    def update(self, change: Callable[[State], None]) -> State:
        """Applies `change` to the state, writes it with serial + 1, and returns a copy."""
        with self._lock:
            if self._state is None:
                self._state = self._read()
            new = self._state.copy()
            change(new)
            new.serial = self._state.serial + 1
            self._write(new)
            self._state = new
            return new.copy()

    # The operations the applier and the state commands need, each one write.

    def record(self, resource_address: str, record: Record) -> State:
        """Records a managed resource (after a create, an update or an import)."""
        split_address(resource_address)

        def change(state: State) -> None:
            state.resources[resource_address] = copy.deepcopy(record)

        return self.update(change)

    def journal_create(self, resource_address: str, body: dict) -> JournalEntry:
        """Notes a create about to be sent; call it BEFORE the POST."""
        split_address(resource_address)
        entry = JournalEntry(resource_address, utc_now(), fingerprint(body))

        def change(state: State) -> None:
            if resource_address in state.journal:
                raise StateError(
                    f"a create of {resource_address} is already in flight since "
                    f"{state.journal[resource_address].started_at}"
                )
            state.journal[resource_address] = entry

        self.update(change)
        return entry

    def resolve_create(self, resource_address: str, record: Record | None) -> State:
        """Clears a journaled create: records the resource it made, or nothing if it failed."""

        def change(state: State) -> None:
            state.journal.pop(resource_address, None)
            if record is not None:
                state.resources[resource_address] = copy.deepcopy(record)

        return self.update(change)

    def forget(self, resource_address: str) -> State:
        """Drops a resource and any unresolved create of it; the marketplace is not touched."""

        def change(state: State) -> None:
            if resource_address not in state.resources and resource_address not in state.journal:
                raise StateError(f"{resource_address} is not in the state file {self.path}")
            state.resources.pop(resource_address, None)
            state.journal.pop(resource_address, None)

        return self.update(change)

    def move(self, old: str, new: str) -> State:
        """Renames a resource (after a manifest rename); the kind must stay the same."""
        old_kind, _ = split_address(old)
        new_kind, _ = split_address(new)
        if old_kind != new_kind:
            raise StateError(f"cannot move {old} to {new}: a resource keeps its kind")

        def change(state: State) -> None:
            if old not in state.resources and old not in state.journal:
                raise StateError(f"{old} is not in the state file {self.path}")
            if new in state.resources or new in state.journal:
                raise StateError(f"{new} is already in the state file {self.path}")
            if old in state.resources:
                state.resources[new] = state.resources.pop(old)
            if old in state.journal:
                entry = state.journal.pop(old)
                state.journal[new] = JournalEntry(new, entry.started_at, entry.fingerprint)

        return self.update(change)

    def _read(self) -> State:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return State.empty()
        except (OSError, UnicodeDecodeError) as exc:
            raise StateError(f"{self.path}: cannot read the state file: {exc}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateError(
                f"{self.path}:{exc.lineno}: the state file is corrupt (not valid JSON: {exc.msg}); "
                "restore it from a backup or version control"
            ) from exc
        return State.from_json(data, self.path)

    def _encode(self, state: State) -> str:
        """The file's text: one line per resource, so that a diff of the file stays readable."""
        encoded: dict[str, tuple[Record, str]] = {}
        for key in sorted(state.resources):
            record = state.resources[key]
            cached = self._encoded.get(key)
            if cached is None or cached[0] is not record:
                cached = (record, _compact(record.to_json()))
            encoded[key] = cached
        self._encoded = encoded
        resources = ",\n".join(f"    {_compact(key)}: {text}" for key, (_, text) in encoded.items())
        journal = ",\n".join(
            f"    {_compact(key)}: {_compact(state.journal[key].to_json())}"
            for key in sorted(state.journal)
        )
        return (
            "{\n"
            f'  "format_version": {state.format_version},\n'
            f'  "lineage": {_compact(state.lineage)},\n'
            f'  "serial": {state.serial},\n'
            f'  "resources": {{{_block(resources)}}},\n'
            f'  "journal": {{{_block(journal)}}}\n'
            "}\n"
        )

    def _write(self, state: State) -> None:
        """Atomic and durable: readers see the old or the new file, and a crash loses neither."""
        try:
            write_atomically(self.path, self._encode(state), durable=True)
        except OSError as exc:
            raise StateError(f"{self.path}: cannot write the state file: {exc}") from exc


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(lines: str) -> str:
    return f"\n{lines}\n  " if lines else ""
