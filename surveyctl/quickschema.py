"""A quick "yes" for JSON values that plainly meet a small JSON Schema, before jsonschema.

`first_error(value, schema)` is how surveyctl checks its own files (state, saved plans): None
when the value meets the schema, else jsonschema's best match among its errors.

jsonschema takes about 0.2 ms to check one state record, however small its schema, and loading
it takes about 40 ms: for a state of 1,000 surveys, a tenth of a second before a plan can send
its first read. `plainly_valid` walks a value against the few keywords those small schemas use
and answers True only when the value meets every one of them; for anything else (a keyword it
does not know, a value it does not accept) it answers False, and the caller asks jsonschema,
whose answer and message stand. So it never lets through what jsonschema would refuse, and
every message keeps its wording and location.
"""

from __future__ import annotations

from typing import Any

# What each JSON type accepts, as jsonschema reads them (a bool is no number, and a float is
# never taken for an integer here: jsonschema's 1.0 is one, and is left to it).
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_KNOWN = frozenset(
    {"type", "required", "properties", "additionalProperties", "items", "minLength", "minimum"}
)


_VALIDATORS: dict[int, Any] = {}  # by id() of the schema: each is a module-level constant


def first_error(value: Any, schema: dict) -> Any:
    """jsonschema's best match among the errors of `value` against `schema`, or None when
    there are none. jsonschema is asked (and loaded, the first time: reading surveyctl.yaml or
    starting a plan need not load it) only when `plainly_valid` cannot say yes."""
    if plainly_valid(value, schema):
        return None
    import jsonschema

    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        validator = _VALIDATORS[id(schema)] = jsonschema.Draft202012Validator(schema)
    return jsonschema.exceptions.best_match(validator.iter_errors(value))


def plainly_valid(value: Any, schema: Any) -> bool:
    """True when `value` meets `schema` using only the keywords this module knows; False when
    it does not, or when that cannot be told here (jsonschema is then the judge)."""
    if schema is True:
        return True
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        return False
    if "type" in schema and not _of_type(value, schema["type"]):
        return False
    if "minLength" in schema and not (isinstance(value, str) and len(value) >= schema["minLength"]):
        return False
    if "minimum" in schema and not (_TYPES["number"](value) and value >= schema["minimum"]):
        return False
    if "items" in schema and not (
        isinstance(value, list) and all(plainly_valid(item, schema["items"]) for item in value)
    ):
        return False
    if any(key in schema for key in ("required", "properties", "additionalProperties")):
        return isinstance(value, dict) and _object_valid(value, schema)
    return True


def _of_type(value: Any, expected: Any) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    return any(name in _TYPES and _TYPES[name](value) for name in names)


def _object_valid(value: dict, schema: dict) -> bool:
    if not all(key in value for key in schema.get("required", ())):
        return False
    properties = schema.get("properties", {})
    others = schema.get("additionalProperties", True)
    for key, item in value.items():
        if not plainly_valid(item, properties[key] if key in properties else others):
            return False
    return True
