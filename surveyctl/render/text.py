"""The plan as text, in the manner of `terraform plan`: `+` create, `~` update, `-` delete."""

from __future__ import annotations

from surveyctl.reconcile.plan import Plan
from surveyctl.render.lines import SYMBOLS, resource_lines
from surveyctl.render.values import money, money_delta

__all__ = ["SYMBOLS", "render", "summary_line"]

COLOURS = {"+": "32", "~": "33", "-": "31", "!": "35"}  # ANSI: green, yellow, red, magenta


def render(plan: Plan, color: bool = False) -> str:
    """The whole plan; `color` adds ANSI colours (the CLI decides: terminal, no NO_COLOR)."""

    def paint(symbol: str, text: str) -> str:
        return f"\033[{COLOURS[symbol]}m{text}\033[0m" if color and symbol in COLOURS else text

    lines: list[str] = []
    for resource in plan.resources:
        if resource.is_change or resource.drift:
            lines.extend(
                paint(line.symbol, "    " * line.depth + f"{line.symbol} {line.text}")
                for line in resource_lines(plan, resource)
            )
    if lines:
        lines.append("")
    if plan.notes:
        lines.append("Notes:")
        for note in plan.notes:
            where = f" ({note.location})" if note.location else ""
            lines.append(f"  {note.severity}: {note.address}: {note.message}{where}")
        lines.append("")
    lines.append(summary_line(plan))
    return "\n".join(lines) + "\n"


def summary_line(plan: Plan) -> str:
    if not plan.has_changes:
        line = "No changes. The live surveys match the manifests."
    else:
        counts = plan.counts()
        line = (
            f"Plan: {counts['add']} to add, {counts['change']} to change, "
            f"{counts['destroy']} to destroy."
        )
    spend = plan.spend_totals()
    if spend.before == spend.after and spend.after:
        line += f" Estimated spend: {money(spend.after)} (unchanged)."
    elif spend.before or spend.after:
        line += (
            f" Estimated spend: {money(spend.before)} -> {money(spend.after)} "
            f"({money_delta(spend.before, spend.after)})."
        )
    return line
