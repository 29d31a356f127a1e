"""Targeting written in a manifest -> model objects: one builder for every place it appears.

A qualification, a quota's criterion and a generated quota's criterion all name an attribute
(by code or by name) and the answers or ranges chosen. In a written criterion both come from
one mapping; a generator takes the attribute from its dimension and the answers from a cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from surveyctl.errors import Location
from surveyctl.manifests.load import whole
from surveyctl.model import Qualification, RangeSet
from surveyctl.yamlsafe.marked import MarkedList

T = TypeVar("T", bound=Qualification)


def targeting(
    cls: type[T], attribute: Mapping[str, Any], choice: Mapping[str, Any], where: Location
) -> T:
    """A `cls` (Qualification or Criterion) for the attribute of `attribute` with the answers
    or ranges of `choice` (the same mapping for a written criterion)."""
    codes = choice.get("condition_codes")
    ranges = choice.get("range_sets")
    extra = {"child_age_unit": choice["child_age_unit"]} if "child_age_unit" in choice else {}
    answers = choice.get("answers")
    if isinstance(answers, MarkedList):
        extra["answer_locations"] = [answers.where(index) for index in range(len(answers))]
    return cls(
        qualification_code=whole(attribute.get("qualification_code")),
        attribute=attribute.get("attribute"),
        condition_codes=[str(whole(c)) for c in codes] if codes is not None else None,
        answers=list(choice["answers"]) if "answers" in choice else None,
        range_sets=[RangeSet(*(whole(r[key]) for key in ("from", "to", "units"))) for r in ranges]
        if ranges is not None
        else None,
        location=where,
        **extra,
    )
