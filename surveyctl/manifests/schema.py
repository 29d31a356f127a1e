"""Checks each document against `schemas/manifest.schema.json` and words what it finds.

jsonschema's own messages name Python reprs; here every error becomes one sentence that
names the field by its path (`spec.quotas[2].required_count`), the line of that field, and
for an unknown field or value the closest known one ("did you mean ...?").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from surveyctl.errors import Location
from surveyctl.fields import QUOTA_RESPONSE_ONLY_FIELDS, RESPONSE_ONLY_FIELDS
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import Document, MarkedDict, MarkedList
from surveyctl.quickschema import plainly_valid
from surveyctl.resources import MANIFEST_KINDS as KINDS
from surveyctl.schemafiles import load_schema
from surveyctl.suggest import closest, suggest

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "empty",
}

# Why a number stands where text was meant: said where a field takes text and got a fraction.
FRACTION_READING = (
    "YAML reads a plain value with a dot as a number, which loses the text as written (2026.10 "
    'is 2026.1); quote it as meant ("2026.10")'
)

# Lists whose items are checked one by one, so that an item seen before (the same criterion
# in many quotas, the same quota in many surveys) is not checked again: property -> $defs name.
# The cache holds items found valid, keyed by `_memo_key`, at most _VALID_ITEMS of them.
_ITEMS = {"qualifications": "Qualification", "quotas": "QuotaEntry", "criteria": "Criterion"}
_valid_items: set[tuple[str, str | bytes]] = set()
_VALID_ITEMS = 100_000
_REQUIRED = re.compile(r"^'([^']+)' is a required property$")


@cache
def _validator(name: str) -> Draft202012Validator:
    """The validator of `$defs/<name>`, with $refs inlined and the lists of _ITEMS left open.

    The schema has no cycles: inlining its $refs spares a reference lookup per value.
    jsonschema is loaded here, by the first value `plainly_valid` cannot pass, rather than with
    this module: a plan sends its first reads while the manifests load, and importing it takes
    about 40 ms (manifests that are plainly valid never load it).
    """
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_open(name))


@cache
def _open(name: str) -> dict:
    """`$defs/<name>` with $refs inlined and the lists of _ITEMS left open."""
    definitions = load_schema("manifest.schema.json")["$defs"]
    return _inline(definitions[name], definitions, open_items=True)


@cache
def _whole(name: str) -> dict:
    """`$defs/<name>` with $refs inlined, items included."""
    definitions = load_schema("manifest.schema.json")["$defs"]
    return _inline(definitions[name], definitions, open_items=False)


def _inline(node: Any, definitions: dict, open_items: bool) -> Any:
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            target = _inline(
                definitions[reference.removeprefix("#/$defs/")], definitions, open_items
            )
            rest = {k: _inline(v, definitions, open_items) for k, v in node.items() if k != "$ref"}
            return {**target, **rest}
        out = {key: _inline(value, definitions, open_items) for key, value in node.items()}
        properties = out.get("properties")
        if open_items and isinstance(properties, dict):
            for name in _ITEMS.keys() & properties.keys():
                properties[name] = {**properties[name], "items": True}
        return out
    if isinstance(node, list):
        return [_inline(item, definitions, open_items) for item in node]
    return node


_NESTED = {
    "SurveyManifest": (("spec", "qualifications"), ("spec", "quotas")),
    "QuotaEntry": (("criteria",),),
}


def _errors(
    name: str, value: Any, prefix: list, finite: bool = False
) -> Iterator[tuple[list, ValidationError]]:
    """(path prefix, error) for `value` against `$defs/<name>` and for its listed items;
    `finite`: every number in `value` is known to be finite."""
    key = None
    if name in _ITEMS.values():
        key = (name, _memo_key(value, finite))
        if key in _valid_items:
            return
        # An item that plainly meets its whole schema (its own items too) has no errors.
        if plainly_valid(value, _whole(name)):
            _remember(key)
            return
    found = False
    # A value that plainly meets its schema (items aside: they are checked below) is not
    # walked again by jsonschema (0.15 ms a survey), nor is jsonschema loaded when no value
    # needs it; for anything else jsonschema's errors, and their wording, stand.
    if not plainly_valid(value, _open(name)):
        for error in _validator(name).iter_errors(value):
            found = True
            yield prefix, error
    for path in _NESTED.get(name, ()):
        items = value
        for part in path:
            items = items.get(part) if isinstance(items, dict) else None
        if isinstance(items, list):
            for index, item in enumerate(items):
                for sub in _errors(_ITEMS[path[-1]], item, [*prefix, *path, index], finite):
                    found = True
                    yield sub
    if not found and key is not None:
        _remember(key)


def _memo_key(value: Any, finite: bool) -> str | bytes:
    """What an item is remembered by: equal keys, equal values, so equal verdicts.

    YAML gives text, numbers, booleans, None, dates, lists and mappings, whose repr is
    unambiguous (it reads back as an equal value). orjson's JSON is too, and takes less than
    half the time to make (a quota of two criteria: 3.4 against 7.5 µs), for a value whose
    numbers are all finite (orjson writes a NaN as null) and that holds nothing else JSON
    lacks: a date, text keys only, integers within 64 bits (orjson refuses each, and repr
    keys it).
    """
    if finite:
        try:
            return orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATETIME)
        except TypeError:
            pass
    return repr(value)


def _remember(key: tuple[str, str | bytes]) -> None:
    if len(_valid_items) > _VALID_ITEMS:
        _valid_items.clear()
    _valid_items.add(key)


def item_valid(name: str, value: Any) -> bool:
    """Whether `value` is a valid `$defs/<name>` (Qualification, QuotaEntry) on its own, its
    numbers finite (a NaN passes every bound of a schema: its document's error says so)."""
    return _plainly_finite(value) and next(_errors(name, value, []), None) is None


def check_document(document: Document, diagnostics: Diagnostics) -> bool:
    """Adds the document's schema errors to `diagnostics`; True when it has none."""
    data = document.data
    kind = data.get("kind")
    if "kind" not in data:
        diagnostics.error(
            "The document has no 'kind'; expected one of: " + ", ".join(KINDS), data.location
        )
        return False
    if kind not in KINDS:
        hint = suggest(kind, KINDS) if isinstance(kind, str) else ""
        diagnostics.error(
            f"Unknown kind {_show(kind)}{hint}; expected one of: " + ", ".join(KINDS),
            data.where("kind"),
        )
        return False
    before = len(diagnostics)
    found = list(_errors(f"{kind}Manifest", data, [], document.finite is True))
    misspelt = _misspelt_required(found)
    for prefix, error in sorted(found, key=lambda pe: [*map(str, pe[0]), *map(str, pe[1].path)]):
        path = [*prefix, *error.absolute_path]
        if error.validator == "anyOf" and all(e.validator == "required" for e in error.context):
            wanted = " or ".join(repr(e.validator_value[0]) for e in error.context)
            diagnostics.error(
                f"{field_path(path)} needs {wanted}", locate(data, path, data.location)
            )
            continue
        for leaf in _leaves(error):
            where = (*prefix, *leaf.absolute_path)
            if leaf.validator == "required" and (where, _missing_field(leaf)) in misspelt:
                continue  # said once, as the unknown field that misspells it
            for summary, location in _described(leaf, data, prefix):
                diagnostics.error(summary, location)
    if not (document.finite or _plainly_finite(data)):
        # A value the schema refused already (.nan as a title: "must be text") is not told
        # again as a number it was never meant to be.
        refused = {item.location for item in diagnostics.items[before:]}
        _check_finite(data, "", data.location, diagnostics, refused)
    return len(diagnostics) == before


def _misspelt_required(found: list[tuple[list, ValidationError]]) -> set[tuple[Any, ...]]:
    """(path, field) of each required field that is missing because an unknown field beside it
    misspells it (`survey_tittle` for `survey_title`): the unknown field's error names it
    already, at the line to fix, so "missing required field" would be a second error for the
    one slip."""
    misspelt: set[tuple[Any, ...]] = set()
    for prefix, error in found:
        for leaf in _leaves(error):
            value = leaf.instance
            if leaf.validator != "additionalProperties" or not isinstance(value, dict):
                continue
            known = list(leaf.schema.get("properties", {}))
            path = (*prefix, *leaf.absolute_path)
            for field in value:
                close = closest(str(field), known) if field not in known else None
                if close is not None and close not in value:
                    misspelt.add((path, close))
    return misspelt


def _missing_field(error: ValidationError) -> str:
    """The field a `required` error says is missing."""
    named = _REQUIRED.match(error.message)
    if named:
        return named.group(1)
    value, missing = error.instance, error.validator_value
    absent = [m for m in missing if isinstance(value, dict) and m not in value]
    return absent[0] if absent else missing[0]


def _leaves(error: ValidationError) -> list[ValidationError]:
    """The most specific errors; if/then/else and $ref report their own, no wrapper needed."""
    if error.context:
        return [leaf for sub in error.context for leaf in _leaves(sub)]
    return [error]


def field_path(path: Iterable[Any]) -> str:
    """`spec.quotas[2].criteria` from a jsonschema path."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def locate(data: Any, path: Iterable[Any], fallback: Location) -> Location:
    """The Location of the deepest value along `path` that carries one."""
    where, node = getattr(data, "location", fallback), data
    for part in path:
        if isinstance(node, MarkedDict) and isinstance(part, str) and part in node:
            where, node = node.where(part), node[part]
        elif isinstance(node, MarkedList) and isinstance(part, int) and part < len(node):
            where, node = node.where(part), node[part]
        else:
            break
    return where


def _described(
    error: ValidationError, data: MarkedDict, prefix: list
) -> list[tuple[str, Location]]:
    """The sentences of one error: one per unknown field of a mapping (each on its own line,
    so that one run names every field to fix), else one."""
    value = error.instance
    if error.validator != "additionalProperties" or not isinstance(value, dict):
        return [_describe(error, data, prefix)]
    path = [*prefix, *error.absolute_path]
    owner = field_path(path) or "The manifest"
    where = locate(data, path, data.location)
    known = set(error.schema.get("properties", {}))
    extra = [k for k in value if k not in known] or ["?"]
    described = []
    for field in extra:
        spot = value.where(field) if isinstance(value, MarkedDict) and field in value else where
        assigned = _assigned_by_the_service(field, known)
        home = _home_of(field, error.schema)
        if assigned:
            described.append((f"{owner}: {field!r} {assigned}", spot))
        elif home:
            under = f"{owner}.{home}" if path else home
            text = f"{owner}: unknown field {field!r}, which belongs under {under}"
            described.append((text, spot))
        else:
            described.append((f"{owner}: unknown field {field!r}{suggest(field, known)}", spot))
    return described


def _home_of(field: str, schema: dict) -> str | None:
    """The field of `schema` (`spec`, or a program's `template`) that holds fields such as
    `field`, or None: `offer_price` written beside a market's `spec` rather than in it is
    the likeliest slip of a program, and `did you mean` has nothing near it to offer."""
    for home in ("spec", "template"):
        inner = schema.get("properties", {}).get(home)
        if not isinstance(inner, dict):
            continue
        parts = [inner, *(p for p in inner.get("allOf", []) if isinstance(p, dict))]
        if any(field in part.get("properties", {}) for part in parts):
            return home
    return None


def _describe(error: ValidationError, data: MarkedDict, prefix: list) -> tuple[str, Location]:
    path = [*prefix, *error.absolute_path]
    name = field_path(path) or "The document"
    where = locate(data, path, data.location)
    value, schema, kind = error.instance, error.schema, error.validator
    if kind == "required":
        # jsonschema reports each missing field as its own error, naming it in the message.
        field = _missing_field(error)
        owner = name if path else "The manifest"
        # The catalogue does not publish the units of a range, so the codes are said here.
        units = field == "units" and "range_sets" in path
        hint = ": 311 for years, 312 for months or 321 for US dollars" if units else ""
        return f"{owner}: missing required field {field!r}{hint}", where
    if kind == "type":
        expected = error.validator_value
        expected = expected if isinstance(expected, list) else [expected]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        fraction = isinstance(value, float) and math.isfinite(value) and "string" in expected
        hint = f": {FRACTION_READING}" if fraction else ""
        return f"{name} must be {words}, not {_show(value)}{hint}", where
    if kind in ("enum", "const"):
        allowed = error.validator_value if kind == "enum" else [error.validator_value]
        assigned = _ignored_field_of_the_service(path, value, allowed)
        if assigned:
            return f"{name}: {value!r} {assigned}; ignore_changes names fields a spec sets", where
        hint = suggest(value, [str(a) for a in allowed]) if isinstance(value, str) else ""
        if hint:
            return f"{name} is {_show(value)}, which is not allowed{hint}", where
        listed = ", ".join(map(str, allowed[:12])) + (", ..." if len(allowed) > 12 else "")
        return f"{name} is {_show(value)}, which is not one of: {listed}", where
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        symbol = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">"}.get(kind, "<")
        # A share written as a percentage (48 for 48 %) is the likeliest slip of a generator.
        percent = kind == "maximum" and path and path[-1] == "share"
        hint = (
            f": a share is a fraction of 1, {_show(value / 100)} for {_show(value)} %"
            if percent
            else ""
        )
        return f"{name} must be {symbol} {error.validator_value}, not {_show(value)}{hint}", where
    if kind == "pattern":
        # Every pattern of the manifest schema has a description (a test holds it to that), so
        # the sentence says in words what is asked, never the regular expression.
        description = schema.get("description") or f"match {error.validator_value}"
        if "propertyNames" in error.relative_schema_path:  # the key is wrong, not its value
            key_place = locate(data, [*path, value], where)
            return f"{name}: the key {_show(value)} is not valid: {description}", key_place
        return f"{name} is {_show(value)}, which is not valid: {description}", where
    if kind in ("minItems", "minProperties"):
        return f"{name} must not be empty", where
    if kind == "minLength":
        return f"{name} must not be empty text", where
    if kind == "maxLength":
        return f"{name} is longer than {error.validator_value} characters", where
    return f"{name}: {error.message}", where


def _ignored_field_of_the_service(path: list, value: Any, allowed: list) -> str | None:
    """Why a field of the service's answers has no place in `ignore_changes`, or None."""
    if "ignore_changes" not in path or not isinstance(value, str):
        return None
    return _assigned_by_the_service(value, set(allowed) | {"survey_title"})


def _assigned_by_the_service(field: str, known: set[str]) -> str | None:
    """Why a field the service's answers carry has no place in a manifest, or None.

    Copied from a survey's JSON, such a field would otherwise read as a typo of some other
    field ("did you mean 'survey_title'?").
    """
    if "survey_title" in known:  # a survey's spec (of a Survey, or a program's template)
        if field == "ps_survey_id":
            return (
                "is assigned by the service on create and cannot be set: surveyctl keeps it in "
                "its state (to manage an existing survey, `surveyctl import` it)"
            )
        if field == "ps_survey_status":
            return (
                "is not set in a manifest: `surveyctl status` moves a survey between draft, "
                "live, paused and closed"
            )
        if field in RESPONSE_ONLY_FIELDS:
            return "is read-only: the service sets it and returns it in its answers"
    if "buyer_quota_id" in known and field in QUOTA_RESPONSE_ONLY_FIELDS:
        return (
            "is assigned by the service on create and cannot be set: a quota is known by its "
            "buyer_quota_id"
        )
    return None


def _plainly_finite(data: Any) -> bool:
    """True when `data` is plain JSON without .inf or .nan, checked by the C JSON encoder.
    Only other documents (a non-finite number, or a YAML date) are walked value by value."""
    try:
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _check_finite(
    value: Any, path: str, where: Location, diagnostics: Diagnostics, refused: set[Location]
) -> None:
    """.inf and .nan are valid YAML numbers but cannot be sent as JSON (told only where no
    other error is, `refused`)."""
    if isinstance(value, float) and not math.isfinite(value):
        if where not in refused:
            diagnostics.error(f"{path or 'The value'} must be a finite number, not {value}", where)
    elif isinstance(value, MarkedDict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            _check_finite(item, sub, value.where(key), diagnostics, refused)
    elif isinstance(value, MarkedList):
        for index, item in enumerate(value):
            _check_finite(item, f"{path}[{index}]", value.where(index), diagnostics, refused)


def _show(value: Any) -> str:
    if isinstance(value, MarkedDict) or isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value) if isinstance(value, str) else str(value)
    if len(text) <= 40:
        return text
    if isinstance(value, str):  # the quote closed, and the length a limit may be about
        return f"{text[:36]}...{text[-1]} ({len(value)} characters)"
    return text[:37] + "..."
