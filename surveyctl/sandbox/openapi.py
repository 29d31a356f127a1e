"""The OpenAPI 3.1 description of the Buyer API the sandbox implements, built from `schemas/api/`.

There is no second copy of any schema: every file of `schemas/api/` becomes one entry of
`components.schemas` under its name without `.json` (`survey-create.request`), and each `$ref`
between files (`common.json#/$defs/quota_request`) is rewritten to point into the document
(`#/components/schemas/common/$defs/quota_request`). OpenAPI 3.1 schemas are JSON Schema 2020-12,
so the files need nothing else. The request schemas (and `common`, which they share with the
answers) are read in the mode of the sandbox described (`contract.schema_for`): the faithful
default leaves objects open to fields they do not list, `--strict` closes them and leaves out
the `x-lenient` fields. What this module adds is the part the schemas cannot say: the
operations (paths, methods, parameters, which schema each body and answer uses, the status codes
and headers), listed in OPERATIONS. A test checks that OPERATIONS and the app's routes under
`/buyers` are the same set.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from surveyctl import __version__
from surveyctl.sandbox import catalogue
from surveyctl.sandbox.bodies import MAX_BODY_BYTES, MAX_NUMBER
from surveyctl.sandbox.contract import AS_WRITTEN, FAITHFUL, STRICT, schema_for
from surveyctl.schemafiles import schemas_dir

API_FOLDER = "api"
COMPONENTS = "#/components/schemas/"
V2, V3 = "/buyers/v2", "/buyers/v3"

_PAGE = {
    "name": "page",
    "in": "query",
    "description": "Page number, from 1.",
    "schema": {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
}
_LIMIT = {
    "name": "limit",
    "in": "query",
    "description": "Items per page (default 100).",
    "schema": {"type": "integer", "minimum": 1, "maximum": 1000},
}
# At most 100 integers of at most 9 digits: the sandbox reads list filters into 32-bit numbers.
# Empty means no filter.
_INT_LIST = {"type": "string", "pattern": "^(-?[0-9]{1,9}(,-?[0-9]{1,9}){0,99})?$"}
# A day of YYYYMMDD; a day past the month's end (20260231) counts as its last day.
_DATE = {"type": "string", "pattern": "^[0-9]{4}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])$"}
_SURVEY_ID = {
    "name": "survey_id",
    "in": "path",
    "required": True,
    "description": "ps_survey_id",
    "schema": {"type": "integer", "minimum": 0, "maximum": MAX_NUMBER},
}
_QUOTA_ID = {
    "name": "buyer_quota_id",
    "in": "path",
    "required": True,
    "description": "buyer_quota_id; `performance` is the quota performance call, never a quota.",
    "schema": {"type": "string", "minLength": 1, "not": {"const": "performance"}},
}
_TRANSACTION_ID = {
    "name": "transaction_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1},
}
_GROUP_REF = {
    "name": "ref",
    "in": "path",
    "required": True,
    "description": "buyer_surveygroup_ref",
    "schema": {"type": "string", "minLength": 1},
}
# Spec 4.3: the quota update takes query parameters, of which a sample call shows QBS; their
# purpose is not shown, and the sandbox takes QBS without using it.
_QBS = {
    "name": "QBS",
    "in": "query",
    "description": "Named by a sample call of the spec (4.3); its purpose is not shown; not used.",
    "schema": {"type": "string"},
}
_TOTAL_PAGES = {
    "total_pages": {
        "description": "How many pages the list has.",
        "required": True,
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
}


@dataclass(frozen=True)
class Operation:
    """One operation of the Buyer API: what it takes and what it answers."""

    method: str
    path: str
    summary: str
    answer: tuple[int, str | None]  # success status and the response schema (None: no body)
    body: str | None = None  # request schema
    parameters: tuple[dict, ...] = ()
    errors: tuple[int, ...] = (400, 401, 403, 404)
    headers: dict = field(default_factory=dict)
    media_types: tuple[str, ...] = ("application/json",)
    # status -> the response schemas of that status where error.response is not the only one
    error_schemas: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # The status of a missing or unknown access-token (spec 5.2: 401 on the calls whose errors
    # list it; 403, "calls not permitted", on those that list 403 and not 401).
    key_refusal: int = 401


_SURVEY = (_SURVEY_ID,)
# A quota id of `performance` reaches the quota performance call, which answers 405 to others.
_QUOTA_ERRORS = (400, 401, 403, 404, 405)
_PATCH_TYPES = ("application/json", "application/json-patch+json")
STRICT_MEDIA_TYPES = ("application/json",)  # spec: a request with a body sends this
OPERATIONS: tuple[Operation, ...] = (
    Operation("post", f"{V2}/surveys", "Create a survey (4.1)", (201, "survey.response"),
              "survey-create.request", errors=(400, 401, 403)),
    Operation("get", f"{V2}/surveys", "The buyer's surveys, filtered and paged (public facts)",
              (200, "surveys-list.response"), parameters=(
                  {"name": "status", "in": "query",
                   "description": "11, 22, 33 or 44, or several comma-separated; 22 when absent.",
                   "schema": {"type": "string", "pattern": "^(11|22|33|44)(,(11|22|33|44))*$"}},
                  {"name": "fromDate", "in": "query", "description": "YYYYMMDD, Pacific time.",
                   "schema": _DATE},
                  {"name": "toDate", "in": "query", "description": "YYYYMMDD, Pacific time.",
                   "schema": _DATE},
                  {"name": "targeting", "in": "query",
                   "description": "0 leaves out qualifications and quotas.",
                   "schema": {"type": "integer", "enum": [0, 1]}},
                  _PAGE, _LIMIT),
              errors=(400, 401), headers=_TOTAL_PAGES),
    Operation("get", f"{V2}/surveys/{{survey_id}}", "One survey", (200, "survey.response"),
              parameters=_SURVEY),
    Operation("put", f"{V2}/surveys/{{survey_id}}", "Overwrite a survey (4.2)",
              (200, "survey-update.response"), "survey-update.request", parameters=_SURVEY),
    Operation("patch", f"{V2}/surveys/{{survey_id}}", "Partial update with a JSON Patch list",
              (200, "survey.response"), "json-patch.request", parameters=_SURVEY,
              media_types=_PATCH_TYPES, errors=(400, 401, 403, 404, 409)),
    Operation("delete", f"{V2}/surveys/{{survey_id}}", "Delete a survey", (204, None),
              parameters=_SURVEY, errors=(400, 401, 403, 404)),
    Operation("get", f"{V2}/surveys/{{survey_id}}/status", "A survey's status (public facts)",
              (200, "survey-status.response"), parameters=_SURVEY),
    Operation("put", f"{V2}/surveys/{{survey_id}}/status", "Launch, pause or close a survey",
              (200, "survey.response"), "survey-status.request", parameters=_SURVEY),
    Operation("get", f"{V2}/surveys/{{survey_id}}/performance", "Fieldwork performance",
              (200, "survey-performance.response"), parameters=_SURVEY),
    Operation("post", f"{V2}/surveys/{{survey_id}}/quotas", "Add a quota",
              (201, "quota.response"), "quota-create.request", parameters=_SURVEY),
    Operation("get", f"{V2}/surveys/{{survey_id}}/quotas", "A survey's quotas (public facts)",
              (200, "quotas-list.response"), parameters=(_SURVEY_ID, _PAGE, _LIMIT),
              headers=_TOTAL_PAGES),
    Operation("get", f"{V2}/surveys/{{survey_id}}/quotas/{{buyer_quota_id}}",
              "One quota (public facts)", (200, "quota.response"),
              parameters=(_SURVEY_ID, _QUOTA_ID), errors=_QUOTA_ERRORS),
    Operation("put", f"{V2}/surveys/{{survey_id}}/quotas/{{buyer_quota_id}}",
              "Update a quota (4.3)", (200, "quota-update.response"), "quota-update.request",
              parameters=(_SURVEY_ID, _QUOTA_ID, _QBS), errors=_QUOTA_ERRORS),
    Operation("patch", f"{V2}/surveys/{{survey_id}}/quotas/{{buyer_quota_id}}",
              "Partial quota update with a JSON Patch list", (200, "quota.response"),
              "json-patch.request", parameters=(_SURVEY_ID, _QUOTA_ID), media_types=_PATCH_TYPES,
              errors=(*_QUOTA_ERRORS, 409)),
    Operation("delete", f"{V2}/surveys/{{survey_id}}/quotas/{{buyer_quota_id}}", "Delete a quota",
              (204, None), parameters=(_SURVEY_ID, _QUOTA_ID), errors=_QUOTA_ERRORS),
    Operation("get", f"{V2}/surveys/{{survey_id}}/quotas/performance", "Completes per quota",
              (200, "quota-performance.response"), parameters=_SURVEY),
    Operation("post", f"{V2}/surveys/{{survey_id}}/transactions/{{transaction_id}}/status",
              "Set a transaction's final status", (200, "transaction-status.response"),
              parameters=(_SURVEY_ID, _TRANSACTION_ID,
                          {"name": "st", "in": "query", "required": True,
                           "description": "17, 18, 20, 21 or 30.", "schema": {"type": "integer"}},
                          {"name": "quota_id", "in": "query",
                           "description": "QLC: buyer_quota_id values, comma-separated.",
                           "schema": {"type": "string"}},
                          {"name": "sqlc", "in": "query",
                           "schema": {"type": "string", "enum": ["true", "false"]}}),
              error_schemas={400: ("transaction-status.error", "error.response")}),
    Operation("post", f"{V2}/surveygroups", "Create an exclusion group (4.8)",
              (201, "survey-group.response"), "survey-group-create.request",
              errors=(400, 401, 403, 404)),
    Operation("get", f"{V2}/surveygroups/{{ref}}", "One exclusion group (4.9)",
              (200, "survey-group.response"), parameters=(_GROUP_REF,), errors=(401, 403, 404)),
    Operation("put", f"{V2}/surveygroups/{{ref}}", "Overwrite an exclusion group (4.9)",
              (200, "survey-group.response"), "survey-group.request", parameters=(_GROUP_REF,),
              errors=(400, 401, 403, 404, 409)),
    Operation("delete", f"{V2}/surveygroups/{{ref}}", "Delete an exclusion group (4.9)",
              (204, None), parameters=(_GROUP_REF,), errors=(401, 403, 404)),
    Operation("post", f"{V2}/adjustments", "Accept transactions (4.10)",
              (202, "adjustment.response"), "adjustment.request", errors=(400, 401)),
    Operation("post", f"{V2}/adjustments/surveys/{{survey_id}}",
              "Accept transactions of one survey", (202, "adjustment.response"),
              "adjustment.request", parameters=_SURVEY),
    Operation("get", f"{V3}/attributes", "The attribute catalogue, paged (4.6)",
              (200, "attributes.response"), parameters=(
                  {"name": "localization", "in": "query", "required": True,
                   "description": "A locale such as en_US; an unknown one answers 404.",
                   "schema": {"type": "string", "pattern": "^[a-z]{2}_[A-Z]{2}$"}},
                  {"name": "class", "in": "query", "description": "Class codes, comma-separated.",
                   "schema": _INT_LIST},
                  _PAGE, {**_LIMIT, "description": "Items per page (default 20)."}),
              errors=(400, 401, 404), headers=_TOTAL_PAGES),
    Operation("get", f"{V3}/surveys/{{survey_id}}/transactions", "A survey's transactions (4.4)",
              (200, "transactions-list.response"), parameters=(
                  _SURVEY_ID,
                  {"name": "status", "in": "query", "schema": _INT_LIST},
                  {"name": "supplier_ids", "in": "query", "schema": _INT_LIST},
                  _PAGE, _LIMIT),
              errors=(400, 403, 404), headers=_TOTAL_PAGES, key_refusal=403),
    Operation("get", f"{V3}/surveys/{{survey_id}}/transactions/{{transaction_id}}",
              "One transaction (4.5)", (200, "transaction.response"),
              parameters=(_SURVEY_ID, _TRANSACTION_ID), errors=(400, 403, 404),
              key_refusal=403),
    Operation("post", f"{V3}/transactions/ps_api_fail", "Open-ended answer check (4.7)",
              (200, "text-check.response"), "text-check.request", errors=(400, 401, 422)),
)  # fmt: skip

_ERRORS = {
    400: "Bad Request: the body, a parameter or a rule of the service refuses the call",
    401: "Unauthorized: the access-token is missing or unknown",
    403: "Forbidden: the resource belongs to another buyer",
    404: "Record Not Found",
    405: "Method Not Allowed (`performance` is the quota performance call), with Allow",
    409: "Conflict: the request does not fit the resource as it is (a patch that cannot be "
    "applied, a group reference differing from the path)",
    413: "Payload Too Large: the body exceeds the size limit",
    422: "Parameter Error: more than 20 answers",
    429: "Too Many Requests (injected fault), with Retry-After",
    503: "Service Unavailable (injected fault)",
}
# The 403 of a call that refuses a missing or unknown access-token with it (spec 5.2).
_KEY_FORBIDDEN = (
    "Forbidden: the resource belongs to another buyer, or the access-token is missing or unknown"
)


@cache
def document(strict: bool = False) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the sandbox in one mode (callers get a copy)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Buyer Survey Marketplace API (surveyctl sandbox)",
            "version": __version__,
            "description": (
                "The Buyer API as the surveyctl sandbox implements it: the specification "
                "(docs/buyer-api.md), the service's public documentation, and the sandbox's own "
                "decisions where both are silent (docs/api-assumptions.md). Version 2 routes "
                f"live under {V2}, version 3 under {V3}. Request bodies are limited to "
                f"{MAX_BODY_BYTES // (1024 * 1024)} MiB."
            ),
        },
        "servers": [{"url": "/", "description": "the sandbox serving this document"}],
        "security": [{"accessToken": []}],
        "paths": _paths(strict),
        "components": {
            "schemas": _schemas(STRICT if strict else FAITHFUL),
            "securitySchemes": {
                "accessToken": {"type": "apiKey", "in": "header", "name": "access-token"}
            },
        },
    }


def openapi_document(strict: bool = False) -> dict[str, Any]:
    """A copy of the description of the sandbox served in the default or the strict mode."""
    return copy.deepcopy(document(strict))


def component_name(file_name: str) -> str:
    """`survey-create.request.json` -> `survey-create.request`."""
    return file_name.removesuffix(".json")


def _schemas(mode: str) -> dict[str, Any]:
    schemas: dict[str, Any] = {JSON_VALUE: _json_value()}
    for path in sorted((schemas_dir() / API_FOLDER).glob("*.json")):
        taken = path.name.endswith(".request.json") or path.name == "common.json"
        schema = copy.deepcopy(schema_for(path.name, mode if taken else AS_WRITTEN))
        schema.pop("$schema", None)
        schema = _rewrite_refs(schema, path.name)
        if path.name == "common.json":  # the locales this sandbox's catalogue serves
            schema["$defs"]["locale"] = {**schema["$defs"]["locale"], "enum": catalogue.locales()}
        schemas[component_name(path.name)] = _bounded(schema, mode == FAITHFUL) if taken else schema
    return schemas


JSON_VALUE = "json-value"
_ANY_VALUE = {"$ref": COMPONENTS + JSON_VALUE}


def _json_value() -> dict[str, Any]:
    """What the sandbox takes where a body may carry any JSON: numbers within 64 bits."""
    return {
        "description": "Any JSON value whose numbers are within 64 bits (others are refused).",
        "anyOf": [
            {"type": ["string", "boolean", "null"]},
            {"type": "number", "minimum": -MAX_NUMBER, "maximum": MAX_NUMBER},
            {"type": "array", "items": _ANY_VALUE},
            {"type": "object", "additionalProperties": _ANY_VALUE},
        ],
    }


def _bounded(node: Any, opened: bool) -> Any:
    """A request schema as the sandbox reads bodies: every number within 64 bits (`bodies`
    refuses others anywhere in a body), and, where objects are open (the faithful mode),
    the fields they do not list as any such JSON value."""
    if isinstance(node, list):
        return [_bounded(item, opened) for item in node]
    if not isinstance(node, dict):
        return node
    bounded = {key: _bounded(value, opened) for key, value in node.items()}
    kinds = node.get("type")
    kinds = {kinds} if isinstance(kinds, str) else set(kinds or ())
    if kinds & {"number", "integer"}:
        if "maximum" not in bounded and "exclusiveMaximum" not in bounded:
            bounded["maximum"] = MAX_NUMBER
        if "minimum" not in bounded and "exclusiveMinimum" not in bounded:
            bounded["minimum"] = -MAX_NUMBER
    properties = bounded.get("properties")
    if isinstance(properties, dict):
        bounded["properties"] = {k: v or dict(_ANY_VALUE) for k, v in properties.items()}
        if opened and "additionalProperties" not in bounded:
            bounded["additionalProperties"] = dict(_ANY_VALUE)
    return bounded


def _rewrite_refs(node: Any, file_name: str) -> Any:
    """Every `$ref` of a file of schemas/api, pointing into the document instead."""
    if isinstance(node, dict):
        rewritten = {key: _rewrite_refs(value, file_name) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target, _, fragment = ref.partition("#")
            rewritten["$ref"] = COMPONENTS + component_name(target or file_name) + fragment
        return rewritten
    if isinstance(node, list):
        return [_rewrite_refs(item, file_name) for item in node]
    return node


def _paths(strict: bool) -> dict[str, Any]:
    paths: dict[str, dict] = {}
    for operation in OPERATIONS:
        paths.setdefault(operation.path, {})[operation.method] = _operation(operation, strict)
    return paths


def _operation(operation: Operation, strict: bool) -> dict[str, Any]:
    status, schema = operation.answer
    success: dict[str, Any] = {"description": operation.summary}
    if schema is not None:
        success["content"] = {"application/json": {"schema": {"$ref": COMPONENTS + schema}}}
    if operation.headers:
        success["headers"] = operation.headers
    responses = {str(status): success}
    codes = {*operation.errors, operation.key_refusal, 429, 503}
    if operation.body is not None:
        codes |= {400, 413}
    for code in sorted(codes):
        responses[str(code)] = _error(code, operation.error_schemas.get(code))
    if operation.key_refusal != 401:
        responses[str(operation.key_refusal)]["description"] = _KEY_FORBIDDEN
    entry: dict[str, Any] = {
        "operationId": f"{operation.method}_{_slug(operation.path)}",
        "summary": operation.summary,
        "responses": responses,
    }
    if operation.parameters:
        entry["parameters"] = list(operation.parameters)
    if operation.body is not None:
        body_schema = {"$ref": COMPONENTS + operation.body}
        entry["requestBody"] = {
            "required": True,
            # The spec's convention is application/json; the default mode reads the others.
            "content": {
                media: {"schema": body_schema}
                for media in (STRICT_MEDIA_TYPES if strict else operation.media_types)
            },
        }
    return entry


def _error(code: int, schemas: tuple[str, ...] | None) -> dict[str, Any]:
    refs = [{"$ref": COMPONENTS + name} for name in schemas or ("error.response",)]
    answer: dict[str, Any] = {
        "description": _ERRORS[code],
        "content": {"application/json": {"schema": refs[0] if len(refs) == 1 else {"anyOf": refs}}},
    }
    if code == 429:
        answer["headers"] = {
            "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "string"}}
        }
    if code == 405:
        answer["headers"] = {
            "Allow": {"description": "The methods the path takes.", "schema": {"type": "string"}}
        }
    return answer


# Path parameters a Flask `path` converter reads: they may hold a slash.
_SLASHED_PARAMETERS = frozenset({"transaction_id", "ref"})


@cache
def _key_refusals() -> tuple[tuple[str, re.Pattern[str], int], ...]:
    """(method, path pattern, status) of each operation that refuses a bad key otherwise than
    with 401. A pattern takes any segment where the description has a parameter, so a request
    the routes do not match (`/surveys/-1/transactions`) is refused as its operation's is."""

    def pattern(path: str) -> re.Pattern[str]:
        parts = re.split(r"\{(\w+)\}", path)
        return re.compile(
            "".join(
                (".+" if part in _SLASHED_PARAMETERS else "[^/]+") if odd else re.escape(part)
                for odd, part in ((n % 2 == 1, part) for n, part in enumerate(parts))
            )
        )

    return tuple(
        (o.method, pattern(o.path), o.key_refusal) for o in OPERATIONS if o.key_refusal != 401
    )


def key_refusal(method: str, path: str) -> int:
    """The status a missing or unknown access-token gets on a request of `method` to `path`:
    that of the operation the path names (401 for every other)."""
    method = "get" if method.lower() == "head" else method.lower()  # HEAD is served as GET
    return next(
        (status for m, p, status in _key_refusals() if m == method and p.fullmatch(path)), 401
    )


def _slug(path: str) -> str:
    return "_".join(part.strip("{}") for part in path.removeprefix("/buyers/").split("/") if part)
