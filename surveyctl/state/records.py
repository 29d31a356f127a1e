"""The content of a state file: resource records, the create journal, and their JSON form.

See the package docstring of `surveyctl.state` for the file format.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from surveyctl import __version__
from surveyctl.errors import SurveyctlError
from surveyctl.quickschema import first_error
from surveyctl.resources import (
    EXCLUSION_GROUP,
    SURVEY,
    address,
    known_kinds,
    register_kind,
    unregister_kind,
)

FORMAT_VERSION = 1
# What a state of this format holds at the top and in a create in flight (a record holds the
# fields of its class). Anything else was written by a later surveyctl: this one refuses the
# whole state (`newer_state`) rather than write it back without what it does not know.
# Each name added here is refused by every surveyctl before it, and dropped by those before
# this rule (they ignore what they do not know and write the state back without it), so a
# field those must not lose, as a safety field or a create in flight, comes with a new
# FORMAT_VERSION, which every surveyctl ever released refuses.
TOP_LEVEL_FIELDS = frozenset({"format_version", "lineage", "serial", "resources", "journal"})
JOURNAL_FIELDS = frozenset({"address", "started_at", "fingerprint"})
# How the name of a resource kind is spelt (`Survey`, `ExclusionGroup`): one this surveyctl has
# not registered was added by a later one.
_KIND_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")

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
        "mod_on": {"type": ["integer", "null"]},
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


class NewerState(StateError):
    """The state holds what only a later surveyctl writes: this one would lose it."""


def newer_state(source: object, what: str) -> NewerState:
    """The refusal of a state a later surveyctl wrote; `what` says what gave it away."""
    return NewerState(
        f"{source}: {what}, which this surveyctl ({__version__}, state format "
        f"{FORMAT_VERSION}) does not know: a newer surveyctl wrote this state, and this one "
        "would lose what it recorded; nothing was changed: upgrade surveyctl here to the "
        "version that wrote it (one version wherever the state is used, CI included)"
    )


def state_file(state_dir: Path, environment: str) -> Path:
    """The state file of `environment` in `state_dir` (Config.state_dir)."""
    return Path(state_dir) / f"{environment}.json"


def fingerprint(body: Any) -> str:
    """A stable digest of a JSON body: the same content gives the same value, key order aside."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SurveyRecord:
    """A managed survey: its id, its quotas' ids (buyer_quota_id -> ps_quota_id), last body sent."""

    ps_survey_id: int
    quota_ids: dict[str, str] = field(default_factory=dict)
    last_applied: dict | None = None
    # Kept here because a manifest that was removed can no longer protect its resource.
    prevent_destroy: bool = False
    # The survey's `mod_on` when surveyctl last wrote it, or last read it and found it as
    # last applied: while the survey list shows the same value, a plan need not read it.
    mod_on: int | None = None

    kind = SURVEY
    id_name = "ps_survey_id"  # what the marketplace calls `remote_id`

    @property
    def remote_id(self) -> int:
        return self.ps_survey_id

    def ids(self) -> str:
        return f"ps_survey_id={self.ps_survey_id} quotas={len(self.quota_ids)}"

    @classmethod
    def from_json(cls, value: Any, source: object, where: str) -> SurveyRecord:
        _check(value, _SURVEY_SCHEMA, source, where)
        return cls(
            ps_survey_id=value["ps_survey_id"],
            quota_ids=dict(value.get("quota_ids") or {}),
            last_applied=value.get("last_applied"),
            prevent_destroy=bool(value.get("prevent_destroy", False)),
            mod_on=value.get("mod_on"),
        )

    def to_json(self) -> dict:
        data = {
            "ps_survey_id": self.ps_survey_id,
            "quota_ids": dict(self.quota_ids),
            "last_applied": self.last_applied,
            "prevent_destroy": self.prevent_destroy,
        }
        if self.mod_on is not None:
            data["mod_on"] = self.mod_on
        return data


@dataclass(frozen=True)
class GroupRecord:
    """A managed exclusion group: its reference, its surveys' ids, and the last body sent."""

    buyer_surveygroup_ref: str
    ps_survey_ids: list[int] = field(default_factory=list)
    last_applied: dict | None = None
    prevent_destroy: bool = False

    kind = EXCLUSION_GROUP
    id_name = "buyer_surveygroup_ref"

    @property
    def remote_id(self) -> str:
        return self.buyer_surveygroup_ref

    def ids(self) -> str:
        surveys = ",".join(str(i) for i in self.ps_survey_ids) or "-"
        return f"buyer_surveygroup_ref={self.buyer_surveygroup_ref} surveys={surveys}"

    @classmethod
    def from_json(cls, value: Any, source: object, where: str) -> GroupRecord:
        _check(value, _GROUP_SCHEMA, source, where)
        return cls(
            buyer_surveygroup_ref=value["buyer_surveygroup_ref"],
            ps_survey_ids=list(value.get("ps_survey_ids") or []),
            last_applied=value.get("last_applied"),
            prevent_destroy=bool(value.get("prevent_destroy", False)),
        )

    def to_json(self) -> dict:
        return {
            "buyer_surveygroup_ref": self.buyer_surveygroup_ref,
            "ps_survey_ids": list(self.ps_survey_ids),
            "last_applied": self.last_applied,
            "prevent_destroy": self.prevent_destroy,
        }


Record = SurveyRecord | GroupRecord  # or the record class of a registered kind

# kind -> its record class: a frozen dataclass with `kind`, `id_name`, `remote_id`,
# `last_applied`, `prevent_destroy`, `ids()`, `to_json()` and `from_json(value, source, where)`.
RECORD_TYPES: dict[str, type] = {SURVEY: SurveyRecord, EXCLUSION_GROUP: GroupRecord}


def register_record(record_type: type) -> None:
    """Makes `record_type` the state record of its kind (`record_type.kind`)."""
    register_kind(record_type.kind)
    RECORD_TYPES[record_type.kind] = record_type


def unregister_record(kind: str) -> None:
    """Forgets the record class of a registered kind (one defined for a single test)."""
    if kind not in (SURVEY, EXCLUSION_GROUP):
        RECORD_TYPES.pop(kind, None)
        unregister_kind(kind)


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

    def problems(self) -> list[str]:
        """What makes this state unsafe to plan or apply with, one sentence each: one
        survey or group recorded under two names."""
        problems = []
        for kind in RECORD_TYPES.values():
            what = kind.id_name
            seen: dict[object, str] = {}
            for address_, record in sorted(self.resources.items()):
                if not isinstance(record, kind):
                    continue
                value = record.remote_id
                if value in seen:
                    # Either may be the wrong one (a copy sorts before or after the original):
                    # both commands are named, and what tells them apart.
                    problems.append(
                        f"{seen[value]} and {address_} both record {what} {value}, so one "
                        f"resource would be managed under two names; forget the one whose "
                        f"manifest does not describe it, `surveyctl state rm {seen[value]}` or "
                        f"`surveyctl state rm {address_}` (the marketplace is not touched)"
                    )
                else:
                    seen[value] = address_
        return problems

    def to_json(self) -> dict:
        return {
            "format_version": self.format_version,
            "lineage": self.lineage,
            "serial": self.serial,
            "resources": {key: self.resources[key].to_json() for key in sorted(self.resources)},
            "journal": {key: self.journal[key].to_json() for key in sorted(self.journal)},
        }

    @classmethod
    def from_json(cls, data: dict, source: object) -> State:
        """Builds a State from parsed JSON; StateError naming `source` when it is not one."""
        _check_top_level(data, source)
        resources = {
            key: record_from_json(key, value, source) for key, value in data["resources"].items()
        }
        journal = {
            key: journal_from_json(value, key, source)
            for key, value in (data.get("journal") or {}).items()
        }
        return cls(
            lineage=data["lineage"],
            serial=data["serial"],
            resources=resources,
            journal=journal,
        )


@dataclass(frozen=True)
class SurveyPlace:
    """Where a state stands (its lineage and serial) and the address under which it manages
    one survey (None when it does not): what a status change is recorded with."""

    lineage: str
    serial: int
    address: str | None


def survey_place(data: Any, survey_id: int, source: object) -> SurveyPlace:
    """Where the parsed state `data` (as `State.from_json` takes it) stands, and the first
    address, in sorted order, under which it manages survey `survey_id`.

    It refuses what `State.from_json` refuses of the top level, of the creates in flight and of
    each record's kind and field names (what says a later surveyctl wrote the state), but checks
    the values of only the records that hold that id: a status change recorded in a state of
    1,000 surveys costs the parse of the state, not the check of 1,000 records."""
    _check_top_level(data, source)
    for key, value in (data.get("journal") or {}).items():
        journal_from_json(value, key, source)
    holding = [
        key
        for key, value in data["resources"].items()
        if issubclass(_record_type(key, value, source), SurveyRecord)
        and value.get(SurveyRecord.id_name) == survey_id
    ]
    for key in sorted(holding):
        if isinstance(record_from_json(key, data["resources"][key], source), SurveyRecord):
            return SurveyPlace(data["lineage"], data["serial"], key)
    return SurveyPlace(data["lineage"], data["serial"], None)


def _check_top_level(data: Any, source: object) -> None:
    """StateError naming `source` unless `data` is a state of this format, whose top level
    holds what a state holds, of the types it holds them in (the records are not checked)."""
    if not isinstance(data, dict):
        raise StateError(f"{source}: not a surveyctl state file (expected a JSON object)")
    version = data.get("format_version")
    if type(version) is int and version > FORMAT_VERSION:
        raise newer_state(source, f"the state is in format {version}")
    if version != FORMAT_VERSION:
        raise StateError(
            f"{source}: state format_version {version!r} is not supported by this surveyctl "
            f"(it reads version {FORMAT_VERSION}); use the surveyctl that wrote it"
        )
    for name in data:
        if name not in TOP_LEVEL_FIELDS:
            raise newer_state(source, f"the state holds {name!r} at the top level")
    _check(data, _SCHEMA, source, "")


def record_from_json(key: str, value: Any, source: object) -> Record:
    """The record stored under address `key`; StateError naming `source` when it is not one."""
    return _record_type(key, value, source).from_json(value, source, f"resources.{key}")


def _record_type(key: str, value: Any, source: object) -> type:
    """The record class of address `key`, once its kind and (if `value` is an object) its field
    names are ones this surveyctl knows; StateError (NewerState) naming `source` otherwise."""
    kind, _, name = key.partition("/")
    record_type = RECORD_TYPES.get(kind)
    if record_type is None and name and _KIND_NAME.fullmatch(kind):
        raise newer_state(source, f"the state holds {key}, a resource of kind {kind!r}")
    if record_type is None or not name:
        raise StateError(
            f"{source}: {key!r} is not a resource address; use "
            + " or ".join(f"{kind}/<name>" for kind in RECORD_TYPES)
        )
    if isinstance(value, dict):
        # A record holds the fields of its class (a frozen dataclass); anything else is a later
        # surveyctl's.
        known = _field_names(record_type)
        for field_name in value:
            if field_name not in known:
                raise newer_state(source, f"{key} holds {field_name!r}")
    return record_type


def journal_from_json(value: dict, key: str, source: object) -> JournalEntry:
    """The journal entry stored under `key`, from its (shape-checked) JSON form; StateError
    naming `source` when it is not about a resource surveyctl manages."""
    kind, _, name = key.partition("/")
    if (
        value["address"] == key
        and name
        and kind not in known_kinds()
        and _KIND_NAME.fullmatch(kind)
    ):
        raise newer_state(
            source, f"the state holds a create in flight of {key}, a resource of kind {kind!r}"
        )
    if kind not in known_kinds() or not name or value["address"] != key:
        raise StateError(
            f"{source}: the journal holds a create under {key!r}"
            + (f" for {value['address']!r}" if value["address"] != key else "")
            + ", which is not a resource surveyctl manages "
            + f"({' or '.join(f'{k}/<name>' for k in known_kinds())}); it was not written by "
            "surveyctl: remove that entry from the state by hand"
        )
    for field_name in value:
        if field_name not in JOURNAL_FIELDS:
            raise newer_state(source, f"the create in flight of {key} holds {field_name!r}")
    return JournalEntry(value["address"], value["started_at"], value["fingerprint"])


def _check(value: Any, schema: dict, source: object, where: str) -> None:
    error = first_error(value, schema)
    if error is not None:
        place = ".".join(str(p) for p in [where, *error.absolute_path] if p != "") or "top level"
        raise StateError(f"{source}: not a valid surveyctl state file at {place}: {error.message}")


@cache
def _field_names(record_type: type) -> frozenset[str]:
    """The fields a record of `record_type` holds, found once a type, not once a record: a state
    of 1,000 surveys is checked on every command that reads it."""
    return frozenset(f.name for f in fields(record_type))
