"""SurveyProgram manifests: one definition expanded into a Survey per market and wave.

```yaml
kind: SurveyProgram
name: brand-tracker
spec:
  variables: {brand: Acme}            # {brand} in any string of the template
  template: {survey_title: "{brand} tracker {country} {wave}", ...}   # a Survey spec
  markets:                            # per locale: merged over the template
    en_GB: {variables: {...}, spec: {completes_required: 600, quotas: [...]}}
  waves: [{id: 2026-11, variables: {month: November}}]   # or {from: 2026-01, to: 2026-12}
  exclusion: {waves: 2, exclusion_period: 30}             # optional
lifecycle: {prevent_destroy: true}    # the default for programs
```
Each market x wave becomes an ordinary Survey document named `brand-tracker[en_GB,2026-11]`
(see `surveyctl.resources.member_of`), which then goes through the same schema, build, rules
and name resolution as a written Survey, so the planner needs no knowledge of programs.

Merging: the market's `spec` over the template, then the wave's `spec` over that. Mappings
merge key by key (recursively); lists and plain values replace. `survey_localization` is the
market. Placeholders `{name}` in strings take the built-in variables (`program`, `locale`,
`country`, `language`, `wave`) and the user's (program, then market, then wave: the later
wins); `{{` and `}}` write a brace. Inside a quota generator, placeholders that name no
variable are left for the generator (`{gender}-{age}`).

Exclusion between waves: with `exclusion.waves: K`, each wave after the first gets an exclusion
group of its market holding it and the K waves before it (spec 2.9 rule 1: a respondent of one
survey of a group cannot take another), named like its survey. Every location points into the
program's file, at the line of the value as written (template, market or wave).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from surveyctl.errors import Location
from surveyctl.manifests.budget import MAX_MEMBERS, MAX_VALUES, Budget
from surveyctl.manifests.diagnostics import Diagnostic, Diagnostics
from surveyctl.manifests.load import Document, MarkedDict
from surveyctl.manifests.substitution import OverBudget, like, merge, substitute, text_of
from surveyctl.manifests.waves import waves_of
from surveyctl.model import ExclusionGroup, Lifecycle, Program
from surveyctl.resources import SURVEY, Member, member_name
from surveyctl.yamlsafe.marked import Mark

BUILT_IN = ("program", "locale", "country", "language", "wave")


@dataclass
class Expansion:
    """What one program document expands into: Survey documents (to check and build like any
    other) with the member each one is, the exclusion groups, and the program itself."""

    program: Program
    surveys: list[tuple[Document, Member]] = field(default_factory=list)
    groups: list[ExclusionGroup] = field(default_factory=list)


def expand(document: Document, diagnostics: Diagnostics, budget: Budget | None = None) -> Expansion:
    """The members of a schema-valid SurveyProgram document; problems become diagnostics.
    `budget` is what the program's file may still make (a fresh one when not given): a
    program over it is one error and makes nothing, so no half of it is ever planned."""
    data = document.data
    spec: MarkedDict = data["spec"]
    lifecycle = data.get("lifecycle") or MarkedDict()
    keep = bool(lifecycle.get("prevent_destroy", True))
    markets: MarkedDict = spec["markets"]
    waves = waves_of(spec, diagnostics)
    program = Program(
        name=data["name"],
        markets=list(markets),
        waves=[wave_id for wave_id, _, _ in waves],
        keep_retired=keep,
        location=document.location,
    )
    budget = budget if budget is not None else Budget()
    if not _members_fit(program, spec, budget, diagnostics):
        return Expansion(program)
    try:
        return _expand(document, program, waves, budget, diagnostics)
    except OverBudget:
        return Expansion(program)


def _members_fit(
    program: Program, spec: MarkedDict, budget: Budget, diagnostics: Diagnostics
) -> bool:
    """Whether the file may make this program's markets x waves surveys; an error if not,
    before any of them is made."""
    count = len(program.markets) * len(program.waves)
    if budget.spend_members(count):
        return True
    diagnostics.error(
        f"Program {program.name!r} makes {count:,} surveys ({len(program.markets):,} markets "
        f"x {len(program.waves):,} waves), and the programs of one manifest file may make at "
        f"most {MAX_MEMBERS:,} in all; split it into smaller programs in several files",
        spec.where("markets"),
    )
    return False


def _expand(
    document: Document,
    program: Program,
    waves: list[tuple[str, Any, Location]],
    budget: Budget,
    diagnostics: Diagnostics,
) -> Expansion:
    data = document.data
    spec: MarkedDict = data["spec"]
    lifecycle = data.get("lifecycle") or MarkedDict()
    keep = program.keep_retired
    markets: MarkedDict = spec["markets"]
    out = Expansion(program)
    counted: dict[int, tuple[Any, int]] = {}  # id -> (container, values): members share many
    member_lifecycle = {"prevent_destroy": keep}
    if lifecycle.get("ignore_changes"):
        member_lifecycle["ignore_changes"] = list(lifecycle["ignore_changes"])
    template: MarkedDict = spec["template"]
    for locale, market in markets.items():
        market = market or MarkedDict()
        where = markets.where(locale)
        base = merge(template, market.get("spec"))
        for wave_id, wave, wave_where in waves:
            member = Member(program.name, locale, wave_id)
            variables = _variables(spec, market, wave, member, diagnostics, wave_where)
            merged = merge(base, wave.get("spec") if wave else None)
            merged = substitute(
                merged,
                variables,
                diagnostics,
                merged.location,
                False,
                budget,
                owner=f"Survey {member.name!r}",
            )
            located = _with_locale(merged, locale, where, diagnostics)
            # The spec as the member's manifest would write it, survey_localization included.
            _spend_values(program, _count(located, counted), budget, diagnostics, where)
            body = _document(data, located, member_lifecycle)
            out.surveys.append((Document(body, where, document.index, None), member))
    exclusion = spec.get("exclusion")
    if isinstance(exclusion, MarkedDict):
        out.groups = _groups(program, exclusion, spec, markets, waves, diagnostics, budget)
    return out


def _count(value: Any, counted: dict[int, tuple[Any, int]]) -> int:
    """The values of `value` as the reader counts them (each mapping, list, key and scalar);
    containers shared between members are walked once."""
    if not isinstance(value, (dict, list)):
        return 1
    known = counted.get(id(value))
    if known is not None:
        return known[1]
    if isinstance(value, dict):
        total = 1 + sum(1 + _count(item, counted) for item in value.values())
    else:
        total = 1 + sum(_count(item, counted) for item in value)
    counted[id(value)] = (value, total)  # kept alive, so that its id is not reused
    return total


def _spend_values(
    program: Program, count: int, budget: Budget, diagnostics: Diagnostics, where: Location
) -> None:
    """Spends `count` values of the file's budget; the error at `where` (the market, or the
    exclusion, that made the member or group over it) and OverBudget when over."""
    if budget.spend_values(count):
        return
    diagnostics.error(
        f"Program {program.name!r} takes the programs of its file over {MAX_VALUES:,} values "
        "once expanded (their surveys and exclusion groups written out), more than a manifest "
        "file may hold; split it into smaller programs in several files",
        where,
    )
    raise OverBudget


_MISSING = "spec: missing required field "


def as_member_finding(
    item: Diagnostic, member: Member, document: Document
) -> tuple[str, Location | None]:
    """A finding of a member's own check as the program's author reads it. A required field
    that no part sets is missing from a member, not from the program's `spec` (its template,
    market and wave all could set it): said of the members it is missing from, at the
    template's line, so that one set by some markets only names the others."""
    if not item.summary.startswith(_MISSING):
        return item.summary, item.location
    field = item.summary.removeprefix(_MISSING).rstrip(".")
    return (
        f"Survey {member.name!r}: missing required field {field}, set by neither the "
        "program's template nor its market's or wave's spec",
        document.data["spec"].location,
    )


# -- variables -------------------------------------------------------------------------------


def _variables(
    spec: MarkedDict,
    market: MarkedDict,
    wave: MarkedDict | None,
    member: Member,
    diagnostics: Diagnostics,
    where: Location,
) -> dict[str, str]:
    language, _, country = member.market.partition("_")
    values = {
        "program": member.program,
        "locale": member.market,
        "country": country,
        "language": language,
        "wave": member.wave,
    }
    for owner in (spec, market, wave or {}):
        user = owner.get("variables") or {}
        for name, value in user.items():
            if name in BUILT_IN:
                spot = user.where(name) if isinstance(user, MarkedDict) else where
                diagnostics.error(f"Variable {name!r} is built in and cannot be set", spot)
                continue
            values[name] = str(value)
    return values


def _with_locale(
    spec: MarkedDict, locale: str, where: Location, diagnostics: Diagnostics
) -> MarkedDict:
    """The merged spec with survey_localization set to the market."""
    written = spec.get("survey_localization")
    if written is not None and written != locale:
        diagnostics.error(
            f"survey_localization {written!r} differs from its market {locale!r}; a program "
            "sets it from the market, leave it out",
            spec.where("survey_localization"),
        )
    out = like(spec)
    out.update(spec)
    out["survey_localization"] = locale
    out._marks.setdefault("survey_localization", _mark(where))
    return out


def _mark(where: Location) -> Mark:
    """A parser mark made from a Location (0-based line and column)."""
    return Mark(where.line - 1, (where.column or 1) - 1)


def _document(program: MarkedDict, spec: MarkedDict, lifecycle: dict) -> MarkedDict:
    """A Survey document of `spec`, named like its program so that the schema's name rule
    applies to the program's name; the loader renames the built Survey to its member name."""
    out = like(program)
    # Its `spec` keeps the program's mark (like() copies it): a finding at the top of the
    # spec is at the program's `spec:` line.
    out.update({"kind": SURVEY, "name": program["name"], "spec": spec})
    if lifecycle:
        out["lifecycle"] = lifecycle
    return out


# -- exclusion between waves -----------------------------------------------------------------


def _groups(
    program: Program,
    exclusion: MarkedDict,
    spec: MarkedDict,
    markets: MarkedDict,
    waves: list[tuple[str, Any, Location]],
    diagnostics: Diagnostics,
    budget: Budget,
) -> list[ExclusionGroup]:
    """Per market, one group for each wave after the first: it and the K waves before it."""
    depth = exclusion["waves"]
    ref_template = exclusion.get("ref", "{program}-{locale}-{wave}")
    title_template = exclusion.get("name", "{program} {locale} {wave}: earlier waves excluded")
    where = exclusion.location
    # Under the group's field name, which the rules and the plan's notes look up: an error
    # about a group's reference is at the program's `ref:` line (at the exclusion without it).
    fields = {"buyer_surveygroup_ref": exclusion.where("ref")}
    groups = []
    for locale in markets:
        for index in range(1, len(waves)):
            wave_id = waves[index][0]
            member = Member(program.name, locale, wave_id)
            variables = _variables(
                spec,
                markets[locale] or MarkedDict(),
                waves[index][1],
                member,
                diagnostics,
                waves[index][2],
            )
            earlier = waves[max(0, index - depth) : index + 1]
            # its surveys, reference, name and exclusion period, as a group written out
            _spend_values(program, len(earlier) + 9, budget, diagnostics, where)
            groups.append(
                ExclusionGroup(
                    name=member.name,
                    buyer_surveygroup_ref=text_of(
                        ref_template,
                        variables,
                        diagnostics,
                        exclusion.where("ref"),
                        False,
                        budget,
                        owner=f"ExclusionGroup {member.name!r}",
                    ),
                    group_name=text_of(
                        title_template,
                        variables,
                        diagnostics,
                        exclusion.where("name"),
                        False,
                        budget,
                        owner=f"ExclusionGroup {member.name!r}",
                    ),
                    exclusion_period=exclusion.get("exclusion_period"),
                    surveys=[member_name(program.name, locale, w) for w, _, _ in earlier],
                    lifecycle=Lifecycle(prevent_destroy=program.keep_retired),
                    location=where,
                    field_locations=fields,
                    member=member,
                )
            )
    return groups
