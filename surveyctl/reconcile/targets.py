"""`--target ADDRESS`: plan (and apply) only some resources, and what they depend on.

A target is an address (`Survey/brand-tracker-us`, `ExclusionGroup/brand-trackers`) or a bare
name that names one resource; the name of a SurveyProgram names all its members (surveys and
groups), and a member's bare name (`brand-tracker[en_GB,2026-11]`) names what that market and
wave expand into: its survey and, with the program's `exclusion`, its group. A resource's
kind says what it depends on (`Kind.depends_on`): a group depends on its surveys (it names them
by their ids), so targeting a group plans its surveys too; a survey depends on nothing. Both the
desired state
and the state are cut down to the selection before planning: resources outside it are not
read, not changed and not destroyed. The plan says that it is partial.
"""

from __future__ import annotations

from dataclasses import replace

from surveyctl.errors import SurveyctlError
from surveyctl.model import DesiredState
from surveyctl.reconcile import kinds
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.resources import PROGRAM, address, member_of
from surveyctl.state import State
from surveyctl.suggest import suggest

PARTIAL = "--target"


class TargetError(SurveyctlError):
    """A --target that names no resource, or more than one."""


def select(
    desired: DesiredState, state: State, targets: tuple[str, ...]
) -> tuple[DesiredState, State]:
    """The desired state and state cut down to `targets` and their dependencies."""
    manifests = {
        address(kind.name, name): (kind, manifest)
        for kind in kinds.in_order()
        for name, manifest in kind.manifests(desired).items()
    }
    known = set(manifests) | set(state.addresses())
    chosen: set[str] = set()
    refused = []  # every target that names nothing, so that one run shows them all
    for target in targets:
        try:
            _program_by_address(target, desired)
            chosen |= _program(target, known, desired) or _resolve(target, known, desired)
        except TargetError as exc:
            refused.append(str(exc))
    if refused:
        raise TargetError("; ".join(refused))
    for target in list(chosen):
        if target in manifests:
            kind, manifest = manifests[target]
            chosen |= set(kind.depends_on(manifest))
    cut = DesiredState(files=desired.files, programs=desired.programs)
    for kind in kinds.in_order():
        kind.manifests(cut).update(
            (n, m) for n, m in kind.manifests(desired).items() if address(kind.name, n) in chosen
        )
    kept_state = replace(
        state.copy(),
        resources={a: r for a, r in state.resources.items() if a in chosen},
        journal={a: j for a, j in state.journal.items() if a in chosen},
    )
    return cut, kept_state


def mark_partial(plan: Plan, targets: tuple[str, ...]) -> None:
    """Says in the plan that it covers only the targets and their dependencies."""
    shown = ", ".join(targets)
    plan.notes.insert(
        0,
        Note(
            "warning",
            PARTIAL,
            f"this plan is partial: only {shown} (and the surveys of targeted groups) were "
            "planned; other resources were not read and may differ from their manifests",
        ),
    )


def _program(target: str, known: set[str], desired: DesiredState) -> set[str]:
    """Every known member of program `target` (empty when it names no program)."""
    if "/" in target or target not in desired.programs:
        return set()
    return {a for a in known if (m := member_of(a.split("/", 1)[1])) and m.program == target}


def _program_by_address(target: str, desired: DesiredState) -> None:
    """A program written as an address (`SurveyProgram/NAME`): a program is no resource of its
    own, so its name alone targets it; said so, rather than a near address of a member."""
    kind, _, name = target.partition("/")
    if kind == PROGRAM and name in desired.programs:
        raise TargetError(
            f"--target {target}: a program is targeted by its name alone (`--target {name}`, "
            f"every member), or one member by its market and wave (`--target "
            f"'{name}[MARKET,WAVE]'`)"
        )


def _resolve(target: str, known: set[str], desired: DesiredState) -> set[str]:
    if "/" in target:
        if target in known:
            return {target}
        raise TargetError(
            f"--target {target}: no manifest or state entry has that address"
            + suggest(target, sorted(known))
        )
    matches = sorted(a for a in known if a.split("/", 1)[1] == target)
    if not matches:
        # a program's name is a target too, and the likeliest one to be mistyped
        names = sorted({a.split("/", 1)[1] for a in known} | set(desired.programs))
        raise TargetError(f"--target {target}: no resource has that name" + suggest(target, names))
    # Only a program makes a bracketed name, so a Survey and a group sharing one are the same
    # market and wave: one member, planned whole as the program's name plans every member.
    if len(matches) > 1 and member_of(target) is None:
        raise TargetError(f"--target {target} is ambiguous; use one of {', '.join(matches)}")
    return set(matches)
