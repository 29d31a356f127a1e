"""The desired state: what the manifests ask for, with sugar expanded and names resolved.

Built by `surveyctl.manifests.load_manifests`; read by `render` and by the planner. Every
object keeps the Location of its manifest entry, so that later errors can point at the line.
`Survey.body()` is the manifest's API body (spec 2.1/2.2): what a create sends, and what an
overwrite merges with the live survey and the body last applied (surveyctl.reconcile.merge).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from surveyctl.errors import Location
from surveyctl.resources import Member


@dataclass(frozen=True)
class RangeSet:
    """A numeric range of a qualification or criterion: from, to and a unit code."""

    start: float
    end: float
    units: int

    def body(self) -> dict:
        return {"from": self.start, "to": self.end, "units": self.units}


@dataclass
class Qualification:
    """A targeting criterion of a survey (spec 2.3).

    `qualification_code` is None only when the manifest named the attribute and no catalogue
    was available to resolve it (validation with --offline); such a model cannot be sent.
    """

    qualification_code: int | None
    condition_codes: list[str] | None = None
    range_sets: list[RangeSet] | None = None
    location: Location | None = None
    attribute: str | None = None  # the name written in the manifest, if any
    answers: list[str] | None = None
    # Where each of `answers` is written, so that an unknown answer is pointed at itself
    # (None when the answers carry no places: not read from a file).
    answer_locations: list[Location] | None = field(default=None, compare=False, repr=False)

    @property
    def resolved(self) -> bool:
        return self.qualification_code is not None

    def body(self) -> dict:
        out: dict[str, Any] = {"qualification_code": self.qualification_code}
        if self.condition_codes is not None:
            out["condition_codes"] = list(self.condition_codes)
        if self.range_sets is not None:
            out["range_sets"] = [r.body() for r in self.range_sets]
        return out


@dataclass
class Criterion(Qualification):
    """A criterion of a quota (spec 2.4): a qualification plus an optional child_age_unit."""

    child_age_unit: int | None = None

    def body(self) -> dict:
        out = super().body()
        if self.child_age_unit is not None:
            out["child_age_unit"] = self.child_age_unit
        return out


@dataclass
class Quota:
    """One quota (spec 2.4); `generated` is True when a generator made it."""

    buyer_quota_id: str
    required_count: int
    criteria: list[Criterion] = field(default_factory=list)
    quota_title: str | None = None
    buyer_quota_supplier_id: str | None = None
    group_key: str | None = None
    location: Location | None = None
    generated: bool = False

    def body(self) -> dict:
        out: dict[str, Any] = {"buyer_quota_id": self.buyer_quota_id}
        if self.buyer_quota_supplier_id is not None:
            out["buyer_quota_supplier_id"] = self.buyer_quota_supplier_id
        if self.quota_title is not None:
            out["quota_title"] = self.quota_title
        out["required_count"] = self.required_count
        out["criteria"] = [c.body() for c in self.criteria]
        if self.group_key is not None:
            out["group_key"] = self.group_key
        return out


@dataclass(frozen=True)
class Lifecycle:
    """How the planner treats a resource: never destroy it; keep live values of some fields."""

    prevent_destroy: bool = False
    ignore_changes: tuple[str, ...] = ()


class _Placed:
    """The places of a manifest and of its top-level fields, for the messages that name them."""

    location: Location | None
    field_locations: dict[str, Location]

    def location_of(self, field_name: str) -> Location | None:
        """Where `field_name` is written; the manifest's own place for a field it leaves out."""
        return self.field_locations.get(field_name, self.location)

    def where(self, field_name: str) -> str | None:
        """`location_of`, as a plan's notes show it."""
        place = self.location_of(field_name)
        return str(place) if place else None


@dataclass
class Survey(_Placed):
    """A Survey manifest: the API fields as written, with qualifications and quotas as objects.

    `settings` holds every spec field except qualifications and quotas, with its value as
    written. `field_locations` maps each top-level spec field to its line.
    """

    name: str
    settings: dict[str, Any]
    qualifications: list[Qualification] | None = None
    quotas: list[Quota] | None = None
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    location: Location | None = None
    field_locations: dict[str, Location] = field(default_factory=dict)
    member: Member | None = None  # set when a SurveyProgram made it

    @property
    def localization(self) -> str:
        return self.settings["survey_localization"]

    @property
    def resolved(self) -> bool:
        """True when every attribute name has been resolved to a code."""
        items: list[Qualification] = list(self.qualifications or [])
        for quota in self.quotas or []:
            items.extend(quota.criteria)
        return all(item.resolved for item in items)

    def body(self) -> dict:
        """The manifest's body (spec 2.1/2.2): a create sends it, an overwrite merges it with the
        live survey (fields the manifest never set keep their live values)."""
        out = dict(self.settings)
        if self.qualifications is not None:
            out["qualifications"] = [q.body() for q in self.qualifications]
        if self.quotas is not None:
            out["quotas"] = [q.body() for q in self.quotas]
        return out


@dataclass
class ExclusionGroup(_Placed):
    """An ExclusionGroup manifest (spec 2.9); `surveys` are names of Survey manifests."""

    name: str
    buyer_surveygroup_ref: str
    group_name: str
    exclusion_period: int | None = None
    surveys: list[str] = field(default_factory=list)
    survey_ids: list[int] = field(default_factory=list)  # surveys_in_group written directly
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    location: Location | None = None
    field_locations: dict[str, Location] = field(default_factory=dict)
    member: Member | None = None  # set when a SurveyProgram made it

    def body(self) -> dict:
        """The group's body with its Survey manifests still named in `surveys` beside the ids
        written directly (`surveys_in_group`); the planner turns names into ids."""
        out: dict[str, Any] = {
            "buyer_surveygroup_ref": self.buyer_surveygroup_ref,
            "name": self.group_name,
            "surveys": list(self.surveys),
            "surveys_in_group": list(self.survey_ids),
        }
        if self.exclusion_period is not None:
            out["exclusion_period"] = self.exclusion_period
        return out


@dataclass
class Program:
    """A SurveyProgram manifest once expanded: its members are in DesiredState.surveys and
    .groups under names such as `brand-tracker[en_GB,2026-11]`.

    `keep_retired`: a member that left the program (its wave or market removed from the
    manifest) stays on the marketplace and in state, shown as retired, never destroyed.
    """

    name: str
    markets: list[str]
    waves: list[str]
    keep_retired: bool = True
    location: Location | None = None


@dataclass
class DesiredState:
    """Every resource the manifests describe, by manifest name, in file order."""

    surveys: dict[str, Survey] = field(default_factory=dict)
    groups: dict[str, ExclusionGroup] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    programs: dict[str, Program] = field(default_factory=dict)
    # Resources of kinds registered beyond these two: kind -> name -> manifest object.
    others: dict[str, dict[str, Any]] = field(default_factory=dict)
