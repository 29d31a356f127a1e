"""Program members in a plan: what is the same across many members is shown once.

A template change of a SurveyProgram changes every member alike, and a new wave creates one
survey per market that differ only where the markets do; listing them per member would bury
the plan in N x W near-identical entries. Members of one program, of one kind, planned the same
way (created; updated, by a full or a quota PUT; or drifted alone) form a `MemberGroup`, and
each line a member would show (a field of a create, a changed field, a drift; as shown, so an
answer is named in its member's locale) is shown once, with the members that have it:

    ~ 12 surveys of program brand-tracker: expected_loi 12 -> 15 (+$360.00)
        ~ expected_loi: 12 -> 15
          members en_US: 2026-09, 2026-10, 2026-11
          ...
        ~ 3 of them (en_GB): offer_price 2.8 -> 3.0
            ~ offer_price: 2.8 -> 3.0

    + 4 surveys of program brand-tracker will be created: wave 2027-01 in en_US, en_GB, ...
        + expected_ir: 40                          (what every one of them has)
          members ...
        + Survey/brand-tracker[de_DE,2027-01] (+$1,240.00)
            + offer_price: 3.1                     (what differs, per member)

Where each line goes is the `_Shape` of the members' action (the `_SHAPES` table): a changed
field or a drift goes with exactly the members that have it (a subset shared by the members of
one market, of one wave or of any other set is shown once), while a create's field is shown
once when every created member has it and otherwise with its market's members, or its own
member, so that each created survey reads whole in two places. Every line of every member is
in one part that names that member, so nothing a member's own entry would show is lost. A
group's headline carries the spend change of all its members (whatever part moves it); a part
carries its own only for creates, the one case where its members' spend is theirs alone. The
program, market and wave come from each member's name (`surveyctl.resources`), so the planner
carries nothing for programs.

Members that leave a program (a wave or a market dropped, the program removed) are grouped
too. Those deleted (`--destroy`) are one group named by what leaves, each member listed with
its own id and spend, the only things in which their entries differ:

    - 20 surveys of program brand-tracker will be destroyed: wave 2026-09 in markets ...
          members de_DE: 2026-09 (ps_survey_id 10007, -$1,240.00)

What a leaving member is told is a note (retired and kept, left alone, deleting a live
survey), and `shown_notes` lists a note or warning that members of a program have word for
word once, naming them; an error (a protected member's refusal) is always listed under its
own address, so a refusal is never folded into a group.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from surveyctl.money import total, usd_delta
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.render.describe import Describer, Line
from surveyctl.render.lines import body_lines, drift_lines, id_words, ident
from surveyctl.resources import SURVEY, Member, member_of

# Fewer members than this planned alike are shown per member.
MIN_GROUP = 2
# The headline names up to this many changes; more are counted.
HEADLINE_CHANGES = 3
# A create group's headline names up to this many markets or waves; the member list has all.
HEADLINE_NAMES = 8

Members = frozenset[int]  # indexes of a group's candidates


@dataclass(frozen=True)
class _Shape:
    """How members planned one way are grouped: the action the group is named by, its symbol,
    the words after "N surveys of program P", what a headline sums up, where a line is shown
    (`place`: the member sets that show a line its `holders` have, given every member of the
    group and each market's members) and whether a part's headline shows its spend."""

    action: str
    symbol: str
    verb: str
    summary: Callable[[MemberGroup], str]  # of a whole group
    part_summary: Callable[[MemberGroup], str]  # of a part (its members are named before it)
    place: Callable[[Members, Members, list[Members]], list[Members]]
    # A part's spend change is its own only when its surveys are made whole by it (creates):
    # an updated member's spend moves with all its changes, some shown in the outer group.
    part_spend: bool = False
    # Members that leave (deletes) show no line of their own: they are one group all the same,
    # and its member list names each one's id and spend, which differ member by member.
    itemised: bool = False


def _changes(group: MemberGroup) -> str:
    """`offer_price 2.5 -> 2.75, ... and 2 more changes`."""
    shown = [_PHRASES[line.symbol].format(*_split(line.text)) for line in group.lines]
    if len(shown) > HEADLINE_CHANGES:
        shown = [*shown[:HEADLINE_CHANGES], f"and {len(shown) - HEADLINE_CHANGES} more changes"]
    return ", ".join(shown)


def _split(text: str) -> tuple[str, str]:
    head, _, rest = text.partition(": ")
    return head, rest


# How a line of each symbol reads in a headline: as `path old -> new`, the words a group's
# headline has always used for a field added or removed.
_PHRASES = {
    "~": "{0} {1}",
    "+": "{0} (absent) -> {1}",
    "-": "{0} {1} -> (absent)",
    "!": "{0} {1}",
}


def _where(group: MemberGroup) -> str:
    """`wave 2027-01 in markets en_US, en_GB, de_DE`, or `3 waves in 4 markets` when some
    market lacks some wave (the member list below names them all)."""
    markets = list(dict.fromkeys(m.market for m in group.where))
    waves = list(dict.fromkeys(m.wave for m in group.where))
    if len(markets) * len(waves) != len(group.where):
        return f"{_count(len(waves), 'wave')} in {_count(len(markets), 'market')}"
    return f"{_named(waves, 'wave')} in {_named(markets, 'market')}"


def _exact(holders: Members, everyone: Members, markets: list[Members]) -> list[Members]:
    """A change is shown once, with exactly the members it is made to."""
    return [holders]


def _by_market(holders: Members, everyone: Members, markets: list[Members]) -> list[Members]:
    """A field of a create is shown once if every member has it; else with each market whose
    members all have it, and else with each member, so a survey reads whole under its own."""
    if holders == everyone:
        return [everyone]
    placed = [market for market in markets if len(market) > 1 and market <= holders]
    rest = holders.difference(*placed)
    return placed + [frozenset((index,)) for index in sorted(rest)]


def _nothing(group: MemberGroup) -> str:
    return ""


_UPDATE = _Shape("update", "~", "", _changes, _changes, _exact)
_SHAPES = {
    "create": _Shape("create", "+", " will be created", _where, _nothing, _by_market, True),
    "update": _UPDATE,
    "quota-update": _UPDATE,
    "no-op": _Shape("no-op", "!", "", _changes, _changes, _exact),  # drifted, nothing planned
    "delete": _Shape("delete", "-", " will be destroyed", _where, _nothing, _exact, True, True),
}


@dataclass
class MemberGroup:
    """Members of one program and kind planned the same way, the lines they all show, and the
    parts: subsets of them with the further lines those have (nested the same way)."""

    program: str
    kind: str
    shape: _Shape
    members: list[ResourceChange] = field(default_factory=list)
    where: list[Member] = field(default_factory=list)  # each member's market and wave
    lines: list[Line] = field(default_factory=list)  # what every member shows, as it shows it
    parts: list[MemberGroup] = field(default_factory=list)
    outer: MemberGroup | None = None  # the group this is a part of

    @property
    def action(self) -> str:
        return self.shape.action

    @property
    def symbol(self) -> str:
        drift_only = self.lines and all(line.symbol == "!" for line in self.lines)
        return "!" if drift_only else self.shape.symbol

    @property
    def spend_delta(self) -> str | None:
        spends = [m.spend for m in self.members if m.spend]
        before, after = total(s.before for s in spends), total(s.after for s in spends)
        return usd_delta(before, after) if after != before else None

    @property
    def noun(self) -> str:
        return "surveys" if self.kind == "Survey" else "exclusion groups"

    def headline(self) -> str:
        """`12 surveys of program brand-tracker: offer_price 2.5 -> 2.75 (+$1,800.00)`; a part
        `3 of them (en_GB): offer_price 2.8 -> 3.0`, or its one member's address."""
        summary = (self.shape.summary if self.outer is None else self.shape.part_summary)(self)
        shows_spend = self.outer is None or self.shape.part_spend
        spend = f" ({self.spend_delta})" if self.spend_delta and shows_spend else ""
        if self.outer is None:
            who = f"{len(self.members)} {self.noun} of program {self.program}{self.shape.verb}"
        elif len(self.members) == 1:
            who = f"{self.members[0].address}{ident(self.members[0])}"
        else:
            who = f"{len(self.members)} of them ({self.within()})"
        return f"{who}{': ' if summary else ''}{summary}{spend}"

    def within(self) -> str:
        """Which of the outer group's members a part holds: `en_GB` (all of that market's),
        `en_GB: 2026-09, 2026-10`, or `wave 2026-11` (every market's)."""
        assert self.outer is not None
        outer = _waves_by_market(self.outer.where)
        mine = _waves_by_market(self.where)
        held = set(m.wave for m in self.where)
        of_waves = {market: [w for w in waves if w in held] for market, waves in outer.items()}
        if len(mine) > 1 and mine == {market: w for market, w in of_waves.items() if w}:
            return _named(list(dict.fromkeys(m.wave for m in self.where)), "wave", limit=None)
        return "; ".join(
            market if waves == outer[market] else f"{market}: {', '.join(waves)}"
            for market, waves in mine.items()
        )

    def by_market(self) -> list[str]:
        """`en_GB: 2026-09, 2026-10` per market, in the order of the plan; for members that
        leave, each wave with its member's id and spend (`2026-09 (ps_survey_id 10001,
        -$750.00)`)."""
        waves: dict[str, list[str]] = {}
        for member, where in zip(self.members, self.where, strict=True):
            shown = f"{where.wave}{_item(member)}" if self.shape.itemised else where.wave
            waves.setdefault(where.market, []).append(shown)
        return [f"{market}: {', '.join(w)}" for market, w in waves.items()]

    def member_items(self) -> list[str]:
        """Each member's address, with its id and spend for members that leave."""
        return [f"`{m.address}`{_item(m) if self.shape.itemised else ''}" for m in self.members]

    def fields(self) -> list[str]:
        """The fields its members' changes are in, as the table of a comment names them."""
        return list(dict.fromkeys(c.field for m in self.members for c in m.changes))

    def to_json(self) -> dict:
        data = {
            "count": len(self.members),
            "text": self.headline(),
            "members": [m.address for m in self.members],
            "lines": [f"{line.symbol} {line.text}" for line in self.lines],
            "spend_delta": self.spend_delta,
            "parts": [part.to_json() for part in self.parts],
        }
        if self.outer is None:
            data.update(program=self.program, kind=self.kind, action=self.action)
        return data


def member_groups(plan: Plan) -> tuple[list[MemberGroup], dict[int, list[MemberGroup]]]:
    """The groups of `plan`, and for each grouped resource (by id) the groups to draw where it
    stands in the plan (those it is the first member of; none for the others)."""
    candidates: dict[tuple, list[tuple[ResourceChange, Member, list[Line]]]] = {}
    for resource in plan.resources:
        member = member_of(resource.name)
        shape = _SHAPES.get(resource.action)
        if member is None or shape is None:
            continue
        describer = Describer(plan, resource)
        lines = body_lines(describer, resource) + drift_lines(describer, resource)
        if lines or shape.itemised:
            key = (member.program, resource.kind, shape)
            candidates.setdefault(key, []).append((resource, member, lines))
    groups = []
    for (program, kind, shape), entries in candidates.items():
        if len(entries) >= MIN_GROUP:
            groups += _grouped(program, kind, shape, entries)
    placed: dict[int, list[MemberGroup]] = {}
    for group in groups:
        for member in group.members:
            placed.setdefault(id(member), [])
        placed[id(group.members[0])].append(group)
    return groups, placed


def _grouped(
    program: str, kind: str, shape: _Shape, entries: list[tuple[ResourceChange, Member, list]]
) -> list[MemberGroup]:
    """The groups of one program's members planned one way: each line with the member sets
    its shape places it with, parts nested in the smallest set that holds them."""
    # a line (and which of equal lines) -> who has it, and where in each member's lines
    holders: dict[tuple[Line, int], dict[int, int]] = {}
    for index, (_, _, lines) in enumerate(entries):
        seen: dict[Line, int] = {}
        for position, line in enumerate(lines):
            seen[line] = seen.get(line, 0) + 1
            holders.setdefault((line, seen[line]), {})[index] = position
    everyone = frozenset(range(len(entries)))
    markets: dict[str, list[int]] = {}
    for index, (_, member, _) in enumerate(entries):
        markets.setdefault(member.market, []).append(index)
    by_market = [frozenset(indexes) for indexes in markets.values()]
    # each member set that shows lines -> the lines, by where its first member has them
    placed: dict[Members, list[tuple[int, Line]]] = {}
    if shape.itemised:
        placed[everyone] = []  # one group whatever lines its members share
    for (line, _), where in holders.items():
        for who in shape.place(frozenset(where), everyone, by_market):
            placed.setdefault(who, []).append((where[min(who)], line))
    shown: dict[Members, MemberGroup] = {}
    for who, lines in placed.items():
        ordered = sorted(who)
        shown[who] = MemberGroup(
            program,
            kind,
            shape,
            members=[entries[i][0] for i in ordered],
            where=[entries[i][1] for i in ordered],
            lines=[line for _, line in sorted(lines, key=_first)],
        )
    return _nested(shown)


def _first(pair: tuple) -> int:
    return pair[0]


def _nested(shown: dict[Members, MemberGroup]) -> list[MemberGroup]:
    """Each set's group as a part of the smallest other set that holds it; the outermost
    groups of two members or more (a member alone in none is shown as itself)."""
    holding: dict[int, list[Members]] = {}
    for who in shown:
        for index in who:
            holding.setdefault(index, []).append(who)
    outermost = []
    for who, group in shown.items():
        anyone = min(who, key=lambda index: len(holding[index]))
        outer = [other for other in holding[anyone] if len(other) > len(who) and who <= other]
        if outer:
            group.outer = shown[min(outer, key=len)]
            group.outer.parts.append((min(who), group))
        elif len(who) >= MIN_GROUP:
            outermost.append((min(who), group))
    for group in shown.values():  # in the order of the plan, by first member
        group.parts = [part for _, part in sorted(group.parts, key=_first)]
    return [group for _, group in sorted(outermost, key=_first)]


def shown_notes(plan: Plan) -> list[tuple[Note, str | None]]:
    """The notes as the text and markdown plans list them, each with whom it is said of in
    place of its address, or None for its address. A note or warning that two members of a
    program or more have word for word (`retired from program P: kept, never destroyed` of a
    wave dropped in 20 markets) is listed once, where the first of them is, said of them all
    (`20 surveys of program P, wave w1 in markets ...`). Any other note, and every error (a
    member's refusal is read under its own name), keeps its address."""
    alike: dict[tuple, list[tuple[Note, Member]]] = {}
    for note in plan.notes:
        kind, _, name = note.address.partition("/")
        member = member_of(name)
        if member is not None and note.severity != "error":
            key = (member.program, kind, note.severity, note.message, note.location)
            alike.setdefault(key, []).append((note, member))
    folded: dict[int, str | None] = {}  # id of each note folded -> its line's members, or None
    for (program, kind, *_), notes in alike.items():
        if len(notes) < MIN_GROUP:
            continue
        where = [member for _, member in notes]
        noun = "surveys" if kind == SURVEY else "exclusion groups"
        folded[id(notes[0][0])] = f"{len(notes)} {noun} of program {program}, {_whole(where)}"
        folded.update((id(note), None) for note, _ in notes[1:])
    return [
        (note, folded.get(id(note)))
        for note in plan.notes
        if id(note) not in folded or folded[id(note)] is not None
    ]


def _whole(where: list[Member]) -> str:
    """`wave w1 in markets en_US, en_GB` (every one named), or `en_US: w1, w2; en_GB: w1`
    when some market lacks some wave."""
    markets = list(dict.fromkeys(m.market for m in where))
    waves = list(dict.fromkeys(m.wave for m in where))
    if len(markets) * len(waves) == len(where):
        return f"{_named(waves, 'wave', None)} in {_named(markets, 'market', None)}"
    return "; ".join(f"{market}: {', '.join(w)}" for market, w in _waves_by_market(where).items())


def group_lines(group: MemberGroup, members: bool = True) -> list[Line]:
    """A group as the text renderer draws it: headline, what every member shows, the members
    by market, then each part the same way, one level in."""
    lines = [Line(group.symbol, 0, group.headline()), *group.lines]
    if members:
        lines.extend(Line(" ", 1, f"members {text}") for text in group.by_market())
    for part in group.parts:
        lines.extend(_part_lines(part, 1))
    return lines


def _part_lines(part: MemberGroup, depth: int) -> list[Line]:
    lines = [Line(part.symbol, depth, part.headline())]
    lines += [Line(line.symbol, depth + line.depth, line.text) for line in part.lines]
    for inner in part.parts:
        lines.extend(_part_lines(inner, depth + 1))
    return lines


def group_row(group: MemberGroup, action: str) -> str:
    """The group's row of the markdown table."""
    drift = " (drift)" if any(m.drift for m in group.members) else ""
    return (
        f"| program `{group.program}` ({len(group.members)} {group.noun}) | {action}{drift} | "
        f"{', '.join(group.fields()) or '–'} | {group.spend_delta or '–'} |"
    )


def member_list(group: MemberGroup) -> list[str]:
    """The members of a group as a collapsed markdown list."""
    lines = [f"<details><summary>{len(group.members)} members</summary>", ""]
    lines += [f"- {item}" for item in group.member_items()]
    return [*lines, "", "</details>", ""]


def alike_groups(plan: Plan) -> list[dict]:
    """`program_groups` of the JSON plan, as programs read it since it was made: members of a
    program updated with the same whole change (action, fields, old and new values, as
    shown) and no drift, each with its members. What the text and markdown plans show is
    `member_groups`, in the JSON plan's `program_view`."""
    alike: dict[tuple, tuple[list[ResourceChange], list[str], str]] = {}
    for resource in plan.resources:
        member = member_of(resource.name)
        if member is None or resource.action not in ("update", "quota-update") or resource.drift:
            continue
        describer = Describer(plan, resource)
        shown = [describer.change(change) for change in resource.changes]
        key = (
            member.program,
            resource.kind,
            resource.action,
            json.dumps([(c.path, c.old, c.new) for c in resource.changes], sort_keys=True),
            tuple(shown),
            len(resource.quota_updates),
        )
        texts = [f"{path}: {old} -> {new}" for path, old, new in shown]
        alike.setdefault(key, ([], texts, member.program))[0].append(resource)
    out = []
    for (program, kind, action, *_), (members, texts, _) in alike.items():
        if len(members) < MIN_GROUP:
            continue
        spends = [m.spend for m in members if m.spend]
        before, after = total(s.before for s in spends), total(s.after for s in spends)
        delta = usd_delta(before, after) if after != before else None
        noun = "surveys" if kind == "Survey" else "exclusion groups"
        named = [t.replace(": ", " ", 1) for t in texts[:HEADLINE_CHANGES]]
        if len(texts) > HEADLINE_CHANGES:
            named.append(f"and {len(texts) - HEADLINE_CHANGES} more changes")
        spend = f" ({delta})" if delta else ""
        out.append(
            {
                "program": program,
                "kind": kind,
                "action": action,
                "count": len(members),
                "text": f"{len(members)} {noun} of program {program}: {', '.join(named)}{spend}",
                "changes": texts,
                "spend_delta": delta,
                "members": [m.address for m in members],
            }
        )
    return out


def _waves_by_market(where: list[Member]) -> dict[str, list[str]]:
    waves: dict[str, list[str]] = {}
    for member in where:
        waves.setdefault(member.market, []).append(member.wave)
    return waves


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _named(names: list[str], noun: str, limit: int | None = HEADLINE_NAMES) -> str:
    """`wave 2027-01`, `markets en_US, en_GB` or `markets en_US, ... and 4 more`."""
    plural = noun if len(names) == 1 else f"{noun}s"
    if limit is not None and len(names) > limit:
        return f"{plural} {', '.join(names[:limit])} and {len(names) - limit} more"
    return f"{plural} {', '.join(names)}"


def _item(member: ResourceChange) -> str:
    """` (ps_survey_id 10001, -$750.00)`: what a member that leaves takes with it."""
    details = [id_words(member)] if member.remote_id is not None else []
    if member.spend and member.spend.before != member.spend.after:
        details.append(usd_delta(member.spend.before, member.spend.after))
    return f" ({', '.join(details)})" if details else ""
