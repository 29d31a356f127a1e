"""A live body reshaped to the update contract, as an import writes it into a manifest.

The service's documented responses carry shapes the update body (spec 2.2) does not take:
fields the spec does not list (`mod_on`, `crtd_on`), numbers written as strings (a range
bound `"from": "21"`), empty strings and nulls (`quota_title: ""`, `buyer_message: null`).
`conform(body, schema)` walks the body beside a JSON Schema of `schemas/api/` and keeps what the
contract describes, in the type it names:

- a field an object's schema does not list is dropped;
- a string where the schema wants a number or an integer becomes that number ("21" -> 21,
  "2.5" -> 2.5), and a whole float where it wants an integer becomes an int;
- a number where the schema wants only a string becomes its text (condition code 111 -> "111");
- a field whose value is null or "" is left out (both mean "not set" to the service);
- a field the schema marks `x-lenient` is dropped too: the service takes it, but a sandbox
  served strict refuses it, and surveyctl never sends what the strict sandbox refuses.

Anything else (a string that is no number, a wrong nesting) is kept as it is, so that manifest
validation names it instead of surveyctl guessing. `$ref`s between the schema files are
resolved with the `referencing` library.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from referencing import Registry, Resource

from surveyctl.numbers import as_number
from surveyctl.schemafiles import load_schema, schemas_dir

API_FOLDER = "api"
SURVEY_UPDATE_SCHEMA = "survey-update.request.json"


@cache
def _registry() -> Registry:
    resources = [
        (path.name, Resource.from_contents(load_schema(f"{API_FOLDER}/{path.name}")))
        for path in sorted((schemas_dir() / API_FOLDER).glob("*.json"))
    ]
    return Registry().with_resources(resources)


def schema_of(name: str) -> dict:
    """The schema `schemas/api/<name>`."""
    return load_schema(f"{API_FOLDER}/{name}")


def conform(value: Any, schema: dict) -> Any:
    """`value` reshaped to `schema` by the rules above; `value` itself is not changed."""
    schema = _resolved(schema)
    if isinstance(value, dict):
        properties = schema.get("properties")
        if properties is None:
            return dict(value)
        # In the contract's order, so that a manifest reads the same whatever the service's.
        return {
            name: conform(value[name], subschema)
            for name, subschema in properties.items()
            if value.get(name) is not None
            and value.get(name) != ""
            and not subschema.get("x-lenient")
        }
    if isinstance(value, list):
        items = schema.get("items")
        return [conform(item, items) if items else item for item in value]
    return _scalar(value, _types(schema))


def _resolved(schema: dict) -> dict:
    resolver = _registry().resolver()
    while isinstance(schema, dict) and ("$ref" in schema or "anyOf" in schema):
        if "$ref" not in schema:  # `{"anyOf": [{"$ref": ...}, {"type": "null"}]}`: the value's
            schema = next((b for b in schema["anyOf"] if b.get("type") != "null"), {})
            continue
        resolved = resolver.lookup(schema["$ref"])
        schema, resolver = resolved.contents, resolved.resolver
    return schema if isinstance(schema, dict) else {}


def _types(schema: dict) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    return set(kind or ())


def _scalar(value: Any, types: set[str]) -> Any:
    numeric = types & {"number", "integer"}
    if isinstance(value, str) and numeric and "string" not in types:
        number = _number(value)
        if number is None:
            return value
        value = number
    if isinstance(value, float) and "integer" in types and value.is_integer():
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and types == {"string"}:
        return str(value)
    return value


def _number(text: str) -> int | float | None:
    """The number `text` names, by the rule every reader of the service's numbers follows
    (`surveyctl.numbers`): "nan", "1_000" or "٣" name none, and stay text for validation."""
    number = as_number(text)
    return number if isinstance(number, int | float) and not isinstance(number, bool) else None
