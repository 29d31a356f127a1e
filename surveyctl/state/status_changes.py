"""Status set on the marketplace outside apply, as the environment's history keeps it.

`surveyctl status SURVEY_ID live|paused|closed` and `surveyctl transactions set-status` change
live things (a launch can spend money, a final status decides what is paid) but write no state.
So that a team sharing an account can tell who launched or closed a survey, or set which
transaction's status, each such change that was made, or whose answer was lost so that it may
have been made, is one `StatusChange` in the history beside the state's writes.

A status change is not a write of the state: it takes no new serial (a saved plan stays
valid), needs no state lock (a pause is never held up behind an apply), and changes no entry
(`state show --serial` and `state migrate` rebuild the state without it). It carries the serial
the state was at when it was recorded, so `state history` lists it after that write.

It is stored in the same history as the writes, in the same shape (both are made by
`surveyctl.state.history_line`): a line of the file backend's `<environment>.history.jsonl` or a
row of PostgreSQL's `history` table, with one address whose entry `after` is
`{"status_change": {...}}`. A surveyctl from before status changes were kept
reads that as a field of a record it does not know, and so refuses the history (as a newer
state) instead of showing it wrongly or dropping it in a `state migrate`; the state itself, and
with it plan and apply, is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from surveyctl.resources import SURVEY, address
from surveyctl.state.history_line import history_line, line_change
from surveyctl.statuses import survey_status_name, transaction_status_name

# The key of an entry's `after` that marks a history line or row as a status change.
MARK = "status_change"

# What became of the change, as the command learnt it.
MADE = "made"
MADE_ANSWER_LOST = "made_answer_lost"  # the answer was lost; read back, it had been made
MAYBE_MADE = "may_have_been_made"  # the answer was lost and the read-back did not show it
OUTCOMES = {
    MADE: "made",
    MADE_ANSWER_LOST: "made though its answer was lost",
    MAYBE_MADE: "may have been made",
}


@dataclass(frozen=True)
class StatusSet:
    """What a command set: a survey's status, or (with `transaction_id`) a transaction's final
    status; from which status when known, what the person was told it costs, and the outcome."""

    survey_id: int
    to_status: int
    outcome: str
    from_status: int | None = None
    transaction_id: str | None = None
    cost: str | None = None

    def describe(self) -> str:
        """`survey 10001: draft (11) -> live (22), made; said to cost up to $2,500.00 ...`."""
        if self.transaction_id is None:
            what = f"survey {self.survey_id}"
            before = _named(self.from_status, survey_status_name)
            after = _named(self.to_status, survey_status_name)
        else:
            what = f"transaction {self.transaction_id} of survey {self.survey_id}"
            before = _named(self.from_status, transaction_status_name)
            after = _named(self.to_status, transaction_status_name)
        said = f"; said to cost {self.cost}" if self.cost else ""
        return f"{what}: {before} -> {after}, {OUTCOMES.get(self.outcome, self.outcome)}{said}"

    def to_json(self) -> dict:
        return {
            "survey_id": self.survey_id,
            "transaction_id": self.transaction_id,
            "from": self.from_status,
            "to": self.to_status,
            "cost": self.cost,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class StatusChange:
    """A `StatusSet` as the history keeps it: after which serial of which state (lineage ""
    when the environment had no state yet), when, who, in which command, and the address of
    the survey when the state manages it (None otherwise)."""

    lineage: str
    serial: int
    at: str
    who: str
    command: str
    address: str | None
    what: StatusSet

    def to_json(self) -> dict:
        """Its history line: a write's shape, one address whose `after` is the mark."""
        return history_line(
            self.lineage,
            self.serial,
            self.at,
            self.who,
            self.command,
            [line_change(self.row_address, None, self.after())],
        )

    def after(self) -> dict:
        """The `after` of its history line or row."""
        return {MARK: {"address": self.address, **self.what.to_json()}}

    @property
    def row_address(self) -> str:
        """The address its line or row is filed under: the survey's when the state manages it
        (so `state history NAME` finds it), else one no resource can have (`#` is in no name)."""
        return self.address or address(SURVEY, f"#{self.what.survey_id}")

    @property
    def key(self) -> tuple:
        """What tells two status changes apart (a migration copies those the target lacks)."""
        return (self.lineage, self.at, self.who, self.command, *self.what.to_json().values())


def is_status_change(after: Any) -> bool:
    """Whether the `after` of a history line or row marks a status change."""
    return isinstance(after, dict) and MARK in after


def from_history(data: Any, source: object) -> StatusChange | None:
    """The status change a history line (parsed JSON) holds; None when it holds a write."""
    try:
        (edit,) = data["changes"]
        after = edit["after"]
    except (KeyError, TypeError, ValueError):
        return None
    if not is_status_change(after):
        return None
    return from_parts(
        data.get("lineage"), data.get("serial"), data.get("at"), data.get("who"),
        data.get("command"), after, source,
    )  # fmt: skip


def from_parts(
    lineage: Any, serial: Any, at: Any, who: Any, command: Any, after: dict, source: object
) -> StatusChange | None:
    """A status change from the columns of a history line or row; None (it is skipped, as a
    torn line is) when it is not one this surveyctl wrote."""
    body = after.get(MARK)
    try:
        what = StatusSet(
            survey_id=int(body["survey_id"]),
            to_status=int(body["to"]),
            outcome=str(body["outcome"]),
            from_status=None if body.get("from") is None else int(body["from"]),
            transaction_id=_text(body.get("transaction_id")),
            cost=_text(body.get("cost")),
        )
        return StatusChange(
            str(lineage or ""),
            int(serial),
            str(at or ""),
            str(who),
            str(command),
            _text(body.get("address")),
            what,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _named(code: int | None, name_of) -> str:
    if code is None:
        return "unknown"
    name = name_of(code)
    return f"{name} ({code})" if name and name != "unknown" else str(code)
