"""The plan as markdown for a pull-request comment: a summary table first, details collapsed."""

from __future__ import annotations

from surveyctl.reconcile.plan import Plan
from surveyctl.render import text
from surveyctl.render.values import money, money_delta

ACTIONS = {
    "create": "create",
    "update": "update",
    "quota-update": "quota update",
    "delete": "**destroy**",
    "no-op": "no change",
}


def render(plan: Plan) -> str:
    lines = [f"### surveyctl plan: `{plan.environment}`", "", text.summary_line(plan), ""]
    changed = [r for r in plan.resources if r.is_change or r.drift]
    if changed:
        lines += ["| | resource | action | fields | spend |", "|---|---|---|---|---|"]
        for resource in changed:
            symbol = text.SYMBOLS[resource.action]
            spend = ""
            if resource.spend and resource.spend.before != resource.spend.after:
                spend = money_delta(resource.spend.before, resource.spend.after)
            drift = " (drift)" if resource.drift else ""
            lines.append(
                f"| `{symbol}` | `{resource.address}` | {ACTIONS[resource.action]}{drift} "
                f"| {len(resource.changes)} | {spend} |"
            )
        lines.append("")
    errors = plan.errors
    if errors:
        lines.append("**Errors (apply is blocked):**")
        lines += [f"- `{note.address}`: {note.message}" for note in errors]
        lines.append("")
    spend = plan.spend_totals()
    if spend.before or spend.after:
        lines.append(
            f"Estimated spend: {money(spend.before)} -> {money(spend.after)} "
            f"({money_delta(spend.before, spend.after)})"
        )
        lines.append("")
    lines += [
        "<details><summary>Details</summary>",
        "",
        "```diff",
        text.render(plan).rstrip("\n"),
        "```",
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)
