"""Query parameters of the sandbox's routes, read strictly: a malformed value is a 400."""

from __future__ import annotations

import calendar
from collections.abc import Collection
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import request

from surveyctl.sandbox.errors import INVALID_QUERY, bad_request

# Larger values would not fit SQLite's 64-bit integers (an OFFSET, a status): no page, limit
# or code the sandbox serves comes anywhere near it.
MAX_QUERY_INT = 2**31 - 1
_MAX_LIST_ITEMS = 100

try:
    PACIFIC: timezone | ZoneInfo = ZoneInfo("America/Los_Angeles")
except ZoneInfoNotFoundError:  # no time zone database (some Windows installs): standard time
    PACIFIC = timezone(timedelta(hours=-8), "PST")


def integer_list(name: str) -> list[int] | None:
    """A comma-separated list of integers (`status=21,18`), or None when absent or empty."""
    raw = request.args.get(name)
    if raw is None or raw.strip() == "":
        return None
    values = [_int(part) for part in raw.split(",")]
    if len(values) > _MAX_LIST_ITEMS or any(v is None or abs(v) > MAX_QUERY_INT for v in values):
        raise bad_request(
            INVALID_QUERY, f"query parameter {name} must be a comma-separated list of integers"
        )
    return values


def positive_int(name: str, default: int, maximum: int | None = None) -> int:
    """An integer >= 1 (and <= maximum, at most MAX_QUERY_INT), or `default` when absent."""
    raw = request.args.get(name)
    if raw is None:
        return default
    bound = min(maximum or MAX_QUERY_INT, MAX_QUERY_INT)
    value = _int(raw)
    if value is None or not 1 <= value <= bound:
        raise bad_request(
            INVALID_QUERY, f"query parameter {name} must be an integer from 1 to {bound}"
        )
    return value


def choice(name: str, allowed: Collection[int], default: int) -> int:
    """One integer among `allowed`, or `default` when absent."""
    raw = request.args.get(name)
    if raw is None:
        return default
    value = _int(raw)
    if value not in allowed:
        names = ", ".join(str(v) for v in sorted(allowed))
        raise bad_request(INVALID_QUERY, f"query parameter {name} must be one of {names}")
    return value


def code_list(name: str, allowed: Collection[int], default: int) -> list[int]:
    """Codes among `allowed`, comma-separated exactly as written (`11,22`), or [default]
    when the parameter is absent."""
    raw = request.args.get(name)
    if raw is None:
        return [default]
    codes = {str(code) for code in allowed}
    parts = raw.split(",")
    if not all(part in codes for part in parts):
        names = ", ".join(sorted(codes))
        raise bad_request(
            INVALID_QUERY, f"query parameter {name} must be among {names}, comma-separated"
        )
    return [int(part) for part in parts]


def pacific_day(name: str, *, end: bool = False) -> str | None:
    """A YYYYMMDD date in Pacific time as an ISO 8601 UTC bound: the start of that day, or with
    `end` the start of the next day (an exclusive bound). None when absent."""
    raw = request.args.get(name)
    if raw is None:
        return None
    if len(raw) != 8 or not raw.isascii() or not raw.isdigit():
        raise bad_request(INVALID_QUERY, f"query parameter {name} must be a date YYYYMMDD")
    year, month, day_of_month = int(raw[:4]), int(raw[4:6]), int(raw[6:])
    if not (1 <= month <= 12 and 1 <= day_of_month <= 31):
        raise bad_request(INVALID_QUERY, f"query parameter {name} must be a date YYYYMMDD")
    # Leniently, as a filter: a day past the month's end is its last day, year 0000 is year 1,
    # and a bound past the calendar's ends is the end itself.
    year = max(year, 1)
    day = date(year, month, min(day_of_month, calendar.monthrange(year, month)[1]))
    if end and day == date.max:
        return "9999-12-31T23:59:59.999Z"
    if end:
        day += timedelta(days=1)
    try:
        moment = datetime.combine(day, time(), tzinfo=PACIFIC).astimezone(UTC)
    except OverflowError:  # the last day, shifted past 9999 by the time zone
        return "9999-12-31T23:59:59.999Z"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _int(raw: str) -> int | None:
    text = raw.strip()
    # ASCII digits only: int() also takes other scripts' digits and "1_000".
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit() or len(digits) > 12:
        return None
    return int(text)
