"""The status codes of the marketplace, with the names people read (public facts).

A survey's `ps_survey_status` moves draft -> live <-> paused -> closed (the moves are the
sandbox's decision: neither the spec nor the public facts show them; docs/api-assumptions.md).
A transaction's `Respondent Status Code` (the `st` of the return link) says how a respondent's
session ended.
"""

from __future__ import annotations

DRAFT = 11
LIVE = 22
PAUSED = 33
CLOSED = 44

SURVEY_STATUSES: dict[str, int] = {"draft": DRAFT, "live": LIVE, "paused": PAUSED, "closed": CLOSED}
SURVEY_STATUS_NAMES: dict[int, str] = {code: name for name, code in SURVEY_STATUSES.items()}
# The moves surveyctl expects the marketplace to make, as the sandbox does: draft -> live <->
# paused -> closed (a sandbox decision; the public facts name the statuses, not the moves).
SURVEY_MOVES: frozenset[tuple[int, int]] = frozenset(
    {(DRAFT, LIVE), (LIVE, PAUSED), (PAUSED, LIVE), (PAUSED, CLOSED)}
)
# Sessions the transaction status call can still end: in the buyer's survey, or dropped.
IN_BUYER_SURVEY = 16
BUYER_DROP = 19
OPEN_TRANSACTION_STATUSES = (IN_BUYER_SURVEY, BUYER_DROP)

COMPLETE = 21

# The `st` values a buyer's survey sends back on the return link, by the names the CLI takes.
RETURN_STATUSES: dict[str, int] = {
    "complete": COMPLETE,
    "overquota": 17,
    "term": 18,
    "quality": 20,
    "security": 30,
}
RETURN_STATUS_NAMES: dict[int, str] = {code: name for name, code in RETURN_STATUSES.items()}

TRANSACTION_STATUS_NAMES: dict[int, str] = {
    11: "platform drop",
    12: "platform quota full",
    13: "platform termination",
    14: "in progress on the platform",
    15: "platform quality / de-dupe",
    16: "in progress on the buyer survey",
    17: "buyer quota full",
    18: "buyer termination",
    19: "buyer drop",
    20: "buyer quality termination",
    21: "complete",
    22: "survey closed termination",
    23: "survey paused termination",
    24: "unopened quota termination",
    25: "supplier allocation full",
    30: "buyer security",
    31: "tampered buyer URL",
}


def survey_move_path(current: int, wanted: int) -> list[int] | None:
    """The statuses a survey passes through from `current` to `wanted`, `wanted` included
    (`[33, 44]` from live to closed); [] when it is there already, None when no moves lead
    there (a closed survey, or back to draft)."""
    if current == wanted:
        return []
    paths: dict[int, list[int]] = {current: []}
    pending = [current]
    while pending:
        status = pending.pop(0)
        for start, end in sorted(SURVEY_MOVES):
            if start == status and end not in paths:
                paths[end] = [*paths[status], end]
                pending.append(end)
    return paths.get(wanted)


def survey_status_name(code: object) -> str:
    """`live` for 22; `unknown` for a code this table does not know."""
    return SURVEY_STATUS_NAMES.get(code, "unknown")  # type: ignore[arg-type]


def transaction_status_name(code: object) -> str:
    """`complete` for 21; empty when the code is not known."""
    try:
        return TRANSACTION_STATUS_NAMES.get(int(code), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
