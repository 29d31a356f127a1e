"""The plan as text, in the manner of `terraform plan`: `+` create, `~` update, `-` delete."""

from __future__ import annotations

import textwrap

from surveyctl.money import usd, usd_delta
from surveyctl.reconcile.plan import Plan
from surveyctl.render.formats import Format, register
from surveyctl.render.lines import SYMBOLS, resource_lines
from surveyctl.render.notes import listed_notes
from surveyctl.render.programs import group_lines, member_groups
from surveyctl.render.report import ApplyReport
from surveyctl.render.values import printable

__all__ = ["SYMBOLS", "render", "render_apply", "summary_line"]

# The header of a plan made without reading the service (`plan --refresh=false`).
FROM_STATE = (
    "Planned against the state alone (--refresh=false): no survey was read, so changes made "
    "on the service since the last apply are not shown. Plan without it before applying."
)
COLOURS = {"+": "32", "~": "33", "-": "31", "!": "35"}  # ANSI: green, yellow, red, magenta


def render(plan: Plan, color: bool = False) -> str:
    """The whole plan; `color` adds ANSI colours (the CLI decides: terminal, no NO_COLOR)."""

    def paint(symbol: str, text: str) -> str:
        return f"\033[{COLOURS[symbol]}m{text}\033[0m" if color and symbol in COLOURS else text

    lines: list[str] = []
    if plan.from_state:
        lines += [paint("!", f"! {line}") for line in textwrap.wrap(FROM_STATE, 90)] + [""]
    _, placed = member_groups(plan)
    for resource in plan.resources:
        groups = placed.get(id(resource))
        if groups is not None:  # a member: its groups are drawn where their first member is
            drawn = [line for group in groups for line in group_lines(group)]
        elif resource.is_change or resource.drift:
            drawn = resource_lines(plan, resource)
        else:
            continue
        lines.extend(
            paint(line.symbol, "    " * line.depth + f"{line.symbol} {line.text}") for line in drawn
        )
    if lines and lines[-1]:  # the --refresh=false header ends with its own blank line
        lines.append("")
    if plan.notes:
        lines.append("Notes:")
        for note, members in listed_notes(plan):
            where = f" ({note.location})" if note.location else ""
            # A note said of many resources names them in its message and has no address.
            who = members or note.address
            said = f"{who}: {note.message}" if who else note.message
            lines.append(printable(f"  {note.severity}: {said}{where}"))
        lines.append("")
    lines.append(summary_line(plan))
    return "\n".join(lines) + "\n"


def render_apply(report: ApplyReport, color: bool = False) -> str:
    """What an apply did: Terraform's closing line, or the writes that failed or were not
    attempted and what to do next."""
    # The applier only once one has run.
    from surveyctl.reconcile.apply import HALTS, INTERRUPTED

    counts = report.counts()
    if report.verdict == "refreshed":
        return (
            f"Refresh complete: the live values of {report.refreshed} resource(s) are recorded "
            "as last applied.\n"
        )
    if report.verdict == "complete":
        # Terraform's words: the imported count is said only when something was imported.
        imported = f"{counts['imported']} imported, " if counts["imported"] else ""
        return (
            f"Apply complete! Resources: {imported}{counts['added']} added, "
            f"{counts['changed']} changed, {counts['destroyed']} destroyed.\n"
        )
    lines = [
        f"Apply {report.verdict}: {counts['done']} done, {counts['failed']} failed, "
        f"{counts['not_attempted']} not attempted."
    ]
    failed = report.result.failed
    lines.extend(
        printable(f"  {o.status}: {o.address} ({o.action}): {o.message}")  # the service's words
        for o in failed
        if o.message != INTERRUPTED and o.message not in HALTS
    )
    for message, why in {INTERRUPTED: "interrupted", **HALTS}.items():
        stopped = [o.address for o in failed if o.message == message]
        if stopped:
            lines.append(f"  not attempted ({why}): {', '.join(stopped)}")
    detail = report.result.halt_detail
    if detail and all(o.message != detail for o in failed):
        # A lock found lost before any write: no failed write says how it went, or what now.
        lines.append(printable(f"  why: {detail}"))
    lines.append(_closing(report))
    return "\n".join(lines) + "\n"


def _closing(report: ApplyReport) -> str:
    from surveyctl.reconcile.apply import HALTS

    if report.result.halted and all(o.status == "skipped" for o in report.result.outcomes):
        # Each write asks first, so none started: there is no write in flight to look for.
        return (
            f"This apply halted ({HALTS[report.result.halted]}) before its first write, so "
            "nothing was sent to the marketplace; run `surveyctl plan` to see what remains."
        )
    if report.result.halted:
        # The write in flight when it halted may have reached the marketplace while its
        # record failed: the state cannot be said to hold everything that was done.
        return (
            f"This apply halted ({HALTS[report.result.halted]}), so a write in flight may have "
            "reached the marketplace without a record (the next plan shows it as a write for "
            "apply to record, or as a create to resolve); run `surveyctl plan` to see what "
            "remains."
        )
    return "What was done is recorded in the state; run `surveyctl plan` to see what remains."


def summary_line(plan: Plan) -> str:
    """The last line: the counts, or "No changes" only when nothing at all is pending, then
    what else is pending, then the estimated spend of every managed survey."""
    if plan.refresh_only:
        drifted = len(plan.refreshed)
        if plan.settled:
            line = "No drift. The live resources match what was last applied."
        else:
            line = f"Refresh: {_many(drifted, 'resource')} changed outside surveyctl" + (
                "; `surveyctl apply --refresh-only` records their live values as last applied."
                if drifted
                else "."
            )
    elif plan.settled:
        line = "No changes. The live surveys match the manifests."
    else:
        counts = plan.counts()
        line = (
            f"Plan: {counts['add']} to add, {counts['change']} to change, "
            f"{counts['destroy']} to destroy."
        )
    for sentence in _pending(plan):
        line += f" {sentence}"
    spend = plan.spend_totals()
    if spend.before == spend.after and spend.after:
        line += f" Estimated spend: {usd(spend.after)} (unchanged)."
    elif spend.before or spend.after:
        line += (
            f" Estimated spend: {usd(spend.before)} -> {usd(spend.after)} "
            f"({usd_delta(spend.before, spend.after)})."
        )
    return line


def _pending(plan: Plan) -> list[str]:
    """What besides the changes a reader must know before trusting the counts."""
    sentences = []
    if plan.blocked:
        sentences.append(
            f"{_are(len(plan.blocked), 'create')} blocked by an unresolved earlier attempt "
            "(see the notes)."
        )
    unread = [address for address in plan.unread if address not in plan.unchecked]
    if unread:
        sentences.append(
            f"{_many(len(unread), 'managed resource')} could not be read, so the plan "
            "and the spend are incomplete."
        )
    if plan.unchecked:
        they = "it exists" if len(plan.unchecked) == 1 else "they exist"
        sentences.append(
            f"{_are(len(plan.unchecked), 'create')} left out: whether {they} on the service "
            "already could not be checked (see the notes)."
        )
    one = len(plan.kept) == 1
    if plan.kept:
        sentences.append(
            f"{_are(len(plan.kept), 'managed resource')} not in the manifests; "
            + (
                "it is kept, use --destroy to delete it."
                if one
                else "they are kept, use --destroy to delete them."
            )
        )
    if plan.gone:
        forgets = "`surveyctl apply --destroy`" if plan.destroy else "`surveyctl state rm`"
        sentences.append(
            f"{_are(len(plan.gone), 'managed resource')} gone from the marketplace; "
            f"{forgets} forgets {'it' if len(plan.gone) == 1 else 'them'}."
        )
    if plan.retired:
        sentences.append(
            f"{_are(len(plan.retired), 'retired program member')} kept (see the notes)."
        )
    if plan.adopted:
        sentences.append(
            f"{_are(len(plan.adopted), 'resource')} on the service adopted with --adopt (see "
            f"the notes); apply records {'it' if len(plan.adopted) == 1 else 'them'} in the "
            "state first."
        )
    adopted = [
        a for a, record in plan.recovered.items() if record is not None and a not in plan.adopted
    ]
    if adopted:
        sentences.append(
            f"{_many(len(adopted), 'create')} whose answer was lost made "
            f"{'a resource' if len(adopted) == 1 else 'resources'} that will be adopted "
            "(see the notes); apply records "
            f"{'it' if len(adopted) == 1 else 'them'} in the state."
        )
    if plan.unrecorded:
        # Not drift: writes an apply stopped before its state write made (kinds.base).
        one = len(plan.unrecorded) == 1
        sentences.append(
            f"{_are(len(plan.unrecorded), 'resource')} already as "
            f"{'its manifest asks' if one else 'their manifests ask'} in fields the state "
            "does not record yet (see the notes); `surveyctl apply` records them, with no "
            "write of their own."
        )
    if plan.drifted and not plan.refresh_only:
        # Drift the plan overwrites (a teammate's edit in the web UI) is settled by a plain
        # apply too: say both ways out.
        either = (
            "`surveyctl apply` writes the manifests' values again, or "
            if all(resource.is_change for resource in plan.drifted)
            else ""
        )
        sentences.append(
            f"{_many(len(plan.drifted), 'resource')} changed outside surveyctl since the last "
            f"apply (! drift); {either}`surveyctl apply --refresh-only` accepts the live values."
        )
    if plan.errors:
        sentences.append(f"The plan has {_many(len(plan.errors), 'error')}; apply refuses it.")
    return sentences


def _many(count: int, noun: str) -> str:
    """`1 error`, `3 errors`."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _are(count: int, noun: str) -> str:
    """`1 create is`, `3 managed resources are`."""
    return f"{_many(count, noun)} {'is' if count == 1 else 'are'}"


register(Format("text", render, apply=render_apply))
