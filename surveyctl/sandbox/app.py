"""The Flask app of the sandbox: blueprints, authentication, faults, errors and the contract.

`create_app(store, ...)` registers every blueprint of `routes.BLUEPRINTS`; a new route module
adds its blueprint to that list. A blueprint reaches the data through `current.get_store()`
and the calling buyer through `accounts.current_buyer()`; it answers through
`contract.reply(body, status, schema)` so that its responses are checked like the others.

Order of work for a request under `/buyers`: latency, fault injection and the rate limit
(before any data is touched), authentication (a missing or unknown key is a 401, or a 403 on
the calls whose errors list 403 and not 401: the transaction reads, spec 5.2 and 7), then the
view. The sandbox-only routes under
`/sandbox` take the buyer's access-token too, so one buyer cannot drive another's traffic.

No bad request is answered 500: bodies go through `bodies.read_json` (400, or 413 past the size
limit), path ids beyond 64 bits are a 400, a wrong method is a 405 with `Allow`; a 500 is a bug
of the sandbox and says so (code 1098).
"""

from __future__ import annotations

import sqlite3

from flask import Blueprint, Flask, current_app, json, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from surveyctl.sandbox import contract, strictness
from surveyctl.sandbox.accounts import Accounts
from surveyctl.sandbox.bodies import MAX_BODY_BYTES, MAX_NUMBER
from surveyctl.sandbox.converters import QuotaIdConverter
from surveyctl.sandbox.current import install_store
from surveyctl.sandbox.errors import (
    CONTRACT_VIOLATION,
    INVALID_BODY,
    INVALID_QUERY,
    METHOD_NOT_ALLOWED,
    NOT_FOUND,
    SERVER_ERROR,
    TOO_LARGE,
    ApiProblem,
    BadPathParameter,
    refused_by_the_disk,
)
from surveyctl.sandbox.faults import Faults
from surveyctl.sandbox.openapi import key_refusal
from surveyctl.sandbox.ratelimit import RateLimit
from surveyctl.sandbox.routes import BLUEPRINTS
from surveyctl.sandbox.store import Store

API_PREFIX = "/buyers/"
SANDBOX_PREFIX = "/sandbox/"
ERROR_SCHEMA = "error.response.json"


class BoundedIntConverter(IntegerConverter):
    """`<int:...>` path parameters: digits as werkzeug reads them, but a value beyond 64 bits
    (no id can be that large, and SQLite could not look it up) is a 400, not a 500."""

    def to_python(self, value: str) -> int:
        number = super().to_python(value)
        if number > MAX_NUMBER:
            raise BadPathParameter(f"the path parameter {value} is beyond 64 bits")
        return number


def create_app(
    store: Store,
    *,
    accounts: Accounts | None = None,
    faults: Faults | None = None,
    check_responses: bool = False,
    blueprints: list[Blueprint] | None = None,
    rate_limit: RateLimit | None = None,
    strict: bool = False,
) -> Flask:
    """The sandbox app over `store`, with the given accounts, faults, rate limit and
    blueprints; `strict` refuses request fields the schemas do not list (see `contract`)."""
    app = Flask("surveyctl.sandbox", static_folder=None)
    app.config[contract.STRICT_KEY] = strict
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.url_map.converters["int"] = BoundedIntConverter
    app.url_map.converters["quota"] = QuotaIdConverter
    install_store(app, store)
    accounts = accounts or Accounts()
    faults = faults or Faults()
    for buyer_id in sorted(accounts.buyer_ids()):
        store.ensure_buyer(buyer_id)
    for target in BLUEPRINTS if blueprints is None else blueprints:
        app.register_blueprint(target)

    @app.before_request
    def _before() -> None:
        faults.delay()
        if request.path.startswith(API_PREFIX):
            faults.maybe_refuse()
            if rate_limit is not None:
                rate_limit.take(request.headers.get("access-token", ""))
            accounts.authenticate(key_refusal(request.method, request.path))
            if strict and request.url_rule is not None:
                strictness.refuse_sloppiness(request.method, request.url_rule.rule)
        elif request.path.startswith(SANDBOX_PREFIX):
            accounts.authenticate()

    @app.errorhandler(ApiProblem)
    def _problem(problem: ApiProblem):
        return contract.reply(problem.body(), problem.status, ERROR_SCHEMA, problem.headers)

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException):
        status = error.code or 500
        message = error.description or error.name
        if status == 413:
            message = f"the body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB"
        if status >= 500:
            message = f"internal error of the sandbox (a bug): {error.name}"
        # Allow is the one header of werkzeug's answer worth keeping (a 405 must carry it).
        headers = {k: v for k, v in error.get_headers() if k.lower() == "allow"}
        return contract.reply(
            {"ps_api_response_code": _code_of(error), "ps_api_response_message": message},
            status,
            ERROR_SCHEMA,
            headers,
        )

    @app.errorhandler(sqlite3.OperationalError)
    def _unwritable(error: sqlite3.OperationalError):
        # A full disk is no bug of the sandbox: the 500 says which file and what to do.
        if not refused_by_the_disk(error):
            raise error
        message = f"the sandbox cannot write its data in {store.db_path} ({error}); free some space"
        body = {"ps_api_response_code": SERVER_ERROR, "ps_api_response_message": message}
        return contract.reply(body, 500, ERROR_SCHEMA)

    if check_responses:
        app.after_request(_check_response)
    return app


def _code_of(error: HTTPException) -> int:
    if isinstance(error, BadPathParameter):
        return INVALID_QUERY
    codes = {404: NOT_FOUND, 405: METHOD_NOT_ALLOWED, 413: TOO_LARGE}
    if (error.code or 500) >= 500:
        return SERVER_ERROR
    return codes.get(error.code, INVALID_BODY)


def _check_response(response):
    """Answers 500 naming the violation when a response breaks its schema."""
    schema = getattr(response, "contract_schema", None)
    if schema is None:
        if response.is_json and request.path.startswith(API_PREFIX):
            return _violation(f"{request.method} {request.path} answered without a contract")
        return response
    problem = contract.violation(schema, response.get_json())
    if problem is None:
        return response
    return _violation(f"{request.method} {request.path} broke {schema}: {problem}")


def _violation(message: str):
    response = current_app.response_class(
        json.dumps(
            {"ps_api_response_code": CONTRACT_VIOLATION, "ps_api_response_message": message}
        ),
        status=500,
        mimetype="application/json",
    )
    return response
