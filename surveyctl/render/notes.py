"""The notes as the text and markdown plans list them: what many resources are told alike,
once.

A plan of the whole project warns of each managed resource no manifest names any more
(`LEFT_ALONE`, one per address in the plan's notes and `kept`). When surveys by the dozen left
the manifests (a market retired, a folder moved), one line each buried the rest of the notes;
they are listed as one warning that says how many and names them, kind by kind:

    warning: 26 managed resources are no longer in the manifests (26 surveys: a, b, c, ...);
    each is left alone (plan with --destroy to delete them, ...)

The text plan names every one of them (it is the whole plan, the job's log a comment sends the
reviewer to); a pull-request comment names the first ones and counts the rest. The JSON plan
keeps one note per address. Every other note goes through `shown_notes`, which lists the notes
that members of a program have word for word once (render/programs.py).
"""

from __future__ import annotations

import dataclasses

from surveyctl.reconcile.plan import LEFT_ALONE, Note, Plan
from surveyctl.render.programs import MIN_GROUP, shown_notes
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, split_address

# How a folded warning names the resources of a kind: `3 surveys: a, b, c`.
_NOUNS = {SURVEY: "survey", EXCLUSION_GROUP: "exclusion group"}


def listed_notes(plan: Plan, limit: int | None = None) -> list[tuple[Note, str | None]]:
    """The notes of `plan` as they are listed, each with whom it is said of in place of its
    address, or None for its address (see `shown_notes`). The warnings of two managed
    resources or more left alone as no manifest names them are one warning, where the first
    of them was, naming them all, or the first `limit` of them and how many more."""
    kept = set(plan.kept)
    alone = [n for n in plan.notes if _left_alone(n, kept)]
    if len(alone) < MIN_GROUP:
        return shown_notes(plan)
    folded = Note("warning", "", _folded([n.address for n in alone], limit))
    notes: list[Note] = []
    for note in plan.notes:
        if not _left_alone(note, kept):
            notes.append(note)
        elif note is alone[0]:  # the fold is listed where the first of them was
            notes.append(folded)
    return shown_notes(dataclasses.replace(plan, notes=notes))


def _left_alone(note: Note, kept: set[str]) -> bool:
    return note.severity == "warning" and note.address in kept and note.message == LEFT_ALONE


def _folded(addresses: list[str], limit: int | None) -> str:
    """`26 managed resources are no longer in the manifests (25 surveys: a, b, ...; 1
    exclusion group: g); each is left alone (...)`, with at most `limit` names."""
    by_kind: dict[str, list[str]] = {}
    for address in addresses:
        kind, name = split_address(address)
        by_kind.setdefault(kind, []).append(name)
    named, left = [], limit
    for kind, names in by_kind.items():
        shown = names if left is None else names[: max(left, 0)]
        if left is not None:
            left -= len(shown)
        noun = _NOUNS.get(kind, kind)
        noun = noun if len(names) == 1 else f"{noun}s"
        more = len(names) - len(shown)
        listed = ", ".join(shown) + (f" and {more} more" if shown and more else "")
        named.append(f"{len(names)} {noun}: {listed}" if shown else f"{len(names)} {noun}")
    unnamed = "" if limit is None or limit >= len(addresses) else ", named in the text plan"
    return (
        f"{len(addresses)} managed resources are no longer in the manifests "
        f"({'; '.join(named)}{unnamed}); each is left alone (plan with --destroy to delete "
        "them, or `surveyctl state rm ADDRESS` to stop managing one)"
    )
