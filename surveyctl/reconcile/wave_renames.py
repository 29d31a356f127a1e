"""A program's wave that looks renamed: a note saying how to keep its surveys.

Members are addressed by their wave id (`tracker[en_GB,2026-11]`), so renaming a wave
(`2026-11` to `nov-26`) plans the new id's surveys as creates and the old id's as retired;
when the title holds `{wave}` no twin is found either (the titles differ), and apply would
run a second set of surveys beside the first. Nothing in the manifests says whether a wave
was renamed or one wave ended as another began, so this only says what it sees, as a note:
a create of a member whose wave is new to the state, beside a member of the same program
and market in the state whose wave left the program, whose last applied body is the
create's once the old id is read as the new one, and whose survey is not closed (a wave
dropped at the end of its fieldwork is closed; one renamed is not). A new wave added while
the others stay retires nothing, so the monthly cycle is never noted.

Nor does the state say when a wave left: nothing is written when a wave is dropped (its
members are kept as they were), so a wave dropped an edit ago and kept open, beside the next
wave added now, is the same state and manifests as a wave renamed now. The note says so and
names both ways rather than guess: a guess that missed a real rename would run the wave
twice, and closing a finished wave's surveys ends the note.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from surveyctl.model import DesiredState
from surveyctl.reconcile.live import LiveResult
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.resources import SURVEY, Member, member_of, split_address
from surveyctl.state import State
from surveyctl.statuses import CLOSED


def note_wave_renames(
    plan: Plan, desired: DesiredState, state: State, live: dict[str, LiveResult]
) -> None:
    """Adds a note to each survey create of `plan` that looks like a renamed wave's member."""
    if not any(r.action == "create" and r.kind == SURVEY for r in plan.resources):
        return  # the common plan: no state walk after its last read
    left = _members_left(desired, state, live)
    if not left:
        return
    waves_in_state = {(m.program, m.wave) for a in state.resources if (m := _member(a)) is not None}
    for resource in plan.resources:
        if resource.action != "create" or resource.kind != SURVEY:
            continue
        new = member_of(resource.name)
        if new is None or (new.program, new.wave) in waves_in_state:
            continue
        matches = [
            old_address
            for old_address, old in left.get((new.program, new.market), [])
            if _renamed(state, old_address, old.wave, new.wave, resource.last_applied)
        ]
        if matches:
            message = _message(matches, resource.address)
            plan.notes.append(Note("note", resource.address, message, resource.location))


def _member(resource_address: str) -> Member | None:
    kind, name = split_address(resource_address)
    return member_of(name) if kind == SURVEY else None


def _members_left(
    desired: DesiredState, state: State, live: dict[str, LiveResult]
) -> dict[tuple[str, str], list[tuple[str, Member]]]:
    """The surveys in state of a program the manifests describe, in a market it still has,
    of a wave it no longer has and not closed, by (program, market)."""
    left: dict[tuple[str, str], list[tuple[str, Member]]] = {}
    for resource_address in sorted(state.resources):
        member = _member(resource_address)
        program = desired.programs.get(member.program) if member else None
        if member is None or program is None:
            continue
        if member.market not in program.markets or member.wave in program.waves:
            continue
        result = live.get(resource_address)
        body = result.body if result is not None else None
        if body and body.get("ps_survey_status") == CLOSED:
            continue
        left.setdefault((member.program, member.market), []).append((resource_address, member))
    return left


def _renamed(state: State, old_address: str, old: str, new: str, body: dict | None) -> bool:
    """Whether the last body applied to `old_address`, read with wave id `new` for `old`, is
    `body` (the create's)."""
    record = state.resources.get(old_address)
    applied = getattr(record, "last_applied", None)
    if not applied or not body:
        return False
    return _with_wave(applied, old, new) == body


def _with_wave(value: Any, old: str, new: str) -> Any:
    """`value` with each `old` that stands alone (not part of a longer word or number, as
    wave `1` is part of `10`) read as `new`."""
    if isinstance(value, str):
        return re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])", new, value)
    if isinstance(value, dict):
        return {key: _with_wave(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_wave(item, old, new) for item in value]
    return value


def _message(old_addresses: list[str], new_address: str) -> str:
    moves = " or ".join(
        f"`surveyctl state mv {shlex.quote(old)} {shlex.quote(new_address)}`"
        for old in old_addresses
    )
    olds = ", ".join(old_addresses)
    one = len(old_addresses) == 1
    waves, that = ("a wave", "that wave") if one else ("waves", "one of those waves")
    return (
        f"created beside {olds}, of {waves} its program no longer lists (dropped in this edit "
        f"or an earlier one: the state does not say which), the same survey but for the wave "
        f"id: if this edit renames {that} to this one, run {moves} and plan again, so that the "
        "survey keeps its id and fieldwork instead of running twice; if this is a new wave, "
        "apply as planned"
    )
