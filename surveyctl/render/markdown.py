"""The plan as markdown for a pull-request comment, in the order a reviewer reads it.

1. a heading naming the environment, and the summary line (counts and the total spend change,
   the only place the total appears);
2. errors that block the apply, then warnings and notes;
3. one table: resource, action, fields changed, spend change (members of a program changed
   alike are one row, see render/programs.py);
4. the details: one fenced `diff` block per resource (or group of members, followed by its
   member list, collapsed), with `+`, `-` and `!` in column 0 so
   GitHub colours added, removed and changed lines.

A comment is cut to fit GitHub's limit, saying how many resources it leaves out. A plan that
could not be made at all still gets a comment (`render_failure`) that says what failed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from surveyctl.money import usd_delta
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.render import text
from surveyctl.render.formats import Format, register
from surveyctl.render.lines import resource_lines
from surveyctl.render.notes import listed_notes
from surveyctl.render.programs import (
    MemberGroup,
    group_lines,
    group_row,
    member_groups,
    member_list,
)
from surveyctl.render.values import printable

if TYPE_CHECKING:  # --help loads the formats, and must not load the manifests package
    from surveyctl.manifests.diagnostics import Diagnostic

# GitHub refuses comments longer than 65,536 characters; keep room for the closing lines.
COMMENT_LIMIT = 65_536
_RESERVE = 1_000
# Up to this many changed resources the details are open; more are collapsed.
OPEN_DETAILS = 20
# A comment's warning of the resources no manifest names names this many of them (the text
# plan, in the job's log, names them all).
NAMED_LEFT_ALONE = 20
# A marker a CI job can find to update its comment instead of adding one per push.
MARKER = "<!-- surveyctl-plan -->"

ACTIONS = {
    "create": "create",
    "update": "update",
    "quota-update": "quota update",
    "delete": "**destroy**",
    "no-op": "no change",
}
# In a diff block, `!` marks a changed line (GitHub has no colour for `~`).
_DIFF_SYMBOLS = {"~": "!"}


def render(plan: Plan) -> str:
    """The pull-request comment of a plan."""
    shown = _entries(plan)
    head = [f"### surveyctl plan: {_code(plan.environment)}", ""]
    if plan.from_state:
        head += [f"> **{text.FROM_STATE}**", ""]
    head += [f"**{text.summary_line(plan)}**", ""]
    for warning in plan.warnings:  # on stderr when planned, which a comment does not show
        head += [f"> **Warning:** {_inline(warning)}", ""]
    head += _notes(plan)
    if shown:
        head += _table(shown, COMMENT_LIMIT - _RESERVE - _size(head))
    lines = head + _details(plan, shown, COMMENT_LIMIT - _RESERVE - _size(head))
    lines += [MARKER, ""]
    return "\n".join(lines)


def render_failure(environment: str, message: str, findings: list[Diagnostic] | None = None) -> str:
    """The comment of a plan that could not be made: what failed, and each finding."""
    lines = [
        f"### surveyctl plan: {_code(environment)} failed",
        "",
        f"**Nothing was planned:** {_inline(message)}",
        "",
    ]
    if findings:
        # A schema change or a bad merge can break every manifest at once: a thousand
        # findings are a comment GitHub refuses whole, so those that do not fit are counted.
        items = [f"- {_inline(str(item))}" for item in findings]
        budget = COMMENT_LIMIT - _RESERVE - _size(lines)
        lines += _bounded(items, "finding(s)", budget, "`surveyctl validate` shows them all.")
    lines += ["Fix this and push again; apply is blocked until a plan succeeds.", "", MARKER, ""]
    return "\n".join(lines)


def _notes(plan: Plan) -> list[str]:
    """Errors, then warnings and notes, within half the comment: a state that is empty or
    wrong makes one error per manifest (each meets its survey as a twin), and hundreds of
    them would push the comment over GitHub's limit, which refuses it whole. The table and
    the details keep the other half."""
    budget = (COMMENT_LIMIT - _RESERVE) // 2
    errors = [(note, None) for note in plan.errors]
    listed = _note_list("**Errors (apply is blocked):**", errors, "error(s)", budget)
    # Notes alike are one item, naming them (render/notes.py), the first NAMED_LEFT_ALONE of
    # the resources left alone; errors never are.
    others = [
        shown for shown in listed_notes(plan, NAMED_LEFT_ALONE) if shown[0].severity != "error"
    ]
    budget -= _size(listed)
    return listed + _note_list("**Warnings and notes:**", others, "warning(s) and note(s)", budget)


def _note_list(title: str, notes: list, noun: str, budget: int) -> list[str]:
    """`title` and one item per note (with the members it is of, or None) while they fit in
    `budget`; the rest are counted."""
    if not notes:
        return []
    items = [_note(note, members) for note, members in notes]
    return [title, *_bounded(items, noun, budget - _size([title]), _WHOLE_PLAN)]


_WHOLE_PLAN = "The job's log shows the whole plan."


def _bounded(items: list[str], noun: str, budget: int, where: str) -> list[str]:
    """The lines of `items` while they fit in `budget`, then how many more there are and
    `where` the reviewer finds them; then a blank line."""
    lines: list[str] = []
    used = 0  # kept as items are added, rather than summed again for each item
    for index, item in enumerate(items):
        used += len(item) + 1
        if used > budget:
            lines.append(
                f"- *{len(items) - index} more {noun} are not shown: the comment would exceed "
                f"GitHub's limit. {where}*"
            )
            break
        lines.append(item)
    lines.append("")
    return lines


def _note(note, members: str | None = None) -> str:
    where = f" ({note.location})" if note.location else ""
    severity = "" if note.severity == "error" else f"{note.severity}: "
    if not members and not note.address:  # said of many resources, named in the message
        return f"- {severity}{_inline(note.message + where)}"
    who = _inline(members) if members else _code(note.address)
    return f"- {severity}{who}: {_inline(note.message + where)}"


def _table(resources: list, budget: int) -> list[str]:
    lines = ["| resource | action | fields changed | spend change |", "|---|---|---|---|"]
    for index, resource in enumerate(resources):
        if _size(lines) > budget:
            lines.append(f"| *{len(resources) - index} more* | | | |")
            break
        if isinstance(resource, MemberGroup):
            lines.append(group_row(resource, ACTIONS[resource.action]))
            continue
        action = ACTIONS[resource.action] + (" (drift)" if resource.drift else "")
        fields = list(dict.fromkeys(change.field for change in resource.changes))
        spend = ""
        if resource.spend and resource.spend.before != resource.spend.after:
            spend = usd_delta(resource.spend.before, resource.spend.after)
        lines.append(
            f"| `{resource.address}` | {action} | {', '.join(fields) or '–'} | {spend or '–'} |"
        )
    lines.append("")
    return lines


def _details(plan: Plan, resources: list, budget: int) -> list[str]:
    if not resources:
        return []
    opened = " open" if len(resources) <= OPEN_DETAILS else ""
    lines = [f"<details{opened}><summary>Details</summary>", ""]
    left_out = 0
    for index, resource in enumerate(resources):
        block = _diff_block(plan, resource)
        if _size(lines) + _size(block) > budget:
            left_out = len(resources) - index
            break
        lines += block
    if left_out:
        lines += [
            f"*{left_out} more resource(s) are not shown: the comment would exceed GitHub's "
            "limit. The job's log shows the whole plan.*",
            "",
        ]
    lines += ["</details>", ""]
    return lines


def _diff_block(plan: Plan, resource: ResourceChange | MemberGroup) -> list[str]:
    body = []
    grouped = isinstance(resource, MemberGroup)
    drawn = group_lines(resource, members=False) if grouped else None
    for line in drawn or resource_lines(plan, resource, spend=False):
        symbol = _DIFF_SYMBOLS.get(line.symbol, line.symbol)
        body.append(f"{symbol} {'  ' * line.depth}{line.text}")
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    members = member_list(resource) if grouped else []
    return [f"{fence}diff", *body, fence, "", *members]


def _entries(plan: Plan) -> list[ResourceChange | MemberGroup]:
    """The changed resources, with members changed alike shown once as their group."""
    _, placed = member_groups(plan)
    entries: list[ResourceChange | MemberGroup] = []
    for resource in plan.resources:
        groups = placed.get(id(resource))
        if groups is not None:
            entries.extend(groups)  # where their first member is; nothing for the others
        elif resource.is_change or resource.drift:
            entries.append(resource)
    return entries


def _longest_backtick_run(lines: list[str]) -> int:
    longest = 0
    for line in lines:
        run = 0
        for char in line:
            run = run + 1 if char == "`" else 0
            longest = max(longest, run)
    return longest


def _inline(message: str) -> str:
    """One line of text for a list item, shown as written: no line breaks that would end the
    item, and none of its text taken as markdown. A message quotes manifests (an unknown
    field, a file name, a title) and the service, and a comment is posted by CI under its
    own name: `![x](https://...)` would load an image, `<img>` or `**APPROVED**` would
    dress the comment, and `@someone` would notify them. The message's own code spans
    (`surveyctl import ...`) stay code."""
    text = printable(" ".join(message.split()))
    parts, start = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [_escaped(text[start : span.start()]), span[0]]
        start = span.end()
    parts.append(_escaped(text[start:]))
    return "".join(parts)


# A code span: a run of backticks, then text, then a run of as many (CommonMark 6.1).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# What markdown or GitHub acts on in text: emphasis, links and images, HTML and entities,
# headings, tables, strikethrough, and backticks left unmatched. An underscore inside a word
# (live_url) emphasises nothing in GitHub's markdown and is left as it is.
_ACTIVE = re.compile(r"[\\`*\[\]<>!#|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# A mention: `@` at the start or after a character that is not part of a word.
_MENTION = re.compile(r"(?<![\w`])@([A-Za-z0-9][A-Za-z0-9_/-]*)")


def _escaped(text: str) -> str:
    """`text` with every character markdown acts on escaped, and mentions made code."""
    return _MENTION.sub(lambda m: f"`@{m[1]}`", _ACTIVE.sub(lambda m: "\\" + m[0], text))


def _code(text: str) -> str:
    """`text` as a code span, fenced by more backticks than it holds in a row."""
    text = printable(text)
    fence = "`" * (_longest_backtick_run([text]) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


register(Format("markdown", lambda plan, color: render(plan), failure=render_failure))
