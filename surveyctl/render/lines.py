"""A planned resource as lines: what the text and markdown renderers both draw.

Each `Line` carries its symbol apart from its text, so the text renderer can indent and colour
it while the markdown renderer puts the symbol in column 0 of a `diff` block.
"""

from __future__ import annotations

from surveyctl.money import usd
from surveyctl.reconcile.plan import Plan, ResourceChange
from surveyctl.render.describe import Describer, Line

SYMBOLS = {"create": "+", "update": "~", "quota-update": "~", "delete": "-", "no-op": " "}


def resource_lines(plan: Plan, resource: ResourceChange, spend: bool = True) -> list[Line]:
    """The header of the resource, then one line per field, quota or change, its spend (unless
    `spend` is False) and any drift."""
    symbol = SYMBOLS[resource.action]
    lines = [Line(symbol, 0, f"{resource.address}{ident(resource)} {_how(resource)}")]
    describer = Describer(plan, resource)
    lines.extend(body_lines(describer, resource))
    if spend and resource.spend and resource.spend.before != resource.spend.after:
        before, after = usd(resource.spend.before), usd(resource.spend.after)
        lines.append(Line(" ", 1, f"spend: {before} -> {after}"))
    lines.extend(drift_lines(describer, resource))
    return lines


def body_lines(describer: Describer, resource: ResourceChange) -> list[Line]:
    """What is sent: every field of a create, or each changed field of an update."""
    if resource.action == "create" and resource.body:
        return describer.create_lines(resource.body)
    if resource.action in ("update", "quota-update"):
        return change_lines(describer, resource)
    return []


def drift_lines(describer: Describer, resource: ResourceChange) -> list[Line]:
    """One `!` line per managed field changed outside surveyctl since the last apply."""
    lines = []
    for change in resource.drift:
        path, old, new = describer.change(change)
        lines.append(Line("!", 1, f"drift: {path} was {old} when last applied, is {new} live"))
    return lines


def change_lines(describer: Describer, resource: ResourceChange) -> list[Line]:
    """One line per changed field of an update: `+` added, `-` removed, `~` changed."""
    lines = []
    for change in resource.changes:
        path, old, new = describer.change(change)
        if change.old is None:
            lines.append(Line("+", 1, f"{path}: {new}"))
        elif change.new is None:
            lines.append(Line("-", 1, f"{path}: {old}"))
        else:
            lines.append(Line("~", 1, f"{path}: {old} -> {new}"))
    return lines


def _how(resource: ResourceChange) -> str:
    return {
        "create": "will be created",
        "update": "will be updated (full overwrite PUT)",
        "quota-update": f"quotas will be updated ({_count(len(resource.quota_updates))})",
        "delete": "will be destroyed",
        "no-op": "unchanged",
    }[resource.action]


def _count(quota_puts: int) -> str:
    return f"{quota_puts} quota PUT" + ("" if quota_puts == 1 else "s")


def ident(resource: ResourceChange) -> str:
    """` (ps_survey_id 10001)`, or nothing for a resource not made yet."""
    return f" ({id_words(resource)})" if resource.remote_id is not None else ""


def id_words(resource: ResourceChange) -> str:
    """`ps_survey_id 10001`: the id of a resource made already, named as its kind names it."""
    from surveyctl.reconcile import kinds  # the kinds (and state) only when a plan is drawn

    return f"{kinds.get(resource.kind).id_label} {resource.remote_id}"
