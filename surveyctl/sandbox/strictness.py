"""What the strict mode refuses of a request before its view reads it: the parts the schemas of
`schemas/api/` cannot judge (see docs/sandbox.md for the whole list).

The contract is the operation's OpenAPI description (`openapi.OPERATIONS`) and the spec's
convention that a request with a body sends `Content-Type: application/json`. The default mode
reads each of these leniently, as a forgiving server would (the first of two `page` parameters,
`+1` for 1, `application/vnd.foo+json` for JSON, a body on a GET ignored); a client that leans
on it may fail on a service that reads them otherwise, so the strict mode refuses:

- a query parameter the operation does not list, one given twice, or one whose value is not
  written as the description's schema says (an integer in plain digits, a pattern, an enum);
- a body on an operation that takes none (GET, DELETE, the transaction status call);
- a body of an operation that takes one sent as anything but `application/json` (a `charset`
  parameter, when given, must be UTF-8: RFC 8259 8.1).

The body itself (UTF-8, duplicate names, nulls) is judged as it is read (`bodies`,
`contract`). A route the description leaves out (the sandbox's own `/sandbox`) is not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from flask import request
from jsonschema import Draft202012Validator

from surveyctl.sandbox.errors import INVALID_BODY, INVALID_QUERY, ApiProblem, bad_request
from surveyctl.sandbox.openapi import OPERATIONS, STRICT_MEDIA_TYPES, Operation

_FLASK_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")  # `<int:survey_id>` -> `{survey_id}`
_INTEGER = re.compile(r"-?[0-9]+")


def refuse_sloppiness(method: str, rule: str) -> None:
    """A 400 for the first of the above that the current request does, on the operation served
    by `method` and the Flask `rule`."""
    described = _described_by_rule(method.upper(), rule)
    if described is not None:
        _refuse_query(described.query)
        _refuse_body(described.operation)


@dataclass(frozen=True, eq=False)
class _Described:
    """An operation and a validator of each of its query parameters, made once."""

    operation: Operation
    query: dict[str, tuple[dict, Draft202012Validator]]


@cache
def _described_by_rule(method: str, rule: str) -> _Described | None:
    """The described operation a Flask rule serves, worked out once per rule."""
    return _described().get((method, _FLASK_PARAMETER.sub(r"{\1}", rule)))


@cache
def _described() -> dict[tuple[str, str], _Described]:
    return {
        (operation.method.upper(), operation.path): _Described(
            operation,
            {
                p["name"]: (p["schema"], Draft202012Validator(p["schema"]))
                for p in operation.parameters
                if p["in"] == "query"
            },
        )
        for operation in OPERATIONS
    }


def _refuse_query(listed: dict[str, tuple[dict, Draft202012Validator]]) -> None:
    unlisted = [name for name in request.args if name not in listed]
    if unlisted:
        takes = f"takes {', '.join(listed)}" if listed else "takes none"
        raise bad_request(
            INVALID_QUERY,
            f"unknown query parameter{'s' if len(unlisted) > 1 else ''} {', '.join(unlisted)} "
            f"(this call {takes})",
        )
    for name, values in request.args.lists():
        if len(values) > 1:
            # Read leniently, the first counts; other servers take the last, or a list.
            raise bad_request(
                INVALID_QUERY, f"query parameter {name} given {len(values)} times (send it once)"
            )
        problem = _value_problem(*listed[name], values[0])
        if problem:
            raise bad_request(INVALID_QUERY, f"query parameter {name}: {problem}")


def _value_problem(schema: dict, validator: Draft202012Validator, raw: str) -> str | None:
    """How `raw` breaks the parameter's schema, or None."""
    value: Any = raw
    if schema.get("type") == "integer":
        if not _INTEGER.fullmatch(raw):
            return f"{raw!r} is not an integer written in plain digits"
        value = int(raw)
    error = next(iter(validator.iter_errors(value)), None)
    if error is None:
        return None
    reasons = {"pattern": "is not written as the call takes it", "enum": "is not one it takes"}
    return f"{raw!r} {reasons.get(error.validator, 'is out of its range')}"


def _refuse_body(operation: Operation) -> None:
    if operation.body is None:
        if _has_body():
            raise ApiProblem(
                400,
                INVALID_BODY,
                f"{operation.method.upper()} {operation.path} takes no body: send none",
            )
        return
    if not _has_body() and "Content-Type" not in request.headers:
        return  # the view answers a missing body
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    others = set(request.mimetype_params) - {"charset"}
    if request.mimetype not in STRICT_MEDIA_TYPES or others or charset not in ("utf-8", "utf8"):
        shown = request.headers.get("Content-Type", "none")
        wanted = STRICT_MEDIA_TYPES[0]
        raise ApiProblem(
            400, INVALID_BODY, f"the body must be sent as Content-Type: {wanted}, not {shown}"
        )


def _has_body() -> bool:
    if request.content_length:
        return True
    return "chunked" in request.headers.get("Transfer-Encoding", "").lower()
