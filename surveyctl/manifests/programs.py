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

import re
from dataclasses import dataclass, field
from typing import Any

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import Document, MarkedDict, MarkedList
from surveyctl.model import ExclusionGroup, Lifecycle, Program
from surveyctl.resources import SURVEY, WAVE_PATTERN, Member, member_name

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
BUILT_IN = ("program", "locale", "country", "language", "wave")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
MAX_WAVES = 1_000
_WAVE = re.compile(WAVE_PATTERN)


@dataclass
class Expansion:
    """What one program document expands into: Survey documents (to check and build like any
    other) with the member each one is, the exclusion groups, and the program itself."""

    program: Program
    surveys: list[tuple[Document, Member]] = field(default_factory=list)
    groups: list[ExclusionGroup] = field(default_factory=list)


def expand(document: Document, diagnostics: Diagnostics) -> Expansion:
    """The members of a schema-valid SurveyProgram document; problems become diagnostics."""
    data = document.data
    spec: MarkedDict = data["spec"]
    lifecycle = data.get("lifecycle") or MarkedDict()
    keep = bool(lifecycle.get("prevent_destroy", True))
    markets: MarkedDict = spec["markets"]
    waves = _waves(spec, diagnostics)
    program = Program(
        name=data["name"],
        markets=list(markets),
        waves=[wave_id for wave_id, _, _ in waves],
        keep_retired=keep,
        location=document.location,
    )
    out = Expansion(program)
    member_lifecycle = {"prevent_destroy": keep}
    if lifecycle.get("ignore_changes"):
        member_lifecycle["ignore_changes"] = list(lifecycle["ignore_changes"])
    template: MarkedDict = spec["template"]
    for locale, market in markets.items():
        market = market or MarkedDict()
        where = markets.where(locale)
        base = _merge(template, market.get("spec"))
        for wave_id, wave, wave_where in waves:
            member = Member(program.name, locale, wave_id)
            variables = _variables(spec, market, wave, member, diagnostics, wave_where)
            merged = _merge(base, wave.get("spec") if wave else None)
            merged = _substitute(merged, variables, diagnostics, merged.location, False)
            located = _with_locale(merged, locale, where, diagnostics)
            body = _document(data, located, member_lifecycle)
            out.surveys.append((Document(body, where, document.index, None), member))
    exclusion = spec.get("exclusion")
    if isinstance(exclusion, MarkedDict):
        out.groups = _groups(program, exclusion, spec, markets, waves, diagnostics)
    return out


# -- waves and variables ---------------------------------------------------------------------


def _waves(spec: MarkedDict, diagnostics: Diagnostics) -> list[tuple[str, Any, Location]]:
    """(id, its mapping or None, its line) of every wave, in order."""
    waves = spec["waves"]
    if isinstance(waves, MarkedList):
        if len(waves) > MAX_WAVES:
            diagnostics.error(
                f"spec.waves lists {len(waves):,} waves; at most {MAX_WAVES:,}", waves.location
            )
            return []
        out = []
        for index, item in enumerate(waves):
            wave_id = item["id"] if isinstance(item, dict) else item
            out.append((str(wave_id), item if isinstance(item, dict) else None, waves.where(index)))
        _unique(out, diagnostics)
        return out if _ids_valid(out, diagnostics) else []
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


# -- merging and substitution ----------------------------------------------------------------


def _merge(base: MarkedDict, over: MarkedDict | None) -> MarkedDict:
    """`over` merged over `base`: mappings key by key, lists and values replaced."""
    if not over:
        return base
    out = _like(base)
    out.update(base)
    out._marks = {**getattr(base, "_marks", {}), **getattr(over, "_marks", {})}
    for key, value in over.items():
        old = base.get(key)
        if isinstance(old, MarkedDict) and isinstance(value, MarkedDict):
            out[key] = _merge(old, value)
        else:
            out[key] = value
    return out


def _substitute(
    value: Any, variables: dict[str, str], diagnostics: Diagnostics, where: Location, lenient: bool
) -> Any:
    """`value` with placeholders replaced; containers without any are returned as they are
    (shared between members), so expanding 360 members copies only what differs."""
    if isinstance(value, str):
        return _text(value, variables, diagnostics, where, lenient) if "{" in value else value
    if isinstance(value, MarkedDict):
        changed = {}
        for key, item in value.items():
            new = _substitute(
                item, variables, diagnostics, value.where(key), lenient or key == "generate"
            )
            if new is not item:
                changed[key] = new
        if not changed:
            return value
        out = _like(value)
        out.update(value)
        out.update(changed)
        return out
    if isinstance(value, MarkedList):
        items = [
            _substitute(item, variables, diagnostics, value.where(i), lenient)
            for i, item in enumerate(value)
        ]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        out_list = MarkedList(items)
        out_list._file, out_list._start = value._file, value._start
        out_list._marks = getattr(value, "_marks", [])
        return out_list
    return value


def _text(
    text: str, variables: dict[str, str], diagnostics: Diagnostics, where: Location, lenient: bool
) -> str:
    def replace(match: re.Match) -> str:
        token, name = match[0], match[1]
        if name is None:
            return token[0]  # {{ -> {, }} -> }
        if name in variables:
            return variables[name]
        if not lenient:
            known = ", ".join(sorted(variables))
            diagnostics.error(f"Unknown variable {{{name}}} in {text!r}; known: {known}", where)
        return token

    return _PLACEHOLDER.sub(replace, text)


def _like(value: MarkedDict) -> MarkedDict:
    """An empty MarkedDict with the marks of `value`."""
    out = MarkedDict()
    out._file, out._start = value._file, value._start
    out._marks = dict(getattr(value, "_marks", {}))
    return out


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
    out = _like(spec)
    out.update(spec)
    out["survey_localization"] = locale
    out._marks.setdefault("survey_localization", _mark(where))
    return out


@dataclass(frozen=True)
class _Mark:
    """A parser mark made from a Location (0-based line and column)."""

    line: int
    column: int


def _mark(where: Location) -> _Mark:
    return _Mark(where.line - 1, (where.column or 1) - 1)


def _document(program: MarkedDict, spec: MarkedDict, lifecycle: dict) -> MarkedDict:
    """A Survey document of `spec`, named like its program so that the schema's name rule
    applies to the program's name; the loader renames the built Survey to its member name."""
    out = _like(program)
    out.update({"kind": SURVEY, "name": program["name"], "spec": spec})
    out._marks.setdefault("spec", _mark(spec.location))
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
) -> list[ExclusionGroup]:
    """Per market, one group for each wave after the first: it and the K waves before it."""
    depth = exclusion["waves"]
    ref_template = exclusion.get("ref", "{program}-{locale}-{wave}")
    title_template = exclusion.get("name", "{program} {locale} {wave}: earlier waves excluded")
    where = exclusion.location
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
            groups.append(
                ExclusionGroup(
                    name=member.name,
                    buyer_surveygroup_ref=_text(
                        ref_template, variables, diagnostics, exclusion.where("ref"), False
                    ),
                    group_name=_text(
                        title_template, variables, diagnostics, exclusion.where("name"), False
                    ),
                    exclusion_period=exclusion.get("exclusion_period"),
                    surveys=[member_name(program.name, locale, w) for w, _, _ in earlier],
                    lifecycle=Lifecycle(prevent_destroy=program.keep_retired),
                    location=where,
                    field_locations={key: exclusion.where(key) for key in exclusion},
                    member=member,
                )
            )
    return groups
