"""The waves of a SurveyProgram: a list (ids, or mappings with an id, variables and spec) or a
range (`{from: 2026-01, to: 2026-12}` one a month, or two whole numbers), in order.

Every id follows the rule of a member's name (`tracker[en_GB,<wave>]`, see
`surveyctl.resources.WAVE_PATTERN`), however it is written, and a program names at most
MAX_WAVES of them; a range is counted from its ends before any wave is made.
"""

from __future__ import annotations

import re
from typing import Any

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import MarkedDict, MarkedList
from surveyctl.manifests.schema import FRACTION_READING
from surveyctl.resources import WAVE_PATTERN

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
MAX_WAVES = 1_000
_WAVE = re.compile(WAVE_PATTERN)


def waves_of(spec: MarkedDict, diagnostics: Diagnostics) -> list[tuple[str, Any, Location]]:
    """(id, its mapping or None, its line) of every wave, in order."""
    waves = spec["waves"]
    if isinstance(waves, MarkedList):
        if len(waves) > MAX_WAVES:
            diagnostics.error(
                f"spec.waves lists {len(waves):,} waves; at most {MAX_WAVES:,}", waves.location
            )
            return []
        out = []
        fractions = False
        for index, item in enumerate(waves):
            wave_id = item["id"] if isinstance(item, dict) else item
            if isinstance(wave_id, float):
                field = f"spec.waves[{index}]" + (".id" if isinstance(item, dict) else "")
                where = item.where("id") if isinstance(item, MarkedDict) else waves.where(index)
                diagnostics.error(f"{field} is {fraction_hint(wave_id)}", where)
                fractions = True
                continue
            out.append((str(wave_id), item if isinstance(item, dict) else None, waves.where(index)))
        _unique(out, diagnostics)
        return out if _ids_valid(out, diagnostics) and not fractions else []
    start, end = waves["from"], waves["to"]
    where = waves.location
    bounds = _range_bounds(start, end)
    if bounds is None:
        diagnostics.error(
            f"spec.waves: from {start!r} and to {end!r} must be two months (YYYY-MM) or two "
            "whole numbers, the first not after the second",
            where,
        )
        return []
    first, last, months = bounds
    count = last - first + 1
    if count > MAX_WAVES:  # counted before any is made: `to` may be a trillion
        diagnostics.error(f"spec.waves names {count:,} waves; at most {MAX_WAVES:,}", where)
        return []
    out = [(_wave_id(n, months), None, where) for n in range(first, last + 1)]
    # Ids between two valid ones are valid: checking the ends says it once for a range.
    return out if _ids_valid([out[0], out[-1]], diagnostics) else []


def fraction_hint(value: float) -> str:
    """Why a number with a dot is not taken for a wave id, and what to write instead.

    YAML 1.1 reads a plain `2026.10` as the number 2026.1 and `1.0` as 1.0: the text as
    written is lost (2026.10 and 2026.1 are the same number, October and January), so no id
    made from the number is surely the one meant; quoting keeps the text."""
    whole = f", or write the whole number {int(value)}" if value.is_integer() else ""
    return f"the number {value!r}, not a wave id: {FRACTION_READING}{whole}"


def _ids_valid(waves: list[tuple[str, Any, Location]], diagnostics: Diagnostics) -> bool:
    """Whether every id follows the rule of a member's name (`tracker[en_GB,<wave>]`): a
    whole number can break it where text cannot (-3, a 40-digit number), and a member whose
    name breaks it could not be named in --target, `render --name` or the state commands."""
    valid = True
    for wave_id, _, where in waves:
        if not _WAVE.match(wave_id):
            diagnostics.error(
                f"Wave id {wave_id!r} is not valid: a wave id is 1 to 32 letters, digits, dots, "
                "dashes and underscores, starting and ending with a letter or digit",
                where,
            )
            valid = False
    return valid


def _range_bounds(start: Any, end: Any) -> tuple[int, int, bool] | None:
    """(first, last, months) of a range: two whole numbers, or two months counted from year
    0 (`months` True); None when it is neither or runs backwards."""
    if _whole(start) and _whole(end):
        return (start, end, False) if start <= end else None
    first, last = _MONTH.match(str(start)), _MONTH.match(str(end))
    if not (first and last):
        return None
    begin, stop = (int(first[1]), int(first[2])), (int(last[1]), int(last[2]))
    if not (1 <= begin[1] <= 12 and 1 <= stop[1] <= 12) or begin > stop:
        return None
    return begin[0] * 12 + begin[1] - 1, stop[0] * 12 + stop[1] - 1, True


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wave_id(number: int, months: bool) -> str:
    """The id of the wave `number` of a range: `2026-11` for a month, else the number."""
    if not months:
        return str(number)
    year, month = divmod(number, 12)
    return f"{year:04d}-{month + 1:02d}"


def _unique(waves: list[tuple[str, Any, Location]], diagnostics: Diagnostics) -> None:
    seen: dict[str, Location] = {}
    for wave_id, _, where in waves:
        if wave_id in seen:
            diagnostics.error(
                f"Wave {wave_id!r} is listed twice; first at line {seen[wave_id].line}", where
            )
        seen.setdefault(wave_id, where)
