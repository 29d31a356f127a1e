"""The contract: JSON Schemas of `schemas/api/` checking what the sandbox receives and sends.

Schemas refer to each other by file name (`common.json#/$defs/quota_request`); `registry()`
holds every file of the folder under its name, so a validator resolves those `$ref`s with the
`referencing` library.

A view answers through `reply(body, status, schema)`: the response remembers the schema it
must meet, and with `check_responses` on the app validates it on the way out (a violation
becomes a 500 naming it). Request bodies go through `check_request`, which turns the first
violation into a 400 naming the field by its JSON path, such as `quotas[0].required_count`.
"""

from __future__ import annotations

from collections import deque
from functools import cache
from typing import Any

from flask import Response, current_app, json
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from surveyctl.sandbox.errors import INVALID_BODY, ApiProblem
from surveyctl.schemafiles import load_schema, schemas_dir

API_FOLDER = "api"


@cache
def registry() -> Registry:
    """Every schema of `schemas/api/`, registered under its file name."""
    resources = [
        (path.name, Resource.from_contents(load_schema(f"{API_FOLDER}/{path.name}")))
        for path in sorted((schemas_dir() / API_FOLDER).glob("*.json"))
    ]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for `schemas/api/<name>`."""
    return Draft202012Validator(load_schema(f"{API_FOLDER}/{name}"), registry=registry())


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
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        unknown = sorted(name for name in error.instance if name not in known)
        names = ", ".join(prefix + name for name in unknown)
        return f"unknown field{'s' if len(unknown) > 1 else ''} {names}"
    return f"field {where or '(body)'}: {error.message}"


def check_request(name: str, body: Any) -> None:
    """Raises a 400 ApiProblem describing the first way `body` breaks `schemas/api/<name>`."""
    error = best_match(validator(name).iter_errors(body))
    if error is not None:
        raise ApiProblem(400, INVALID_BODY, f"invalid request body: {describe(error)}")


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
