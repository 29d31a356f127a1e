"""Turns schema-valid documents into model objects (generators expanded, names kept)."""

from __future__ import annotations

import re
from typing import Any

from surveyctl.errors import Location
from surveyctl.manifests import generate
from surveyctl.manifests.budget import MAX_QUOTAS, Budget
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import Document, MarkedDict, MarkedList, whole
from surveyctl.manifests.targeting import targeting
from surveyctl.model import (
    Criterion,
    ExclusionGroup,
    Lifecycle,
    Qualification,
    Quota,
    Survey,
)

_LISTS = ("qualifications", "quotas")
_LOCALE = re.compile(r"^[a-z]{2}_[A-Z]{2}$")  # as the schema's survey_localization


def plain(value: Any) -> Any:
    """A copy without marks: plain dicts and lists, as the JSON body will carry them, and
    whole numbers as integers (`whole`)."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return whole(value)


def survey(document: Document, diagnostics: Diagnostics, budget: Budget | None = None) -> Survey:
    """The Survey of a schema-valid document; its generators spend from `budget`, what its
    file may still make (a fresh one when not given)."""
    budget = budget if budget is not None else Budget()

    data = document.data
    spec: MarkedDict = data["spec"]
    settings = {key: plain(value) for key, value in spec.items() if key not in _LISTS}
    qualifications = None
    if "qualifications" in spec:
        items: MarkedList = spec["qualifications"]
        qualifications = [
            targeting(Qualification, item, item, items.where(i)) for i, item in enumerate(items)
        ]
    quotas = None
    if "quotas" in spec:
        quotas = []
        entries: MarkedList = spec["quotas"]
        expanded = _generators_fit(entries, spec.where("quotas"), budget, diagnostics)
        for index, entry in enumerate(entries):
            if "generate" not in entry:
                quotas.append(_quota(entry, entries.where(index)))
            elif expanded:
                total = whole(spec["completes_required"])
                quotas.extend(generate.expand(entry, total, diagnostics))
    return Survey(
        name=data["name"],
        settings=settings,
        qualifications=qualifications,
        quotas=quotas,
        lifecycle=_lifecycle(data.get("lifecycle")),
        location=document.location,
        field_locations={key: spec.where(key) for key in spec},
    )


def partial_survey(
    document: Document, diagnostics: Diagnostics, budget: Budget | None = None
) -> tuple[Survey, bool] | None:
    """What can be built of a Survey document that failed the schema, and whether its quotas
    are whole: its settings as written, the qualifications and quotas that are valid on their
    own, its generators' problems added to `diagnostics`. Only for checking (the rules that
    the valid parts allow, names against the catalogue), so that a schema error does not hide
    another problem; never planned: the document's errors keep it out of the state. None
    when the spec is not a mapping."""
    from surveyctl.manifests.schema import item_valid  # schema imports this module's users

    spec = document.data.get("spec")
    if not isinstance(spec, MarkedDict):
        return None
    budget = budget if budget is not None else Budget()
    intact = True
    items = spec.get("qualifications")
    qualifications = []
    for i, item in enumerate(items if isinstance(items, MarkedList) else []):
        if item_valid("Qualification", item):
            qualifications.append(targeting(Qualification, item, item, items.where(i)))
    entries = spec.get("quotas")
    if "quotas" in spec and not isinstance(entries, MarkedList):
        intact = False
    listed = list(enumerate(entries)) if isinstance(entries, MarkedList) else []
    valid = [(index, entry) for index, entry in listed if item_valid("QuotaEntry", entry)]
    intact = intact and len(valid) == len(listed)
    expanded = _generators_fit([e for _, e in valid], spec.where("quotas"), budget, diagnostics)
    quotas = []
    total = whole(spec.get("completes_required"))
    for index, entry in valid:
        if "generate" not in entry:
            quotas.append(_quota(entry, entries.where(index)))
        elif expanded:
            counted = total if isinstance(total, int) and not isinstance(total, bool) else 0
            quotas.extend(generate.expand(entry, counted, diagnostics))
    name = document.data.get("name")
    survey = Survey(
        name=name if isinstance(name, str) else "?",
        settings={key: plain(value) for key, value in spec.items() if key not in _LISTS},
        qualifications=qualifications,
        quotas=quotas,
        location=document.location,
        field_locations={key: spec.where(key) for key in spec},
    )
    return survey, intact


def has_locale(survey: Survey) -> bool:
    """Whether the survey names a well-formed locale, so its names can be looked up."""
    locale = survey.settings.get("survey_localization")
    return isinstance(locale, str) and _LOCALE.match(locale) is not None


def exclusion_group(document: Document) -> ExclusionGroup:
    """The ExclusionGroup of a schema-valid document; `surveys[i]` lines are kept too."""
    data = document.data
    spec: MarkedDict = data["spec"]
    locations = {key: spec.where(key) for key in spec}
    members = spec.get("surveys")
    if isinstance(members, MarkedList):
        locations.update({f"surveys[{i}]": members.where(i) for i in range(len(members))})
    return ExclusionGroup(
        name=data["name"],
        buyer_surveygroup_ref=spec["buyer_surveygroup_ref"],
        group_name=spec["name"],
        exclusion_period=whole(spec.get("exclusion_period")),
        surveys=list(spec.get("surveys") or []),
        survey_ids=[whole(survey_id) for survey_id in spec.get("surveys_in_group") or []],
        lifecycle=_lifecycle(data.get("lifecycle")),
        location=document.location,
        field_locations=locations,
    )


def _lifecycle(data: MarkedDict | None) -> Lifecycle:
    if not data:
        return Lifecycle()
    return Lifecycle(
        prevent_destroy=bool(data.get("prevent_destroy", False)),
        ignore_changes=tuple(data.get("ignore_changes") or ()),
    )


def _generators_fit(
    entries: list, where: Location, budget: Budget, diagnostics: Diagnostics
) -> bool:
    """Whether the file may make the quotas of a survey's generators (all of them, counted
    before any is made); one error at the survey's quotas if not, and none is expanded."""
    made = sum(generate.quota_count(e) for e in entries if "generate" in e)
    if budget.spend_quotas(made):
        return True
    diagnostics.error(
        f"These quota generators make {made:,} quotas for the survey, which takes its file "
        f"over the {MAX_QUOTAS:,} that the generators of one manifest file may make (in its "
        "surveys and its programs' members); use fewer cells, or put surveys in several files",
        where,
    )
    return False


def _quota(entry: MarkedDict, where: Location) -> Quota:
    criteria: MarkedList = entry.get("criteria") or MarkedList()
    return Quota(
        buyer_quota_id=entry["buyer_quota_id"],
        required_count=whole(entry["required_count"]),
        criteria=[
            targeting(Criterion, item, item, criteria.where(i)) for i, item in enumerate(criteria)
        ],
        quota_title=entry.get("quota_title"),
        buyer_quota_supplier_id=entry.get("buyer_quota_supplier_id"),
        group_key=entry.get("group_key"),
        location=where,
    )
