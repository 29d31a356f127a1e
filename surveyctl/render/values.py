"""How a value from a body is shown in a plan: compact JSON, shortened when long."""

from __future__ import annotations

import json
from typing import Any

LIMIT = 120


def show(value: Any, limit: int | None = LIMIT) -> str:
    """`"text"`, `12`, `true`, `["111","112"]`; `(absent)` for a field that is not set.
    Longer than `limit` characters, it is cut with `...` (never with `limit=None`)."""
    if value is None:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def money(amount: float | None) -> str:
    return "n/a" if amount is None else f"${amount:,.2f}"


def money_delta(before: float | None, after: float | None) -> str:
    delta = (after or 0.0) - (before or 0.0)
    sign = "+" if delta >= 0 else "-"
    return f"{sign}${abs(delta):,.2f}"
