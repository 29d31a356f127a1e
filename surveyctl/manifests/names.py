"""Attribute and answer names -> codes, through the catalogue of the survey's locale.

A qualification or criterion may say `attribute: Gender` and `answers: [Female]` instead of
codes; names match the catalogue's `desc` and the answers' local or English text, without
regard to case. Codes written directly are checked against the same catalogue. Resolving per
environment lets one manifest serve staging and production even where their codes differ.
"""

from __future__ import annotations

import difflib

from surveyctl.catalog import Attribute, Catalog, CatalogError, LocaleCatalog
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.model import Qualification, Survey

_LISTED = 8


def resolve_survey(survey: Survey, catalog: Catalog, diagnostics: Diagnostics) -> None:
    """Fills in codes for names and checks every code; problems become diagnostics."""
    try:
        locale = catalog.locale(survey.localization)
    except CatalogError as exc:
        diagnostics.error(
            f"Survey {survey.name!r}: {exc.message}", survey.location_of("survey_localization")
        )
        return
    for item in survey.qualifications or []:
        _resolve(item, locale, catalog.environment, diagnostics)
    _named_twice(survey, diagnostics)
    for quota in survey.quotas or []:
        for criterion in quota.criteria:
            _resolve(criterion, locale, catalog.environment, diagnostics)


def _named_twice(survey: Survey, diagnostics: Diagnostics) -> None:
    """A qualification given once by its code and once by its attribute's name (or by two
    names of one attribute): the same targeting twice, which the check before resolving
    cannot see; the service would be sent the code twice."""
    first: dict[int, Qualification] = {}
    written: set[object] = set()
    for item in survey.qualifications or []:
        code, key = item.qualification_code, _written_key(item)
        if code is None or key in written:
            continue  # unresolved, or the same code or name again: reported before resolving
        written.add(key)
        earlier = first.setdefault(code, item)
        if earlier is item:
            continue
        line = earlier.location.line if earlier.location else 0
        diagnostics.error(
            f"Qualification {code} is given twice in survey {survey.name!r}: as "
            f"{_written(item)} here and as {_written(earlier)} at line {line}",
            item.location,
        )


def _written_key(item: Qualification) -> object:
    """What the check before resolving compares: the code written, or the name's casefold."""
    return item.attribute.casefold() if item.attribute is not None else item.qualification_code


def _written(item: Qualification) -> str:
    return f"attribute {item.attribute!r}" if item.attribute is not None else "its code"


def _resolve(
    item: Qualification, locale: LocaleCatalog, environment: str, diagnostics: Diagnostics
) -> None:
    where = f"the {locale.locale} catalogue of environment {environment!r}"
    if item.attribute is not None:
        attribute = locale.by_name(item.attribute)
        if attribute is None:
            close = locale.closest_names(item.attribute)
            hint = f"; closest: {', '.join(close)}" if close else ""
            diagnostics.error(
                f"Unknown attribute {item.attribute!r} in {where}{hint}", item.location
            )
            return
        if item.qualification_code not in (None, attribute.qualification_code):
            diagnostics.error(
                f"Attribute {item.attribute!r} is qualification {attribute.qualification_code} "
                f"in {where}, not {item.qualification_code}",
                item.location,
            )
            return
        item.qualification_code = attribute.qualification_code
    else:
        attribute = locale.by_code.get(item.qualification_code)
        if attribute is None:
            diagnostics.error(
                f"qualification_code {item.qualification_code} is not in {where}",
                item.location,
            )
            return
    if item.answers is not None:
        _resolve_answers(item, attribute, where, diagnostics)
    elif item.condition_codes is not None and attribute.answers:
        unknown = [c for c in item.condition_codes if not _is_answer(attribute, c)]
        if unknown:  # every one named: one run shows every code to fix
            named = (
                f"condition code {unknown[0]!r} is not an answer"
                if len(unknown) == 1
                else f"condition codes {_code_list(unknown)} are not answers"
            )
            diagnostics.error(
                f"{named} of qualification {attribute.qualification_code} ({attribute.desc}) "
                f"in {where}; its answers: " + _answer_list(attribute),
                item.location,
            )


# Attributes whose condition codes the service also takes zero-padded (public facts: US state
# FIPS codes, "06" and "6" both California).
ZERO_PADDED = frozenset({225})


def _is_answer(attribute: Attribute, code: str) -> bool:
    if code in attribute.condition_codes:
        return True
    padded = attribute.qualification_code in ZERO_PADDED and code.isdigit()
    return padded and (code.lstrip("0") or "0") in attribute.condition_codes


def _resolve_answers(
    item: Qualification, attribute: Attribute, where: str, diagnostics: Diagnostics
) -> None:
    codes: list[str] = []
    unknown = False
    if item.answers and not attribute.answers:
        # Age, income, postal code: answered in free entry, so "no answer '18-34'" would
        # leave one looking for the answer's spelling rather than for range_sets.
        diagnostics.error(
            f"Attribute {attribute.desc!r} is answered in free entry and has no answers to "
            f"name in {where}: give range_sets instead of answers, "
            "[{from: LOW, to: HIGH, units: U}] with U 311 for years, 312 for months or 321 for "
            "US dollars (or condition_codes)",
            item.location,
        )
        return
    places = item.answer_locations or []
    for index, text in enumerate(item.answers or []):
        answer = attribute.answer(text)
        if answer is None:
            texts = attribute.answer_texts()
            lowered = {t.casefold(): t for t in texts}
            close = difflib.get_close_matches(text.casefold(), list(lowered), 3, 0.4)
            hint = (
                f"; closest: {', '.join(lowered[c] for c in close)}"
                if close
                else (f"; its answers: {_answer_list(attribute)}" if texts else "")
            )
            diagnostics.error(
                f"Attribute {attribute.desc!r} has no answer {text!r} in {where}{hint}",
                places[index] if index < len(places) else item.location,
            )
            unknown = True  # the other answers are still checked: every typo in one run
            continue
        if answer.condition_code not in codes:
            codes.append(answer.condition_code)
    if not unknown:
        item.condition_codes = codes


def _code_list(codes: list[str]) -> str:
    return _listed([repr(code) for code in codes])


def _answer_list(attribute: Attribute) -> str:
    return _listed([f"{a.condition_code} {a.eng_text or a.local_text}" for a in attribute.answers])


def _listed(shown: list[str]) -> str:
    """The first _LISTED of `shown`, then how many there are in all."""
    more = f", ... ({len(shown)} in all)" if len(shown) > _LISTED else ""
    return ", ".join(shown[:_LISTED]) + more
