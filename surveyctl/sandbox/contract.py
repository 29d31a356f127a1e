"""The contract: JSON Schemas of `schemas/api/` checking what the sandbox receives and sends.

Schemas refer to each other by file name (`common.json#/$defs/quota_request`); `registry()`
holds every file of the folder under its name, so a validator resolves those `$ref`s with the
`referencing` library.

A view answers through `reply(body, status, schema)`: the response remembers the schema it
must meet, and with `check_responses` on the app validates it on the way out (a violation
becomes a 500 naming it). Request bodies go through `check_request`, which turns the first
violation into a 400 naming the field by its JSON path, such as `quotas[0].required_count`.

Two modes read request bodies (`create_app(strict=...)`):

- faithful (the default) takes what the service takes: a field no schema lists is accepted and
  dropped before the body is used (`prune`), as the service ignores what it does not know (a
  survey as GET returns it can be sent back with PUT). The fields a schema marks
  `"x-lenient": true` are ones the public material shows buyers sending (a quota PUT that
  repeats `buyer_quota_id` or renames with `quota_title`); they are kept. An `anyOf` branch
  marked so is a spelling the service takes (range bounds as text, `"21"`, as its GET shows
  them); such bounds are read as numbers before the body is used (`_range_bounds_as_numbers`).
- strict refuses every field the schema does not list, and the `x-lenient` ones too (fields and
  branches), naming them, an integer written with a fraction (`1000.0`) and a null anywhere
  (`first_null`: the spec gives no request field null): for clients that want their own stray
  fields caught.

Responses are always checked against the schema files as they are.
"""

from __future__ import annotations

from collections import deque
from functools import cache
from typing import Any

from flask import Response, current_app, json
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from surveyctl.sandbox import catalogue
from surveyctl.sandbox.errors import INVALID_BODY, ApiProblem
from surveyctl.schemafiles import load_schema, schemas_dir

API_FOLDER = "api"
STRICT_KEY = "SURVEYCTL_SANDBOX_STRICT"  # app.config: refuse unknown request fields
LENIENT = "x-lenient"  # a property the service takes that the strict mode refuses
WRITTEN_AS = "x-written-as"  # what a pattern wants, in words, for the message of a refusal
# The three ways of reading schemas: as written (responses), faithful and strict (requests).
AS_WRITTEN, FAITHFUL, STRICT = "as-written", "faithful", "strict"


def schema_for(name: str, mode: str = AS_WRITTEN) -> Any:
    """`schemas/api/<name>` read in `mode` (a new copy for the two request modes)."""
    schema = load_schema(f"{API_FOLDER}/{name}")
    if mode == FAITHFUL:
        return _opened(schema)
    if mode == STRICT:
        return _without_lenient(schema)
    return schema


def _opened(node: Any) -> Any:
    """Every object open to fields it does not list (`additionalProperties: false` dropped)."""
    if isinstance(node, dict):
        return {
            k: _opened(v)
            for k, v in node.items()
            if not (k == "additionalProperties" and v is False)
        }
    if isinstance(node, list):
        return [_opened(item) for item in node]
    return node


def _without_lenient(node: Any) -> Any:
    """Every property and `anyOf` branch marked `x-lenient` left out, so a body that carries
    one is refused."""
    if isinstance(node, dict):
        copy = {k: _without_lenient(v) for k, v in node.items()}
        properties = copy.get("properties")
        if isinstance(properties, dict):
            dropped = {k for k, v in properties.items() if _lenient(v)}
            copy["properties"] = {k: v for k, v in properties.items() if k not in dropped}
        if isinstance(copy.get("anyOf"), list):
            copy["anyOf"] = [branch for branch in copy["anyOf"] if not _lenient(branch)]
        return copy
    if isinstance(node, list):
        return [_without_lenient(item) for item in node]
    return node


def _lenient(node: Any) -> bool:
    return isinstance(node, dict) and bool(node.get(LENIENT))


@cache
def registry(mode: str = AS_WRITTEN) -> Registry:
    """Every schema of `schemas/api/` in `mode`, registered under its file name."""
    resources = [
        (path.name, _resource(schema_for(path.name, mode), mode))
        for path in sorted((schemas_dir() / API_FOLDER).glob("*.json"))
    ]
    return Registry().with_resources(resources)


def _resource(schema: Any, mode: str) -> Resource:
    if mode == STRICT:
        # A `$ref` to a whole file names its `$schema`, and jsonschema checks what it points
        # to with the stock validator of that dialect: the strict integers would end there
        # (an exclusion group's create body refers to the file of its overwrite body).
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    return Resource.from_contents(schema, default_specification=DRAFT202012)


# JSON Schema counts 1000.0 as an integer. The spec's integers (a count, a code) are written
# without a fraction, and a client that writes one as 1000.0 leans on a reader that forgives it
# (a typed reader, such as Go's, refuses it): the strict mode refuses it.
_StrictIntegers = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


@cache
def validator(name: str, mode: str = AS_WRITTEN) -> Draft202012Validator:
    """A validator for `schemas/api/<name>` read in `mode`; the strict one takes an integer
    only as written without a fraction."""
    kind = _StrictIntegers if mode == STRICT else Draft202012Validator
    return kind(schema_for(name, mode), registry=registry(mode))


def strict_mode() -> bool:
    """Whether the app serving the current request refuses unknown request fields."""
    return bool(current_app.config.get(STRICT_KEY, False))


def fields(definition: str) -> tuple[str, ...]:
    """The property names of `common.json#/$defs/<definition>`, such as the fields an update
    body may carry (`survey_body`)."""
    schema = load_schema(f"{API_FOLDER}/common.json")["$defs"][definition]
    return tuple(schema["properties"])


def json_path(path: deque | list) -> str:
    """`["quotas", 0, "required_count"]` -> `quotas[0].required_count`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe(error: ValidationError) -> str:
    """One sentence naming the offending field by its JSON path."""
    where = json_path(error.absolute_path)
    prefix = f"{where}." if where else ""
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return f"missing required field {prefix}{missing[0]}"
    if error.validator == "pattern" and where == "survey_localization":
        # The shape is checked before the catalogue could say which locale was meant.
        return f"field {where}: {catalogue.unknown_locale(error.instance)}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        unknown = sorted(name for name in error.instance if name not in known)
        names = ", ".join(prefix + name for name in unknown)
        return f"unknown field{'s' if len(unknown) > 1 else ''} {names}"
    # A schema that says in words what its pattern wants (the regular expression does not),
    # itself or in a branch of its anyOf.
    said = [error.schema] if error.validator == "pattern" else []
    if error.validator == "anyOf":
        said = [branch for branch in error.validator_value if isinstance(branch, dict)]
    written_as = next((s[WRITTEN_AS] for s in said if WRITTEN_AS in s), None)
    if written_as is not None:
        return f"field {where}: {json.dumps(error.instance)} is not {written_as}"
    if error.validator == "const":
        wanted, sent = json.dumps(error.validator_value), json.dumps(error.instance)
        return f"field {where or '(body)'}: must be {wanted}, not {sent}"
    return f"field {where or '(body)'}: {error.message}"


def check_request(name: str, body: Any) -> Any:
    """`body` as the app's mode reads it against `schemas/api/<name>`: a 400 ApiProblem
    describing the first way it breaks the schema, else the body without the fields the
    schema does not list (faithful mode; strict mode has refused them)."""
    mode = STRICT if strict_mode() else FAITHFUL
    error = best_match(validator(name, mode).iter_errors(body))
    if error is not None:
        raise ApiProblem(400, INVALID_BODY, f"invalid request body: {describe(error)}")
    if mode == STRICT:
        where = None if name in ANY_VALUE else first_null(body)
        if where is not None:
            raise ApiProblem(
                400,
                INVALID_BODY,
                f"invalid request body: field {where or '(body)'} is null, where the contract "
                "gives a type and no null (leave the field out)",
            )
        return body
    return _range_bounds_as_numbers(prune(load_schema(f"{API_FOLDER}/{name}"), body, name))


# Request bodies whose values may be any JSON, null included (a patch's `value`): the
# document a patch makes is judged by the schema of the matching PUT instead.
ANY_VALUE = frozenset({"json-patch.request.json"})


def first_null(body: Any) -> str | None:
    """The JSON path of the first null in `body` ("" for a body that is null), or None.

    The spec's request bodies give every field a type and none of them null; the schemas take
    null where a GET shows an unset field so, for the default mode's GET body sent back."""
    stack: list[tuple[Any, list]] = [(body, [])]
    while stack:
        value, path = stack.pop()
        if value is None:
            return json_path(path)
        items = (
            value.items()
            if isinstance(value, dict)
            else (enumerate(value) if isinstance(value, list) else ())
        )
        stack.extend((item, [*path, key]) for key, item in reversed(list(items)))
    return None


def _range_bounds_as_numbers(value: Any) -> Any:
    """`value` with every range bound sent as text (`"21"`, valid by the schema's lenient
    branch) read as the number, so rules and answers see numbers as the spec has them."""
    if isinstance(value, list):
        return [_range_bounds_as_numbers(item) for item in value]
    if not isinstance(value, dict):
        return value
    read = {key: _range_bounds_as_numbers(item) for key, item in value.items()}
    range_sets = read.get("range_sets")
    for range_set in range_sets if isinstance(range_sets, list) else ():
        for bound in ("from", "to"):
            text = range_set.get(bound) if isinstance(range_set, dict) else None
            if isinstance(text, str):
                range_set[bound] = float(text) if "." in text else int(text)
    return read


def prune(schema: Any, value: Any, file_name: str) -> Any:
    """`value` (valid against `schema` opened) without the fields `schema` does not list where
    it closes an object: what the faithful mode ignores never reaches the store."""
    if not isinstance(schema, dict):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target, _, fragment = ref.partition("#")
        file_name = target or file_name
        resolved: Any = load_schema(f"{API_FOLDER}/{file_name}")
        for part in (p for p in fragment.split("/") if p):
            resolved = resolved[part]
        value = prune(resolved, value, file_name)
    for branch in schema.get("anyOf") or ():  # `{"anyOf": [{"$ref": ...}, {"type": "null"}]}`
        value = prune(branch, value, file_name)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is False:
            value = {k: v for k, v in value.items() if k in properties}
        return {
            k: prune(properties[k], v, file_name) if k in properties else v
            for k, v in value.items()
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(schema["items"], item, file_name) for item in value]
    return value


def violation(name: str, body: Any) -> str | None:
    """How `body` breaks the response schema `name`, or None when it conforms."""
    error = best_match(validator(name).iter_errors(body))
    return None if error is None else describe(error)


def reply(
    body: Any, status: int = 200, schema: str | None = None, headers: dict | None = None
) -> Response:
    """A JSON response that remembers the schema it must meet (None: no body, like a 204)."""
    if body is None:
        response = current_app.response_class(status=status, headers=headers)
    else:
        response = current_app.response_class(
            json.dumps(body), status=status, headers=headers, mimetype="application/json"
        )
    response.contract_schema = schema
    return response


def reply_encoded(
    text: str, status: int = 200, schema: str | None = None, headers: dict | None = None
) -> Response:
    """`reply` for a body already encoded as JSON text (stored records sent as they are)."""
    response = current_app.response_class(
        text, status=status, headers=headers, mimetype="application/json"
    )
    response.contract_schema = schema
    return response
