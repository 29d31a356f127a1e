"""A quick "yes" for JSON values that plainly meet a JSON Schema, before jsonschema.

`first_error(value, schema)` is how surveyctl checks its own files (state, saved plans): None
when the value meets the schema, else jsonschema's best match among its errors. The manifest
check (surveyctl.manifests.schema) asks `plainly_valid` before jsonschema too.

jsonschema takes about 0.2 ms to check one state record, however small its schema, and loading
it takes about 40 ms: for a state of 1,000 surveys, a tenth of a second before a plan can send
its first read; checking a thousand survey manifests takes it another 0.15 s. `plainly_valid`
checks a value against the keywords those schemas use (anyOf and if/then/else where their
answer can be told plainly) and answers True only when the value meets every one of them; for
anything else (a keyword it does not know, a value it does not accept) it answers False, and
the caller asks jsonschema, whose answer and message stand. So it never lets through what
jsonschema would refuse, and every message keeps its wording and location. Each schema is read
once, into a function kept for the process: the schemas are constants.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
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
_NUMBER = _TYPES["number"]
# Keywords that check the value they are given, each a test that answers True only when the
# value plainly meets it. As in jsonschema, each applies to one type only (a minimum to
# numbers, a pattern to texts): a value of another type meets it, and the "type" keyword
# beside it decides. A NaN meets no bound here, and goes on to jsonschema.
_TESTS: dict[str, Any] = {
    "minLength": lambda v, n: not isinstance(v, str) or len(v) >= n,
    "maxLength": lambda v, n: not isinstance(v, str) or len(v) <= n,
    "minimum": lambda v, n: not _NUMBER(v) or v >= n,
    "maximum": lambda v, n: not _NUMBER(v) or v <= n,
    "exclusiveMinimum": lambda v, n: not _NUMBER(v) or v > n,
    "exclusiveMaximum": lambda v, n: not _NUMBER(v) or v < n,
    "minItems": lambda v, n: not isinstance(v, list) or len(v) >= n,
    "maxItems": lambda v, n: not isinstance(v, list) or len(v) <= n,
    "minProperties": lambda v, n: not isinstance(v, dict) or len(v) >= n,
    "maxProperties": lambda v, n: not isinstance(v, dict) or len(v) <= n,
    "pattern": lambda v, p: not isinstance(v, str) or _compiled(p).search(v) is not None,
    "const": lambda v, c: _same(v, c),
    "enum": lambda v, choices: any(_same(v, c) for c in choices),
}
# Words about the schema, not checks of the value.
_ANNOTATIONS = frozenset({"description", "title", "$schema", "$id", "$comment"})
_KNOWN = frozenset(
    {
        *("type", "required", "properties", "additionalProperties", "items", "propertyNames"),
        *("anyOf", "if", "then", "else"),
        *_TESTS,
        *_ANNOTATIONS,
    }
)
# The keywords of a condition whose failure `plainly_valid` tells exactly (see _decided).
_REFUTABLE = frozenset({"type", "required", *_ANNOTATIONS})
_OBJECT_KEYWORDS = frozenset({"required", "properties", "additionalProperties"})


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
    return _checker(schema)(value)


Check = Callable[[Any], bool]
# Each check by the id() of its schema, kept beside it: while the check is kept, so is the
# schema, and no other object can have its id.
_CHECKERS: dict[int, tuple[Any, Check]] = {}
_MAX_CHECKERS = 1_000  # the schemas a process checks against are a few constants


def _checker(schema: Any) -> Check:
    """The check of `schema`, made once: the schemas given are constants, and reading a
    schema's keywords again for every value was most of the time a check took (a state record
    of 12 quotas: 67 µs walking its schema, 10 µs with its keywords read once)."""
    made = _CHECKERS.get(id(schema))
    if made is None:
        if len(_CHECKERS) >= _MAX_CHECKERS:
            _CHECKERS.clear()
        made = _CHECKERS[id(schema)] = (schema, _compiled_check(schema))
    return made[1]


def _compiled_check(schema: Any) -> Check:
    """A function that answers as `plainly_valid(value, schema)` does: True only when the
    value meets every keyword of `schema`, each read here once."""
    if schema is True:
        return _yes
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        return _no
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    for keyword, expected in schema.items():
        test = _TESTS.get(keyword)
        if test is not None:
            checks.append(_bound(test, expected))
    if "items" in schema:
        checks.append(_each_item(_compiled_check(schema["items"])))
    if "propertyNames" in schema:
        checks.append(_each_key(_compiled_check(schema["propertyNames"])))
    if "anyOf" in schema:
        checks.append(_any_of([_compiled_check(one) for one in schema["anyOf"]]))
    if "if" in schema:
        checks.append(_condition(schema))
    if not _OBJECT_KEYWORDS.isdisjoint(schema):
        checks.append(_object_check(schema))
    return _all_of(checks)


def _yes(value: Any) -> bool:
    return True


def _no(value: Any) -> bool:
    return False


def _all_of(checks: list[Check]) -> Check:
    if not checks:
        return _yes
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        for one in checks:
            if not one(value):
                return False
        return True

    return check


def _type_check(expected: Any) -> Check:
    names = expected if isinstance(expected, list) else [expected]
    tests = [_TYPES[name] for name in names if name in _TYPES]
    if not tests:
        return _no
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _bound(test: Any, expected: Any) -> Check:
    return lambda value: test(value, expected)


def _each_item(item: Check) -> Check:
    return lambda value: not isinstance(value, list) or all(map(item, value))


def _each_key(key: Check) -> Check:
    return lambda value: not isinstance(value, dict) or all(map(key, value))


def _any_of(ones: list[Check]) -> Check:
    return lambda value: any(one(value) for one in ones)


def _condition(schema: dict) -> Check:
    """An if/then/else: the value must meet `then` when it plainly meets `if`, `else` when it
    plainly fails it; when that cannot be told, the answer is no (ask jsonschema)."""
    condition = schema["if"]
    met = _compiled_check(condition)
    then = _compiled_check(schema.get("then", True))
    otherwise = _compiled_check(schema.get("else", True))

    def check(value: Any) -> bool:
        if met(value):
            return then(value)
        return _decided(value, condition) and otherwise(value)

    return check


def _object_check(schema: dict) -> Check:
    required = tuple(schema.get("required", ()))
    properties = {key: _compiled_check(item) for key, item in schema.get("properties", {}).items()}
    others = _compiled_check(schema.get("additionalProperties", True))

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for key in required:
            if key not in value:
                return False
        for key, item in value.items():
            if not properties.get(key, others)(item):
                return False
        return True

    return check


def _decided(value: Any, condition: Any) -> bool:
    """Whether `plainly_valid`'s "no" to `condition` is jsonschema's too: so for a condition
    of types and required fields only (as the `if` of a manifest schema is), but for an
    integral float, which jsonschema takes for an integer."""
    if not isinstance(condition, dict) or not _REFUTABLE.issuperset(condition):
        return False
    expected = condition.get("type", [])
    names = expected if isinstance(expected, list) else [expected]
    return not ("integer" in names and isinstance(value, float) and value.is_integer())


def _same(value: Any, expected: Any) -> bool:
    """Whether jsonschema takes `value` for `expected` (const, enum), told here for texts,
    numbers, booleans and null only: a bool is never a number (True is not 1), 1 and 1.0 are
    equal. A list or a mapping is left to jsonschema."""
    if isinstance(expected, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(expected, str) and value == expected
    if isinstance(expected, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(expected, bool) and value is expected
    if expected is None or value is None:
        return value is None and expected is None
    return _NUMBER(value) and _NUMBER(expected) and value == expected


@cache
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)
