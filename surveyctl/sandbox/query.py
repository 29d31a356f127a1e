"""Query parameters of the sandbox's GET routes, read strictly: a malformed value is a 400."""

from __future__ import annotations

from flask import request

from surveyctl.sandbox.errors import INVALID_QUERY, bad_request


def integer_list(name: str) -> list[int] | None:
    """A comma-separated list of integers (`status=21,18`), or None when absent or empty."""
    raw = request.args.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return [int(part) for part in raw.split(",")]
    except ValueError:
        raise bad_request(
            INVALID_QUERY, f"query parameter {name} must be a comma-separated list of integers"
        ) from None


def positive_int(name: str, default: int, maximum: int | None = None) -> int:
    """An integer >= 1 (and <= maximum), or `default` when absent."""
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1 or (maximum is not None and value > maximum):
        bound = f" and at most {maximum}" if maximum is not None else ""
        raise bad_request(INVALID_QUERY, f"query parameter {name} must be an integer >= 1{bound}")
    return value
