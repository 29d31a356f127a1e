"""Names for the codes a plan shows: attribute names and answer texts from the catalogue,
and the names of the managed surveys behind the ids of an exclusion group's members.

A reviewer who does not know that 215 is "Employment Status" and 111 "Full-time" cannot judge a
change to `qualifications[215].condition_codes`. The planner works in codes; after planning, the
workflow looks up, in the environment's attribute catalogue, only the codes the plan touches,
per locale (answer texts differ by locale), and files them in the plan's `labels` table:

    {"en_US": {"215": {"name": "Employment Status", "answers": {"111": "Full-time"}}}}

The table is pure data carried by the Plan (and kept in saved plans), so every renderer shows the
same names and `surveyctl show` of a saved plan needs no catalogue. A locale whose catalogue
cannot be had (`--offline`, an unknown locale, a failed fetch) gets no entry: its codes are
shown alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from surveyctl.catalog import Catalog, LocaleCatalog
from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.plan import FieldChange, Plan, ResourceChange
from surveyctl.resources import split_address

if TYPE_CHECKING:  # every renderer imports this module; `plan --help` must not load state
    from surveyctl.state import State

# locale -> qualification_code (as text) -> {"name": ..., "answers": {condition_code: text}}
Labels = dict[str, dict[str, dict[str, Any]]]

# `qualifications[215]` or `quotas[male].criteria[211]`: the attribute a change path is about.
_ATTRIBUTE_IN_PATH = re.compile(r"(?:^qualifications|\.criteria)\[(\d+)\]")


def resource_locale(resource: ResourceChange) -> str | None:
    """The survey_localization of a planned survey (from the body sent, or the manifest's)."""
    for body in (resource.body, resource.last_applied):
        if isinstance(body, dict) and isinstance(body.get("survey_localization"), str):
            return body["survey_localization"]
    return None


def path_attribute(path: str) -> str | None:
    """The qualification code a change path is inside of, as text: `215` for
    `qualifications[215].condition_codes`; None for a path outside targeting."""
    found = _ATTRIBUTE_IN_PATH.findall(path)
    return found[-1] if found else None


def plan_labels(plan: Plan, catalog: Catalog) -> Labels:
    """The names of every attribute and answer code the plan shows, per locale."""
    wanted: dict[str, dict[str, set[str]]] = {}
    for resource in plan.resources:
        locale = resource_locale(resource)
        if locale is None:
            continue
        codes = wanted.setdefault(locale, {})
        for attribute, answer in _codes_of(resource):
            answers = codes.setdefault(attribute, set())
            if answer is not None:
                answers.add(answer)
    labels: Labels = {}
    for locale, codes in sorted(wanted.items()):
        if not codes:
            continue
        try:
            catalogue = catalog.locale(locale)
        except SurveyctlError:
            continue  # no catalogue for this locale: its codes are shown alone
        table = _locale_labels(catalogue, codes)
        if table:
            labels[locale] = table
    return labels


def survey_names(plan: Plan, *states: State) -> dict[str, str]:
    """The manifest names of the managed surveys whose ps_survey_ids the plan's group changes
    show (`surveys_in_group`), id as text -> name; an id no managed survey has stays bare."""
    wanted = {
        str(value)
        for resource in plan.resources
        for change in (*resource.changes, *resource.drift)
        if change.path == "surveys_in_group"
        for side in (change.old, change.new)
        if isinstance(side, list)
        for value in side
        if isinstance(value, int) and not isinstance(value, bool)
    }
    from surveyctl.state import SurveyRecord

    names: dict[str, str] = {}
    for state in states:
        for where, record in state.resources.items():
            if isinstance(record, SurveyRecord) and str(record.ps_survey_id) in wanted:
                names[str(record.ps_survey_id)] = split_address(where)[1]
    return dict(sorted(names.items()))


def _locale_labels(catalogue: LocaleCatalog, codes: dict[str, set[str]]) -> dict[str, dict]:
    table: dict[str, dict] = {}
    for code, answers in sorted(codes.items()):
        attribute = catalogue.by_code.get(int(code))
        if attribute is None:
            continue
        texts = {a.condition_code: a.local_text or a.eng_text for a in attribute.answers}
        table[code] = {
            "name": attribute.desc,
            "answers": {answer: texts[answer] for answer in sorted(answers) if answer in texts},
        }
    return table


def _codes_of(resource: ResourceChange) -> Iterator[tuple[str, str | None]]:
    """(qualification code, answer code or None) of everything the resource's plan shows."""
    if resource.action == "create":
        yield from _walk(resource.body)
    for change in (*resource.changes, *resource.drift):
        yield from _codes_of_change(change)


def _codes_of_change(change: FieldChange) -> Iterator[tuple[str, str | None]]:
    attribute = path_attribute(change.path)
    for value in (change.old, change.new):
        if attribute is not None:
            yield attribute, None
            if change.path.endswith(".condition_codes") and isinstance(value, list):
                yield from ((attribute, str(code)) for code in value)
        yield from _walk(value)


def _walk(value: Any) -> Iterator[tuple[str, str | None]]:
    """Every qualification or criterion inside a body or a value, with its answer codes."""
    if isinstance(value, dict):
        code = value.get("qualification_code")
        if isinstance(code, int) and not isinstance(code, bool):
            yield str(code), None
            for answer in value.get("condition_codes") or []:
                yield str(code), str(answer)
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
