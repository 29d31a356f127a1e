"""The sandbox's attribute catalogue: the qualifications a buyer targets per locale (spec 2.8).

The data ships in `data/`: `attributes.json` holds every attribute once, with its
language-neutral fields and its English texts; `data/locales/<locale>.json` names the locale's
language and carries what differs there (translated question and answer texts, a postal-code
pattern, the currency of income ranges). Qualification and condition codes are the same in every
locale; only texts, formats and the answers offered differ. docs/catalogue.md describes the codes.

The module is pure: it reads the files once, builds every locale's items and serves copies, so the
hot `GET /attributes` route only slices and copies.

Paging follows the spec's warning that "one question may appear on several pages": pages hold
`limit` items (`PAGE_SIZE` by default, spec 8 pages the call "via page and limit") and the last
item of every page but the final one opens the next page as well (with a limit of 1 a page holds
one new item), so a reader must de-duplicate by qualification_code to get the full list.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from surveyctl.sandbox.errors import SandboxError

PAGE_SIZE = 20

CLASS_CORE = 1
CLASS_EXTENDED = 2
CLASS_CUSTOM = 3

TYPE_SINGLE_CHOICE = 1
TYPE_MULTIPLE_CHOICE = 2
TYPE_NUMERIC_RANGE = 3
TYPE_FREE_TEXT = 4

_LOCALE_NAME = re.compile(r"^[a-z]{2}_[A-Z]{2}$")
_OVERRIDE_KEYS = {"text", "placeholder", "answers", "format", "units"}


class CatalogueDataError(SandboxError):
    """The catalogue's data files contradict themselves (a packaging or editing mistake)."""


@dataclass(frozen=True)
class _LocaleCatalogue:
    """One locale's items, sorted by qualification_code, and what is known beside them."""

    items: tuple[dict[str, Any], ...]
    by_code: dict[int, dict[str, Any]]
    units: dict[int, int]


def locales() -> list[str]:
    """The locales the catalogue serves, sorted (for example `de_DE`, `en_US`)."""
    return sorted(_catalogue())


# Country codes people write for a market whose ISO 3166 code differs.
_COUNTRY_ALIASES = {"UK": "GB"}


def unknown_locale(locale: str) -> str:
    """`'en_UK' is not a known locale (did you mean 'en_GB'?); known: de_DE, en_AU, ...`."""
    known = locales()
    guess = _locale_guess(locale, known)
    hint = f" (did you mean {guess!r}?)" if guess else ""
    return f"{locale!r} is not a known locale{hint}; known: {', '.join(known)}"


def _locale_guess(locale: str, known: list[str]) -> str | None:
    language, _, country = locale.replace("-", "_").partition("_")
    spelled = f"{language.lower()}_{_COUNTRY_ALIASES.get(country.upper(), country.upper())}"
    if spelled in known:
        return spelled
    close = difflib.get_close_matches(locale, known, n=1, cutoff=0.6)
    return close[0] if close else None


def attributes_page(
    locale: str, classes: Iterable[int] | None, page: int, limit: int = PAGE_SIZE
) -> tuple[list[dict], int]:
    """Items of page `page` (1-based) of `limit` items and total_pages, for the locale, filtered
    to the classes (None = all). Raises LookupError for an unknown locale or a page past the end
    (an empty filter result is page 1 of 1 with no items); a page below 1 is past the end too."""
    catalogue = _catalogue().get(locale)
    if catalogue is None:
        raise LookupError(f"attribute catalogue: {unknown_locale(locale)}")
    wanted = _filtered(locale, None if classes is None else frozenset(classes))
    total = page_count(len(wanted), limit)
    if page < 1 or page > total:
        raise LookupError(f"page {page} is outside 1..{total} for locale {locale}")
    start = (page - 1) * _step(limit)
    return copy.deepcopy(list(wanted[start : start + limit])), total


def attribute(locale: str, qualification_code: int) -> dict | None:
    """The attribute with that code in the locale, or None when the locale or code is unknown."""
    catalogue = _catalogue().get(locale)
    if catalogue is None or qualification_code not in catalogue.by_code:
        return None
    return copy.deepcopy(catalogue.by_code[qualification_code])


YEARS, MONTHS = 311, 312  # units codes of ages (public facts)
USD = 321  # units of income (public facts)
EUR, GBP, CAD, AUD = 322, 323, 324, 325  # a market's own currency (sandbox decision)
# Units a range may be given in besides the attribute's own: an age in years may be given in
# months too (public facts: "age ranges use units 311 (years; 312 = months)"), and an income
# in US dollars in every locale (public facts say "income ranges use units 321 (USD)" without
# naming a locale). No exchange rate is applied: the bounds are compared as they are.
OTHER_UNITS = {YEARS: (MONTHS,), **{local: (USD,) for local in (EUR, GBP, CAD, AUD)}}


def range_units(locale: str, qualification_code: int) -> int | None:
    """The units code of a numeric-range attribute's range_sets (311 years, 321 USD...), or None
    for a choice or free-text attribute, an unknown code or an unknown locale."""
    catalogue = _catalogue().get(locale)
    return None if catalogue is None else catalogue.units.get(qualification_code)


def page_count(item_count: int, limit: int = PAGE_SIZE) -> int:
    """How many pages of `limit` items `item_count` items fill, given that consecutive pages
    share one item."""
    if item_count <= limit:
        return 1
    return 1 + math.ceil((item_count - limit) / _step(limit))


def _step(limit: int) -> int:
    """New items a page adds to the one before: all but the repeated one (a page of one item
    repeats none, or it would never end)."""
    return max(1, limit - 1)


@cache
def _filtered(locale: str, classes: frozenset[int] | None) -> tuple[dict[str, Any], ...]:
    items = _catalogue()[locale].items
    if classes is None:
        return items
    return tuple(item for item in items if item["class"] in classes)


@cache
def _catalogue() -> dict[str, _LocaleCatalogue]:
    data = files(__package__).joinpath("data")
    base = json.loads(data.joinpath("attributes.json").read_text(encoding="utf-8"))["attributes"]
    _check_base(base)
    built = {}
    for entry in data.joinpath("locales").iterdir():
        if entry.name.endswith(".json"):
            spec = json.loads(entry.read_text(encoding="utf-8"))
            built[spec["locale"]] = _build_locale(base, spec)
    return built


def _check_base(base: list[dict[str, Any]]) -> None:
    seen: set[int] = set()
    for definition in base:
        code = definition["qualification_code"]
        if code in seen:
            raise CatalogueDataError(f"attributes.json defines qualification_code {code} twice")
        seen.add(code)
        conditions = [answer["condition_code"] for answer in definition["answers"]]
        if len(conditions) != len(set(conditions)):
            raise CatalogueDataError(f"attribute {code} repeats a condition_code")
        named = list(definition.get("locales", []))
        for answer in definition["answers"]:
            named += answer.get("locales", [])
        for name in named:
            if not _LOCALE_NAME.match(name):
                raise CatalogueDataError(f"attribute {code} names a malformed locale {name!r}")


def _build_locale(base: list[dict[str, Any]], spec: dict[str, Any]) -> _LocaleCatalogue:
    locale = spec["locale"]
    english = spec["language"] == "en"
    overrides = {int(code): texts for code, texts in spec["attributes"].items()}
    items, units, descs = [], {}, set()
    for definition in base:
        if locale not in definition.get("locales", [locale]):
            continue
        code = definition["qualification_code"]
        override = overrides.pop(code, {})
        item = _build_item(definition, locale, english, override)
        if item["desc"] in descs:
            raise CatalogueDataError(f"{locale}: two attributes share the desc {item['desc']!r}")
        descs.add(item["desc"])
        items.append(item)
        if definition["type"] == TYPE_NUMERIC_RANGE:
            units[code] = override.get("units", definition["units"])
    if overrides:
        raise CatalogueDataError(f"{locale}.json translates codes it does not offer: {overrides}")
    items.sort(key=lambda item: item["qualification_code"])
    by_code = {item["qualification_code"]: item for item in items}
    return _LocaleCatalogue(items=tuple(items), by_code=by_code, units=units)


def _build_item(
    definition: dict[str, Any], locale: str, english: bool, override: dict[str, Any]
) -> dict[str, Any]:
    code = definition["qualification_code"]
    unknown = set(override) - _OVERRIDE_KEYS
    if unknown:
        raise CatalogueDataError(f"{locale}.json attribute {code} has unknown keys {unknown}")
    if not english and "text" not in override:
        raise CatalogueDataError(f"{locale}.json lacks the text of attribute {code}")
    if not english and definition["placeholder"] and "placeholder" not in override:
        raise CatalogueDataError(f"{locale}.json lacks the placeholder of attribute {code}")
    offered = [
        answer for answer in definition["answers"] if locale in answer.get("locales", [locale])
    ]
    local_texts = {int(condition): text for condition, text in override.get("answers", {}).items()}
    offered_codes = {answer["condition_code"] for answer in offered}
    if set(local_texts) - offered_codes:
        raise CatalogueDataError(
            f"{locale}.json attribute {code} translates answers it does not offer: "
            f"{sorted(set(local_texts) - offered_codes)}"
        )
    if not english and offered_codes - set(local_texts):
        raise CatalogueDataError(
            f"{locale}.json attribute {code} lacks answer texts for "
            f"{sorted(offered_codes - set(local_texts))}"
        )
    answers = [
        {
            "answer_id": str(answer["condition_code"]),
            "local_text": local_texts.get(answer["condition_code"], answer["eng_text"]),
            "eng_text": answer["eng_text"],
            "condition_code": answer["condition_code"],
        }
        for answer in offered
    ]
    localization = {
        "locale": locale,
        "text": override.get("text", definition["text"]),
        "placeholder": override.get("placeholder", definition["placeholder"]),
        "answers": answers,
        "format": dict(override.get("format", definition["format"])),
    }
    return {
        "qualification_code": code,
        "recency": definition["recency"],
        "desc": definition["desc"],
        "category": list(definition["category"]),
        "tags": definition["tags"],
        "type": definition["type"],
        "class": definition["class"],
        "create_survey_question_order": definition["create_survey_question_order"],
        "randomize_answer_options": definition["randomize_answer_options"],
        "is_hidden": definition["is_hidden"],
        "is_active": definition["is_active"],
        "localizations": [localization],
    }
