"""Targeting checked against the attribute catalogue of the survey's locale.

Every qualification and quota criterion must name an attribute of the locale; choice attributes
take `condition_codes` among their answers (compared as strings), numeric-range attributes take
`range_sets` in the attribute's units (an age in years also in months, 312), free-entry
attributes take `condition_codes` matching the attribute's format. An empty list of the kind
the attribute does not take (`"condition_codes": []` beside an age's ranges) selects nothing
and is read as absent, except in the strict mode.

US state codes (225) are FIPS numbers and the service takes them zero-padded as well (`"06"`
and `"6"` both name California; public facts): the faithful mode compares them as numbers, the
strict mode only as written in the catalogue.
"""

from __future__ import annotations

import re

from surveyctl.sandbox import catalogue
from surveyctl.sandbox.contract import strict_mode
from surveyctl.sandbox.errors import CATALOGUE, bad_request

US_STATE = 225
ZERO_PADDED = frozenset({US_STATE})  # attributes whose codes the service takes zero-padded


def check_targeting(body: dict) -> None:
    """Raises a 400 for the first qualification or criterion the catalogue does not allow."""
    locale = body["survey_localization"]
    if locale not in catalogue.locales():
        raise bad_request(CATALOGUE, f"survey_localization {catalogue.unknown_locale(locale)}")
    for n, qualification in enumerate(body.get("qualifications") or []):
        _check_one(locale, qualification, f"qualifications[{n}]")
    for n, quota in enumerate(body.get("quotas") or []):
        for m, criterion in enumerate(quota.get("criteria") or []):
            _check_one(locale, criterion, f"quotas[{n}].criteria[{m}]")


def check_criteria(locale: str, criteria: list[dict], where: str = "criteria") -> None:
    """The same checks for the criteria of a quota update (4.3)."""
    for m, criterion in enumerate(criteria):
        _check_one(locale, criterion, f"{where}[{m}]")


def _check_one(locale: str, target: dict, where: str) -> None:
    code = target["qualification_code"]
    attribute = catalogue.attribute(locale, code)
    if attribute is None:
        raise bad_request(
            CATALOGUE, f"{where}.qualification_code {code} is not an attribute of {locale}"
        )
    numeric = attribute["type"] == catalogue.TYPE_NUMERIC_RANGE
    codes, ranges = _lists(target, numeric)
    if codes is None and ranges is None:
        wanted = "range_sets" if numeric else "condition_codes"
        raise bad_request(
            CATALOGUE,
            f"{where} needs condition_codes or range_sets: attribute {code} takes {wanted}",
        )
    units = catalogue.range_units(locale, code)
    if numeric:
        if codes is not None:
            raise bad_request(
                CATALOGUE, f"{where}: attribute {code} takes range_sets, not condition_codes"
            )
        for r, range_set in enumerate(ranges):
            if range_set["from"] > range_set["to"]:
                raise bad_request(CATALOGUE, f"{where}.range_sets[{r}]: from is above to")
            allowed = (units, *catalogue.OTHER_UNITS.get(units, ()))
            if units is not None and range_set["units"] not in allowed:
                named = " or ".join(str(u) for u in allowed)
                raise bad_request(
                    CATALOGUE,
                    f"{where}.range_sets[{r}].units must be {named} for attribute {code}",
                )
        return
    if ranges is not None:
        raise bad_request(
            CATALOGUE, f"{where}: attribute {code} does not take ranges, use condition_codes"
        )
    localization = _localization(attribute, locale)
    answers = {str(a["condition_code"]) for a in localization.get("answers", [])}
    if answers:
        padded = code in ZERO_PADDED and not strict_mode()
        wrong = [c for c in codes if c not in answers and not (padded and _unpadded(c) in answers)]
        if wrong:
            raise bad_request(
                CATALOGUE,
                f"{where}.condition_codes: {', '.join(wrong)} not among the answers of "
                f"attribute {code} in {locale}",
            )
        return
    pattern = (localization.get("format") or {}).get("regex") or ""
    wrong = [c for c in codes if pattern and not re.fullmatch(pattern, c)]
    if wrong:
        raise bad_request(
            CATALOGUE, f"{where}.condition_codes: {', '.join(wrong)} do not match {pattern!r}"
        )


def _lists(target: dict, numeric: bool) -> tuple[list | None, list | None]:
    """condition_codes and range_sets of a target, an empty list of the kind the attribute does
    not take read as absent: it selects nothing, and clients write [] for "not set". The strict
    mode reads it as sent, so such a list is refused there like any other of the wrong kind."""
    codes, ranges = target.get("condition_codes"), target.get("range_sets")
    if strict_mode():
        return codes, ranges
    if numeric and codes == []:
        return None, ranges
    if not numeric and ranges == []:
        return codes, None
    return codes, ranges


def answer_key(qualification_code: int, condition_code: str) -> str:
    """The condition code as compared with a respondent's answer: a zero-padded state code
    names the same state as the unpadded one, so both screen the same respondents."""
    code = str(condition_code)
    return _unpadded(code) if qualification_code in ZERO_PADDED else code


def _unpadded(condition_code: str) -> str:
    """`"06"` -> `"6"`; anything but digits stays as it is."""
    if not condition_code.isdigit():
        return condition_code
    return condition_code.lstrip("0") or "0"


def _localization(attribute: dict, locale: str) -> dict:
    for localization in attribute.get("localizations", []):
        if localization.get("locale") == locale:
            return localization
    return (attribute.get("localizations") or [{}])[0]
