"""Survey status codes (public facts), the moves a buyer may make, and the auto-pause rule."""

from __future__ import annotations

from collections.abc import Iterable

DRAFT = 11
LIVE = 22
PAUSED = 33
CLOSED = 44

STATUS_NAMES = {DRAFT: "draft", LIVE: "live", PAUSED: "paused", CLOSED: "closed"}

# PUT /surveys/{id}/status: every move not listed here is refused with 400.
ALLOWED_MOVES: frozenset[tuple[int, int]] = frozenset(
    {(DRAFT, LIVE), (LIVE, PAUSED), (PAUSED, LIVE), (PAUSED, CLOSED)}
)


def move_allowed(current: int, new: int) -> bool:
    return (current, new) in ALLOWED_MOVES


def goal_reached(
    completes: int, completes_required: int, quotas: Iterable[tuple[int, int]]
) -> bool:
    """Spec 1.5: the survey goal is achieved, or each quota is (quotas as (completes, required)).

    A survey without quotas pauses only on its own goal.
    """
    if completes >= completes_required:
        return True
    quotas = list(quotas)
    return bool(quotas) and all(done >= required for done, required in quotas)
