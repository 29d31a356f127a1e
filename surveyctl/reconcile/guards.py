"""Guards on the size of a change: a plan over an environment's limits is an error.

An environment's `guards:` (surveyctl.yaml) bound what one apply may do: the estimated spend
it adds, the resources it destroys, the share of managed resources it changes or destroys. A
plan over a limit carries an error note, so every output format shows why and `apply` refuses
it, unless the named override is given (`--allow-spend-increase`, `--allow-destroy`,
`--allow-large-change`); then the note is a warning that names the override. A plan records
the overrides it was made with, and a saved plan is applied with exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from surveyctl.money import cents, dollars, usd, usd_delta
from surveyctl.reconcile.choices import DESTROY, LARGE_CHANGE, SPEND_INCREASE, flag

if TYPE_CHECKING:  # only for the types: `plan --help` reads the overrides' names from here
    from surveyctl.environments import Guards
    from surveyctl.reconcile.plan import Note, Plan

# The share of resources changed says little about a small environment (one change of three is
# 33 %), so max_changed_percent applies from this many managed resources on, as octoDNS's
# update and delete thresholds do.
MIN_MANAGED_FOR_PERCENT = 10


@dataclass(frozen=True)
class Excess:
    """One guard the plan goes over: which, the override that lets it through, and why."""

    guard: str
    override: str
    reason: str


def excesses(plan: Plan, guards: Guards, left_out: int = 0) -> list[Excess]:
    """Every guard of `guards` the plan goes over. `left_out`: the managed resources a
    `--target` plan does not cover; they are still managed, so the share counts them."""
    found = []
    increase = spend_increase(plan)
    limit = guards.max_spend_increase
    if limit is not None and increase > limit:
        spend = plan.spend_totals()
        net = usd_delta(spend.before, spend.after)
        offset = f" (net {net})" if net != f"+{usd(increase)}" else ""
        found.append(
            Excess(
                "max_spend_increase",
                SPEND_INCREASE,
                f"the plan raises the estimated spend of its surveys by {usd(increase)} "
                f"in all{offset}, more than max_spend_increase {usd(limit)}",
            )
        )
    destroys = plan.counts()["destroy"]
    if guards.max_destroy is not None and destroys > guards.max_destroy:
        found.append(
            Excess(
                "max_destroy",
                DESTROY,
                f"the plan destroys {destroys} resource(s), more than max_destroy "
                f"{guards.max_destroy}",
            )
        )
    planned = [r for r in plan.resources if r.action != "create"]
    changed = sum(1 for r in planned if r.is_change)
    managed = len(planned) + left_out
    limit = guards.max_changed_percent
    if limit is not None and managed >= MIN_MANAGED_FOR_PERCENT:
        percent = 100.0 * changed / managed
        if percent > limit:
            found.append(
                Excess(
                    "max_changed_percent",
                    LARGE_CHANGE,
                    f"the plan changes or destroys {changed} of {managed} managed "
                    f"resources ({percent:.0f} %), more than max_changed_percent {limit:g} %",
                )
            )
    return found


def guard_notes(
    plan: Plan,
    guards: Guards,
    overrides: Iterable[str],
    environment: str,
    location: str | None = None,
    left_out: int = 0,
) -> list[Note]:
    """A note per guard the plan goes over: an error, or a warning when its override is
    among `overrides`."""
    from surveyctl.reconcile.plan import Note  # with the plan, not for --help

    allowed = set(overrides)
    notes = []
    for excess in excesses(plan, guards, left_out):
        reason = f"{excess.reason} of environment {environment!r}"
        if excess.override in allowed:
            severity, message = "warning", f"{reason}; allowed by {flag(excess.override)}"
        else:
            severity = "error"
            message = f"{reason}; apply refuses it without {flag(excess.override)}"
        notes.append(Note(severity, f"guards.{excess.guard}", message, location))
    return notes


def add_guard_notes(
    plan: Plan,
    guards: Guards,
    overrides: Iterable[str],
    environment: str,
    location: str | None = None,
    left_out: int = 0,
) -> None:
    """Adds the guard notes a plan does not carry yet, and records `overrides` in it."""
    allowed = sorted(set(overrides))
    for note in guard_notes(plan, guards, allowed, environment, location, left_out):
        if note not in plan.notes:
            plan.notes.append(note)
    plan.overrides = allowed


def spend_increase(plan: Plan) -> float:
    """What the plan adds to the estimated spend, survey by survey (creates included): the
    cuts of others do not offset it, since completes already paid for are not given back and
    a lowered target need not be reached, while a raised one commits new money."""
    raised = (
        max(
            Decimal(0),
            (dollars(r.spend.after) or Decimal(0)) - (dollars(r.spend.before) or Decimal(0)),
        )
        for r in plan.resources
        if r.spend is not None
    )
    return cents(sum(raised, Decimal(0)))
