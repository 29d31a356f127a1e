"""Saved plans: `plan --out FILE` writes one, `apply FILE` reads it back.

The file is JSON: the Plan itself plus a checksum over it, so a file edited by hand or cut
short is refused rather than half-applied. It carries no API key: what it only shows (old and
new values, notes) is redacted (`shown`), and a plan whose bodies hold a secret is not saved.

A plan file travels between jobs and machines, so it is read as untrusted input: its size is
bounded before it is parsed, its shape is checked before it is used, and when
`$SURVEYCTL_PLAN_KEY` is set the plan is signed (HMAC-SHA256) when it is saved and refused
when it is read without a valid signature by that key. The checksum only catches accidents
(anyone can recompute it); the signature says who made the plan; and whatever the file says,
`apply` plans its manifests again and applies only what that plan confirms
(`surveyctl.reconcile.tamper`). Only a plan whose signature was checked (`SavedPlan.verified`)
carries policy: the guard overrides it was made with, the resources it could not read.

A plan records the surveyctl that made it (`made_by`: version and build, `surveyctl.build`) and
is applied, or shown, only by that one: another surveyctl plans otherwise (what `apply` plans
again would not be what was reviewed) and may not know every field the plan holds. A plan of
another surveyctl is refused naming both; make a new plan with the one that applies it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from surveyctl.build import made_by
from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message, write_atomically
from surveyctl.quickschema import first_error
from surveyctl.reconcile.plan import (
    FORMAT_VERSION,
    FieldChange,
    Note,
    Plan,
    ResourceChange,
    Spend,
)
from surveyctl.redacting import holds_secret, redacted
from surveyctl.resources import RESOURCE_NAME_PATTERN, known_kinds
from surveyctl.state import fingerprint

MAGIC = "surveyctl-plan"
KEY_VARIABLE = "SURVEYCTL_PLAN_KEY"
SIGNATURE_SCHEME = "hmac-sha256"
# A plan of a thousand surveys with a dozen quotas each is a few megabytes; anything far
# beyond that is not a plan this tool wrote.
MAX_PLAN_BYTES = 64 * 1024 * 1024
MAX_WARNINGS, MAX_WARNING_CHARS = 10, 2000

_NULLABLE_NUMBER = {"type": ["number", "null"]}
_CHANGE = {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}
_ADDRESSES = {"type": "array", "items": {"type": "string"}}
# The shape a plan must have before any of it is used. A field this surveyctl does not know is
# refused by _unknown_field; values are not checked here beyond their types, because apply
# checks every change against a fresh plan anyway. Every plan is saved with its resources (an
# empty list when there are none), and _load reads them before Plan.from_dict could default
# them: a plan without them is not one this tool wrote.
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format_version", "environment", "state_lineage", "state_serial", "resources"],
    "properties": {
        "format_version": {"type": "integer"},
        "environment": {"type": "string"},
        "state_lineage": {"type": "string"},
        "state_serial": {"type": "integer", "minimum": 0},
        "destroy": {"type": "boolean"},
        "refresh_only": {"type": "boolean"},
        "kept": _ADDRESSES,
        "unread": _ADDRESSES,
        "unchecked": _ADDRESSES,
        "blocked": _ADDRESSES,
        "gone": _ADDRESSES,
        "retired": _ADDRESSES,
        "released": _ADDRESSES,
        "sources": {"type": "array", "items": {"type": "string"}},
        "recovered": {"type": "object", "additionalProperties": {"type": ["object", "null"]}},
        "adopted": _ADDRESSES,
        "labels": {"type": "object", "additionalProperties": {"type": "object"}},
        "survey_names": {
            "type": "object",
            "propertyNames": {"pattern": "^[0-9]{1,20}$"},
            "additionalProperties": {"type": "string", "pattern": RESOURCE_NAME_PATTERN},
        },
        "overrides": {"type": "array", "items": {"type": "string"}},
        # A plan warns once or twice in a sentence each; a file with more was not written so,
        # and would crowd out the pull-request comment it is shown in.
        "warnings": {
            "type": "array",
            "maxItems": MAX_WARNINGS,
            "items": {"type": "string", "maxLength": MAX_WARNING_CHARS},
        },
        "notes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["severity", "address", "message"],
                "properties": {
                    "severity": {"enum": ["error", "warning", "note"]},
                    "address": {"type": "string"},
                    "message": {"type": "string"},
                    "location": {"type": ["string", "null"]},
                },
            },
        },
        "resources": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "name", "action"],
                "properties": {
                    "kind": {"type": "string"},  # a registered kind: checked in _load
                    "name": {"type": "string", "pattern": RESOURCE_NAME_PATTERN},
                    "action": {"enum": ["no-op", "create", "update", "quota-update", "delete"]},
                    "remote_id": {"type": ["integer", "string", "null"]},
                    "body": {"type": ["object", "null"]},
                    "last_applied": {"type": ["object", "null"]},
                    "prevent_destroy": {"type": "boolean"},
                    "quota_updates": {
                        "type": "object",
                        "additionalProperties": {"type": "object"},
                    },
                    "changes": {"type": "array", "items": _CHANGE},
                    "drift": {"type": "array", "items": _CHANGE},
                    "fingerprint": {"type": ["string", "null"]},
                    "spend": {
                        "type": ["object", "null"],
                        "properties": {"before": _NULLABLE_NUMBER, "after": _NULLABLE_NUMBER},
                    },
                    "location": {"type": ["string", "null"]},
                },
            },
        },
    },
}


class PlanFileError(SurveyctlError):
    """A saved plan that cannot be used."""


@dataclass(frozen=True)
class SavedPlan:
    """A plan read from a file, and how far it is trusted: `verified` when its signature was
    checked against `$SURVEYCTL_PLAN_KEY`; `signed` when it carries a signature at all (one
    that could not be checked, the key being unset, earns no trust)."""

    plan: Plan
    verified: bool
    signed: bool


def save_plan(plan: Plan, path: Path, key: bytes | None = None) -> None:
    """Writes the plan atomically (temp file + rename) and durably (flushed to disk before
    `plan` says it saved it: a reviewed plan lost to a power cut is a review to do again),
    signed when a key is given (the configuration's `$SURVEYCTL_PLAN_KEY`,
    surveyctl.variables.plan_signing_key)."""
    outside = [source for source in plan.sources if Path(source).is_absolute()]
    if outside:
        raise PlanFileError(
            f"cannot save a plan of {outside[0]}: it is outside the project, and apply plans "
            "a saved plan's manifests again from the project's folder; plan manifests inside "
            "the project"
        )
    data = {**shown(plan).to_dict(), "made_by": made_by()}
    document = {"kind": MAGIC, "checksum": fingerprint(data), "plan": data}
    if key is not None:
        document["signature"] = _sign(data, key)
    text = json.dumps(document, indent=1, sort_keys=True)
    if redacted(text) != text:
        raise PlanFileError(f"cannot save the plan to {path}: {_secret_in(data)}")
    try:
        write_atomically(path, text, durable=True)
    except OSError as exc:  # a full disk: the earlier plan of that name stays as it was
        raise PlanFileError(os_error_message(exc, path, "write the plan file")) from exc


def shown(plan: Plan) -> Plan:
    """`plan` with what it only shows a reviewer redacted: the old and new values of its
    changes and drift, its notes and warnings. A saved plan is shown by `show` without any
    key at hand, is kept as a CI artifact and quoted in pull requests, and a live survey's
    title may hold the API key a buyer once pasted into it. `apply PLANFILE` compares these
    parts of a fresh plan redacted alike (`surveyctl.reconcile.tamper`), and applies the
    fresh plan, so nothing redacted is ever sent."""
    return dataclasses.replace(
        plan,
        resources=[
            dataclasses.replace(
                resource,
                changes=[_shown_change(change) for change in resource.changes],
                drift=[_shown_change(change) for change in resource.drift],
            )
            if resource.changes or resource.drift
            else resource
            for resource in plan.resources
        ],
        notes=[dataclasses.replace(note, message=redacted(note.message)) for note in plan.notes],
        warnings=[redacted(warning) for warning in plan.warnings],
    )


def _shown_change(change: FieldChange) -> FieldChange:
    return dataclasses.replace(
        change, old=_redacted_value(change.old), new=_redacted_value(change.new)
    )


def _redacted_value(value: Any) -> Any:
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, list):
        return [_redacted_value(item) for item in value]
    if isinstance(value, dict):
        return {redacted(name): _redacted_value(item) for name, item in value.items()}
    return value


def _secret_in(data: dict) -> str:
    """Where a secret is left in a plan whose shown parts are redacted: in what apply sends
    or records (a body, a quota update, the body recorded as last applied, a lost create's
    record). Those cannot be redacted, as apply checks them against a fresh plan of the
    manifests and sends them, so the plan is not saved; the output said the rest redacted."""
    for resource in data["resources"]:
        for part in ("body", "quota_updates", "last_applied"):
            if holds_secret(resource.get(part)):
                return (
                    f"the {part.replace('_', ' ')} of {resource['kind']}/{resource['name']} "
                    "holds the API key or the state database's password, which a plan file "
                    "never carries; take it out of the manifest (a survey's title is seen by "
                    "suppliers, too)"
                )
    return (
        "the plan holds the API key or the state database's password, which a plan file never "
        "carries; take it out of the manifests, or apply without a plan file"
    )


def load_plan(path: Path, key: bytes | None = None) -> Plan:
    """Reads a saved plan; PlanFileError when it is not one, is too large, damaged, unsigned
    or badly signed while a key is given (the configuration's `$SURVEYCTL_PLAN_KEY`), or too new."""
    return read_plan(path, key).plan


def read_plan(path: Path, key: bytes | None = None) -> SavedPlan:
    """As load_plan, with whether the plan's signature was checked (and so may be trusted)."""
    try:
        return _load(path, key)
    except RecursionError as exc:  # nesting no plan has, meant to exhaust the parser
        raise PlanFileError(f"{path}: not a surveyctl plan file (nested too deeply)") from exc


def _load(path: Path, key: bytes | None) -> SavedPlan:
    document = _read(path)
    if not isinstance(document, dict) or document.get("kind") != MAGIC:
        raise PlanFileError(f"{path}: not a surveyctl plan file")
    data = document.get("plan")
    if not isinstance(data, dict) or document.get("checksum") != fingerprint(data):
        raise PlanFileError(f"{path}: the plan file is damaged or was edited; make a new plan")
    _check_signature(path, data, document.get("signature"), key)
    _check_maker(path, data.get("made_by"))
    data = {name: value for name, value in data.items() if name != "made_by"}
    if data.get("format_version") != FORMAT_VERSION:
        raise PlanFileError(
            f"{path}: plan format {data.get('format_version')} is not supported by this "
            f"surveyctl (it reads format {FORMAT_VERSION})"
        )
    error = first_error(data, _SCHEMA)
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "top level"
        raise PlanFileError(f"{path}: not a valid plan at {where}: {error.message}")
    unknown = _unknown_field(data)
    if unknown is not None:
        where, name = unknown
        raise PlanFileError(
            f"{path}: not a valid plan at {where}: {name!r} is not a field of a plan this "
            "surveyctl makes; make a new plan"
        )
    listed: set[tuple[str, str]] = set()
    for i, resource in enumerate(data["resources"]):  # the kinds registered now
        if resource["kind"] not in known_kinds():
            kind = f"{resource['kind']!r} is not a known resource kind"
            raise PlanFileError(f"{path}: not a valid plan at resources.{i}.kind: {kind}")
        # A resource listed twice would be written twice; no plan lists one so.
        address = (resource["kind"], resource["name"])
        if address in listed:
            raise PlanFileError(
                f"{path}: not a valid plan at resources.{i}: {'/'.join(address)} is listed twice"
            )
        listed.add(address)
    try:
        plan = Plan.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise PlanFileError(f"{path}: the plan file is not complete: {exc}") from exc
    # _check_signature refused any plan not signed by the key, so a key means verified.
    return SavedPlan(plan, verified=key is not None, signed="signature" in document)


def _check_maker(path: Path, maker: Any) -> None:
    """PlanFileError unless the plan says this surveyctl made it (version and build)."""
    mine = made_by()
    if maker == mine:
        return
    this = f"this is surveyctl {mine['surveyctl']} (build {mine['build']})"
    if isinstance(maker, dict) and {"surveyctl", "build"} <= set(maker):
        made = f"made by surveyctl {maker['surveyctl']} (build {maker['build']})"
    else:
        made = "made by an earlier surveyctl, which did not record which one"
    raise PlanFileError(
        f"{path}: the plan was {made}, and {this}: a plan is applied by the surveyctl that made "
        "it, as another one plans otherwise; apply it with that one, or make a new plan with "
        "this one"
    )


# The fields of each part of a plan, as Plan.to_dict writes them.
_FIELDS = {
    "": {f.name for f in fields(Plan)} - {"seen"},
    "resources": {f.name for f in fields(ResourceChange)},
    "notes": {f.name for f in fields(Note)},
    "spend": {f.name for f in fields(Spend)},
    "changes": {"path", "old", "new"},
}


def _unknown_field(data: dict) -> tuple[str, str] | None:
    """The first field (where, name) of a shape-checked plan that this surveyctl does not know."""
    parts: list[tuple[str, str, Any]] = [("top level", "", data)]
    for i, resource in enumerate(data["resources"]):
        parts.append((f"resources.{i}", "resources", resource))
        if resource.get("spend"):
            parts.append((f"resources.{i}.spend", "spend", resource["spend"]))
        for name in ("changes", "drift"):
            for j, change in enumerate(resource.get(name, [])):
                parts.append((f"resources.{i}.{name}.{j}", "changes", change))
    for i, note in enumerate(data.get("notes", [])):
        parts.append((f"notes.{i}", "notes", note))
    for where, part, value in parts:
        for name in value:
            if name not in _FIELDS[part]:
                return where, name
    return None


def _read(path: Path) -> Any:
    """The parsed JSON of `path`, read only when its size is within MAX_PLAN_BYTES."""
    try:
        with open(path, "rb") as handle:
            # The size on disk first, so a huge file is not even read; the read is bounded
            # too, for what has no size (a pipe).
            too_large = os.fstat(handle.fileno()).st_size > MAX_PLAN_BYTES
            raw = b"" if too_large else handle.read(MAX_PLAN_BYTES + 1)
    except FileNotFoundError as exc:
        raise PlanFileError(f"{path}: no such plan file") from exc
    except IsADirectoryError as exc:
        raise PlanFileError(f"{path}: is a folder, not a plan file") from exc
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read the plan file: {exc.strerror}") from exc
    if too_large or len(raw) > MAX_PLAN_BYTES:
        raise PlanFileError(
            f"{path}: larger than {MAX_PLAN_BYTES // (1024 * 1024)} MiB, far beyond any plan "
            "surveyctl writes; refused without reading it"
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlanFileError(f"{path}: not a surveyctl plan file (not JSON)") from exc


def _sign(data: dict, key: bytes) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hmac.new(key, canonical.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"{SIGNATURE_SCHEME}:{digest}"


def _check_signature(path: Path, data: dict, signature: Any, key: bytes | None) -> None:
    if key is None:
        return  # nothing to check against; apply still re-checks every change
    if signature is None:
        raise PlanFileError(
            f"{path}: the plan is not signed, and ${KEY_VARIABLE} is set, so only plans "
            "signed with that key are applied; make the plan with the same key set"
        )
    expected = _sign(data, key).encode("utf-8")
    if not isinstance(signature, str) or not hmac.compare_digest(
        signature.encode("utf-8"), expected
    ):
        raise PlanFileError(
            f"{path}: the plan's signature does not match ${KEY_VARIABLE}: it was signed with "
            "another key or edited since; make a new plan"
        )
