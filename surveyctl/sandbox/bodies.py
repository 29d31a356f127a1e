"""Request bodies read safely: every malformed body is a 400 (or a 413), never a 500.

Python's JSON reader is more lenient than JSON and than the service: it takes `NaN` and
`Infinity`, turns `1e400` into an infinite float, and parses integers of any size, none of
which SQLite, arithmetic or a later JSON answer survive. It also recurses once per nesting
level. So a body is refused when it is not JSON, holds a non-finite number or a number beyond
64 bits, or nests deeper than MAX_DEPTH; the size limit (MAX_BODY_BYTES, enforced by werkzeug
while reading) answers 413. The strict mode also refuses a body that is not UTF-8 or names a
field twice in one object, which Python's reader takes.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from flask import request

from surveyctl.sandbox import contract
from surveyctl.sandbox.errors import INVALID_BODY, ApiProblem

MAX_BODY_BYTES = 16 * 1024 * 1024  # a 100,000-transaction adjustment is about 5 MB
MAX_DEPTH = 32  # the deepest body of the API nests 6 levels
MAX_NUMBER = 2**63 - 1  # SQLite's INTEGER


def read_json() -> Any:
    """The request's body parsed and checked; a 400 ApiProblem when it is not acceptable."""
    if not request.is_json:
        raise _invalid("the body must be JSON (Content-Type: application/json)")
    data = request.get_data(cache=True)  # 413 past MAX_CONTENT_LENGTH
    try:
        body = _strictly_parsed(data) if contract.strict_mode() else _parsed(data)
    except RecursionError:
        raise _invalid(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        raise _invalid("the body is not valid JSON") from None
    problem = _problem(body)
    if problem:
        raise _invalid(problem)
    return body


def request_body(schema: str) -> Any:
    """The request's JSON body, checked against `schemas/api/<schema>` (400 otherwise), as the
    app's mode reads it (faithful: without the fields the schema does not list)."""
    return contract.check_request(schema, read_json())


def _parsed(data: bytes) -> Any:
    # json.loads reads UTF-16 and UTF-32 too, and a repeated name as its last value.
    return json.loads(data, parse_constant=_refuse_constant)


def _strictly_parsed(data: bytes) -> Any:
    """The strict mode's reading: UTF-8 without a byte order mark, as JSON sent over a network
    must be (RFC 8259 8.1), and every name once in its object (readers differ on which of two
    they keep, 8.4)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise ApiProblem(400, INVALID_BODY, "the body starts with a byte order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiProblem(400, INVALID_BODY, "the body is not UTF-8") from None
    return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_names)


def _unique_names(pairs: list[tuple[str, Any]]) -> dict:
    body = dict(pairs)
    if len(body) < len(pairs):
        counts = Counter(name for name, _ in pairs)
        shown = ", ".join(sorted(name for name, count in counts.items() if count > 1))
        raise ApiProblem(400, INVALID_BODY, f"the body names {shown} more than once in one object")
    return body


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _problem(body: Any) -> str | None:
    """What makes a parsed body unacceptable (depth, a number out of range), or None.

    Walks the body with an explicit stack, so depth costs no recursion."""
    stack: list[tuple[Any, int, str]] = [(body, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return f"the body nests deeper than {MAX_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                path = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"
                stack.append((item, depth + 1, path))
        elif isinstance(value, float) and not (math.isfinite(value) and abs(value) <= MAX_NUMBER):
            return f"field {where.lstrip('.') or '(body)'}: {value!r} is out of range"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
            return f"field {where.lstrip('.') or '(body)'}: the number is beyond 64 bits"
    return None


def _invalid(message: str) -> ApiProblem:
    return ApiProblem(400, INVALID_BODY, message)
