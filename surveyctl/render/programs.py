"""Program members in a plan: a change made the same way to many members is shown once.

A template change of a SurveyProgram changes every member alike; listing it per member would
bury it in N x W identical diffs. Members of one program whose planned change is identical (the
same action and the same fields with the same old and new values, as shown too: an answer is
named in its member's locale) form a `MemberGroup`, shown as one entry:

    ~ 12 surveys of program brand-tracker: offer_price 2.5 -> 2.75 (+$1,800.00)

with the member list (collapsible in markdown, complete in JSON). A change that differs per
member (a market's own price, drift, creates and destroys, whose bodies differ) stays per
member. The program, market and wave come from each member's name (`surveyctl.resources`),
so the planner carries nothing for programs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from surveyctl.money import total, usd_delta
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.render.describe import Describer, Line
from surveyctl.render.lines import change_lines
from surveyctl.resources import member_of

# A change made to fewer members than this is shown per member.
MIN_GROUP = 2
# The headline names up to this many changes; more are counted.
HEADLINE_CHANGES = 3
_GROUPED = ("update", "quota-update")


@dataclass
class MemberGroup:
    """Members of one program with the same planned change."""

    program: str
    kind: str
    action: str
    members: list[ResourceChange] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)  # the shared change, as a member shows it
    texts: list[str] = field(default_factory=list)  # each change: `path: old -> new`

    @property
    def spend_delta(self) -> str | None:
        spends = [m.spend for m in self.members if m.spend]
        before, after = total(s.before for s in spends), total(s.after for s in spends)
        return usd_delta(before, after) if after != before else None

    def headline(self) -> str:
        """`12 surveys of program brand-tracker: offer_price 2.5 -> 2.75 (+$1,800.00)`."""
        noun = "surveys" if self.kind == "Survey" else "exclusion groups"
        shown = [t.replace(": ", " ", 1) for t in self.texts[:HEADLINE_CHANGES]]
        if len(self.texts) > HEADLINE_CHANGES:
            shown.append(f"and {len(self.texts) - HEADLINE_CHANGES} more changes")
        spend = f" ({self.spend_delta})" if self.spend_delta else ""
        return f"{len(self.members)} {noun} of program {self.program}: {', '.join(shown)}{spend}"

    def by_market(self) -> list[str]:
        """`en_GB: 2026-09, 2026-10` per market, in the order of the plan."""
        waves: dict[str, list[str]] = {}
        for resource in self.members:
            member = member_of(resource.name)
            if member is not None:
                waves.setdefault(member.market, []).append(member.wave)
        return [f"{market}: {', '.join(items)}" for market, items in waves.items()]

    def to_json(self) -> dict:
        return {
            "program": self.program,
            "kind": self.kind,
            "action": self.action,
            "count": len(self.members),
            "text": self.headline(),
            "changes": self.texts,
            "spend_delta": self.spend_delta,
            "members": [m.address for m in self.members],
        }


def member_groups(plan: Plan) -> tuple[list[MemberGroup], dict[int, MemberGroup]]:
    """The groups of `plan`, and for each grouped resource (by id) its group."""
    candidates: dict[tuple, MemberGroup] = {}
    for resource in plan.resources:
        member = member_of(resource.name)
        if member is None or resource.action not in _GROUPED or resource.drift:
            continue
        describer = Describer(plan, resource)
        shown = [describer.change(change) for change in resource.changes]
        key = (
            member.program,
            resource.kind,
            resource.action,
            json.dumps([(c.path, c.old, c.new) for c in resource.changes], sort_keys=True),
            # as shown too: answers are named in each member's locale, and a group shows its
            # first member's lines, so a German answer must not stand for an English market's
            tuple(shown),
            len(resource.quota_updates),
        )
        group = candidates.get(key)
        if group is None:
            group = candidates[key] = MemberGroup(member.program, resource.kind, resource.action)
            group.texts = [f"{path}: {old} -> {new}" for path, old, new in shown]
            group.lines = change_lines(describer, resource)
        group.members.append(resource)
    groups = [g for g in candidates.values() if len(g.members) >= MIN_GROUP]
    covered = {id(member): group for group in groups for member in group.members}
    return groups, covered


def group_lines(group: MemberGroup, members: bool = True) -> list[Line]:
    """A group as the text renderer draws it: headline, shared change, members by market."""
    lines = [Line("~", 0, group.headline()), *group.lines]
    if members:
        lines.extend(Line(" ", 1, f"members {text}") for text in group.by_market())
    return lines


def group_row(group: MemberGroup, action: str) -> str:
    """The group's row of the markdown table."""
    fields = list(
        dict.fromkeys(text.split(":")[0].split(".")[0].split("[")[0] for text in group.texts)
    )
    noun = "surveys" if group.kind == "Survey" else "exclusion groups"
    return (
        f"| program `{group.program}` ({len(group.members)} {noun}) | {action} | "
        f"{', '.join(fields) or '–'} | {group.spend_delta or '–'} |"
    )


def member_list(group: MemberGroup) -> list[str]:
    """The members of a group as a collapsed markdown list."""
    lines = [f"<details><summary>{len(group.members)} members</summary>", ""]
    lines += [f"- `{member.address}`" for member in group.members]
    return [*lines, "", "</details>", ""]
