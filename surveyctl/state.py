"""State: what surveyctl knows about the resources it manages in one environment.

`.surveyctl/state/<environment>.json` holds, per resource address (`Survey/<name>`,
`ExclusionGroup/<name>`), the service's ids and the body last applied - the third side of the
three-way merge - plus a journal of creates in flight:

```json
{"format_version": 1, "lineage": "0c6e...", "serial": 7,
 "resources": {
   "Survey/brand-tracker-us": {"ps_survey_id": 4711, "quota_ids": {"male": "9f1c..."},
                               "last_applied": {"survey_title": "Brand tracker US", "...": "..."}},
   "ExclusionGroup/brand-trackers": {"buyer_surveygroup_ref": "brand-trackers-2026",
                                     "ps_survey_ids": [4711], "last_applied": {"...": "..."}}},
 "journal": {"Survey/brand-tracker-ca": {"address": "Survey/brand-tracker-ca",
             "started_at": "2026-11-21T13:30:00+00:00", "fingerprint": "sha256:..."}}}
```

A create (POST) is journaled before it is sent and resolved right after the answer. A POST is
never retried blindly, so an entry still there after a crash means "a survey may exist that the
state does not know": it blocks a second create of that name until someone runs
`surveyctl import` or `surveyctl state rm`.

The lineage is made once, when the file is first written, and never changes; the serial grows
by one on every write. Together they let a saved plan notice that the state moved under it.
Writes go to a temporary file in the same folder, are fsynced and then renamed over the old
file, so a crash mid-write leaves the previous version whole. The API key is never part of the
state: nothing here receives it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema

from surveyctl.errors import SurveyctlError

FORMAT_VERSION = 1
SURVEY = "Survey"
EXCLUSION_GROUP = "ExclusionGroup"
KINDS = (SURVEY, EXCLUSION_GROUP)

# The shape of a state file; checked on load so a hand-edited file fails with one clear sentence.
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format_version", "lineage", "serial", "resources"],
    "properties": {
        "format_version": {"type": "integer"},
        "lineage": {"type": "string", "minLength": 1},
        "serial": {"type": "integer", "minimum": 0},
        "resources": {
            "type": "object",
            "propertyNames": {"pattern": "^(Survey|ExclusionGroup)/.+$"},
            "additionalProperties": {"type": "object"},
        },
        "journal": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["address", "started_at", "fingerprint"],
                "properties": {
                    "address": {"type": "string"},
                    "started_at": {"type": "string"},
                    "fingerprint": {"type": "string"},
                },
            },
        },
    },
}
_SURVEY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ps_survey_id"],
    "properties": {
        "ps_survey_id": {"type": "integer"},
        "quota_ids": {"type": "object", "additionalProperties": {"type": "string"}},
        "last_applied": {"type": ["object", "null"]},
        "prevent_destroy": {"type": "boolean"},
    },
}
_GROUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["buyer_surveygroup_ref"],
    "properties": {
        "buyer_surveygroup_ref": {"type": "string"},
        "ps_survey_ids": {"type": "array", "items": {"type": "integer"}},
        "last_applied": {"type": ["object", "null"]},
        "prevent_destroy": {"type": "boolean"},
    },
}


class StateError(SurveyctlError):
    """The state file cannot be read or written, or a state operation makes no sense."""


def address(kind: str, name: str) -> str:
    """`Survey/<name>` or `ExclusionGroup/<name>`."""
    if kind not in KINDS:
        raise ValueError(f"unknown resource kind {kind!r}")
    return f"{kind}/{name}"


def split_address(value: str) -> tuple[str, str]:
    """(kind, name) of an address; StateError when it is not one."""
    kind, _, name = value.partition("/")
    if kind not in KINDS or not name:
        raise StateError(
            f"{value!r} is not a resource address; use Survey/<name> or ExclusionGroup/<name>"
        )
    return kind, name


def state_file(state_dir: Path, environment: str) -> Path:
    """The state file of `environment` in `state_dir` (Config.state_dir)."""
    return Path(state_dir) / f"{environment}.json"


def fingerprint(body: Any) -> str:
    """A stable digest of a JSON body: the same content gives the same value, key order aside."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SurveyRecord:
    """A managed survey: its id, its quotas' ids (buyer_quota_id -> ps_quota_id), last body sent."""

    ps_survey_id: int
    quota_ids: dict[str, str] = field(default_factory=dict)
    last_applied: dict | None = None
    # Kept here because a manifest that was removed can no longer protect its resource.
    prevent_destroy: bool = False

    kind = SURVEY

    def ids(self) -> str:
        return f"ps_survey_id={self.ps_survey_id} quotas={len(self.quota_ids)}"

    def to_json(self) -> dict:
        return {
            "ps_survey_id": self.ps_survey_id,
            "quota_ids": dict(self.quota_ids),
            "last_applied": self.last_applied,
            "prevent_destroy": self.prevent_destroy,
        }


@dataclass(frozen=True)
class GroupRecord:
    """A managed exclusion group: its reference, its surveys' ids, and the last body sent."""

    buyer_surveygroup_ref: str
    ps_survey_ids: list[int] = field(default_factory=list)
    last_applied: dict | None = None
    prevent_destroy: bool = False

    kind = EXCLUSION_GROUP

    def ids(self) -> str:
        surveys = ",".join(str(i) for i in self.ps_survey_ids) or "-"
        return f"buyer_surveygroup_ref={self.buyer_surveygroup_ref} surveys={surveys}"

    def to_json(self) -> dict:
        return {
            "buyer_surveygroup_ref": self.buyer_surveygroup_ref,
            "ps_survey_ids": list(self.ps_survey_ids),
            "last_applied": self.last_applied,
            "prevent_destroy": self.prevent_destroy,
        }


Record = SurveyRecord | GroupRecord


@dataclass(frozen=True)
class JournalEntry:
    """A create sent (or about to be sent) whose answer has not been recorded yet."""

    address: str
    started_at: str
    fingerprint: str

    def to_json(self) -> dict:
        return {
            "address": self.address,
            "started_at": self.started_at,
            "fingerprint": self.fingerprint,
        }


@dataclass
class State:
    """The content of one environment's state file."""

    lineage: str
    serial: int = 0
    resources: dict[str, Record] = field(default_factory=dict)
    journal: dict[str, JournalEntry] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @classmethod
    def empty(cls) -> State:
        return cls(lineage=str(uuid.uuid4()))

    def copy(self) -> State:
        """A copy whose maps can change freely; the (frozen) records themselves are shared."""
        return State(
            lineage=self.lineage,
            serial=self.serial,
            resources=dict(self.resources),
            journal=dict(self.journal),
            format_version=self.format_version,
        )

    def survey(self, name: str) -> SurveyRecord | None:
        record = self.resources.get(address(SURVEY, name))
        return record if isinstance(record, SurveyRecord) else None

    def group(self, name: str) -> GroupRecord | None:
        record = self.resources.get(address(EXCLUSION_GROUP, name))
        return record if isinstance(record, GroupRecord) else None

    def pending_create(self, resource_address: str) -> JournalEntry | None:
        """The unresolved create of that address, if a previous run left one."""
        return self.journal.get(resource_address)

    def addresses(self) -> list[str]:
        """Every address the state knows, managed or with a create in flight, sorted."""
        return sorted(set(self.resources) | set(self.journal))

    def to_json(self) -> dict:
        return {
            "format_version": self.format_version,
            "lineage": self.lineage,
            "serial": self.serial,
            "resources": {key: self.resources[key].to_json() for key in sorted(self.resources)},
            "journal": {key: self.journal[key].to_json() for key in sorted(self.journal)},
        }

    @classmethod
    def from_json(cls, data: dict, source: Path) -> State:
        """Builds a State from parsed JSON; StateError naming `source` when it is not one."""
        if not isinstance(data, dict):
            raise StateError(f"{source}: not a surveyctl state file (expected a JSON object)")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise StateError(
                f"{source}: state format_version {version!r} is not supported by this surveyctl "
                f"(it reads version {FORMAT_VERSION}); use the surveyctl that wrote it"
            )
        _check(data, _SCHEMA, source, "")
        resources: dict[str, Record] = {}
        for key, value in data["resources"].items():
            kind, _ = split_address(key)
            if kind == SURVEY:
                _check(value, _SURVEY_SCHEMA, source, f"resources.{key}")
                resources[key] = SurveyRecord(
                    ps_survey_id=value["ps_survey_id"],
                    quota_ids=dict(value.get("quota_ids") or {}),
                    last_applied=value.get("last_applied"),
                    prevent_destroy=bool(value.get("prevent_destroy", False)),
                )
            else:
                _check(value, _GROUP_SCHEMA, source, f"resources.{key}")
                resources[key] = GroupRecord(
                    buyer_surveygroup_ref=value["buyer_surveygroup_ref"],
                    ps_survey_ids=list(value.get("ps_survey_ids") or []),
                    last_applied=value.get("last_applied"),
                    prevent_destroy=bool(value.get("prevent_destroy", False)),
                )
        journal = {
            key: JournalEntry(value["address"], value["started_at"], value["fingerprint"])
            for key, value in (data.get("journal") or {}).items()
        }
        return cls(
            lineage=data["lineage"],
            serial=data["serial"],
            resources=resources,
            journal=journal,
        )


_VALIDATORS = {
    id(schema): jsonschema.Draft202012Validator(schema)
    for schema in (_SCHEMA, _SURVEY_SCHEMA, _GROUP_SCHEMA)
}


def _check(value: Any, schema: dict, source: Path, where: str) -> None:
    error = jsonschema.exceptions.best_match(_VALIDATORS[id(schema)].iter_errors(value))
    if error is not None:
        place = ".".join(str(p) for p in [where, *error.absolute_path] if p != "") or "top level"
        raise StateError(f"{source}: not a valid surveyctl state file at {place}: {error.message}")


class StateStore:
    """Reads and writes one state file; writes are atomic and safe from several threads.

    `load()` reads the file once; every change goes through `update(fn)`, which applies `fn` to
    a copy of the current state under an in-process lock, bumps the serial and writes the file.
    When the write fails the in-memory state stays as it was, like the file. The cross-process
    guard is `surveyctl.lock.StateLock`, which commands that write hold for their whole run.

    The applier records every success at once, so a write must stay cheap with hundreds of
    surveys in state: records are frozen and shared between copies (replace a record, never
    change one in place; treat the `last_applied` bodies as read-only), and each record's JSON
    is encoded once and reused until the record is replaced.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._state: State | None = None
        self._encoded: dict[str, tuple[Record, str]] = {}

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
        entry = JournalEntry(resource_address, _now(), fingerprint(body))

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
        """Temp file in the same folder + fsync + rename: readers see the old or the new file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = self._encode(state)
        handle = tempfile.NamedTemporaryFile(
            "w",
            encoding="utf-8",
            dir=self.path.parent,
            prefix=f".{self.path.name}.",
            suffix=".tmp",
            delete=False,
        )
        try:
            with handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(handle.name, self.path)
        except OSError as exc:
            Path(handle.name).unlink(missing_ok=True)
            raise StateError(f"{self.path}: cannot write the state file: {exc}") from exc
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise
        _fsync_directory(self.path.parent)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(lines: str) -> str:
    return f"\n{lines}\n  " if lines else ""


def _fsync_directory(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk; not every OS allows it.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
