"""One write to a state: which addresses it changed, from what to what, by whom and when.

Every write of either backend is a `Change` with the next serial. The file backend appends it as
one JSON line to the change log beside the state file (and, once compacted, to the history
file); the PostgreSQL backend turns it into row updates and history rows in one transaction.
So a write costs what the resources it touches cost, whatever the size of the state, and
`surveyctl state history` can say who changed an address, when, and from what to what.

What an address holds is an `Entry`: its managed record, its unresolved create, or both. Its
JSON form is what `surveyctl state show` prints: the record's fields, plus `unresolved_create`.
"""

from __future__ import annotations

import getpass
import socket
from dataclasses import dataclass
from typing import Any

from surveyctl.errors import SurveyctlError
from surveyctl.resources import SURVEY
from surveyctl.state.history_line import history_line, line_change
from surveyctl.state.records import (
    JournalEntry,
    Record,
    State,
    StateError,
    SurveyRecord,
    journal_from_json,
    record_from_json,
)
from surveyctl.state.status_changes import StatusChange

# The command of a change that stands for a whole state whose earlier history is unknown (a
# state file written before history was kept): `fold` starts from it.
BASELINE_COMMAND = "(state before history was kept)"


def actor(named: str | None = None) -> str:
    """Who makes the changes of this process: `named` (configuration: $SURVEYCTL_ACTOR, for
    when the OS user says little, as a CI runner's `runner`), else user@host."""
    if named:
        return named
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


@dataclass(frozen=True)
class Entry:
    """What the state holds under one address: a record, an unresolved create, or both."""

    record: Record | None = None
    pending: JournalEntry | None = None

    def to_json(self) -> dict:
        shown: dict[str, Any] = self.record.to_json() if self.record is not None else {}
        if self.pending is not None:
            shown["unresolved_create"] = self.pending.to_json()
        return shown

    @classmethod
    def from_json(cls, address: str, data: dict, source: object) -> Entry:
        fields = {key: value for key, value in data.items() if key != "unresolved_create"}
        record = record_from_json(address, fields, source) if fields else None
        pending = data.get("unresolved_create")
        if pending is not None and not (
            isinstance(pending, dict) and {"address", "started_at", "fingerprint"} <= set(pending)
        ):
            raise StateError(f"{source}: the unresolved create of {address} is not readable")
        return cls(
            record, journal_from_json(pending, address, source) if pending is not None else None
        )


def entry_of(state: State, address: str) -> Entry | None:
    """The entry of `address` in `state`, or None when the state does not know it."""
    record = state.resources.get(address)
    pending = state.journal.get(address)
    if record is None and pending is None:
        return None
    return Entry(record, pending)


def put_entry(state: State, address: str, entry: Entry | None) -> None:
    """Sets the entry of `address` in `state` (None removes the address)."""
    if entry is None or entry.record is None:
        state.resources.pop(address, None)
    else:
        state.resources[address] = entry.record
    if entry is None or entry.pending is None:
        state.journal.pop(address, None)
    else:
        state.journal[address] = entry.pending


@dataclass(frozen=True)
class Edit:
    """One address changed by a write."""

    address: str
    before: Entry | None
    after: Entry | None

    def to_json(self) -> dict:
        return line_change(
            self.address,
            None if self.before is None else self.before.to_json(),
            None if self.after is None else self.after.to_json(),
        )


@dataclass(frozen=True)
class Change:
    """One write: the serial it makes, its lineage, when, who, in which command, and its edits."""

    lineage: str
    serial: int
    at: str
    who: str
    command: str
    edits: tuple[Edit, ...]

    def to_json(self) -> dict:
        """Its history line (and change-log line), in the shape a status change shares."""
        return history_line(
            self.lineage,
            self.serial,
            self.at,
            self.who,
            self.command,
            [edit.to_json() for edit in self.edits],
        )

    @classmethod
    def from_json(cls, data: Any, source: object) -> Change:
        try:
            edits = tuple(
                Edit(
                    item["address"],
                    _entry(item["address"], item["before"], source),
                    _entry(item["address"], item["after"], source),
                )
                for item in data["changes"]
            )
            return cls(
                str(data["lineage"]),
                int(data["serial"]),
                str(data["at"]),
                str(data["who"]),
                str(data["command"]),
                edits,
            )
        except StateError:
            raise
        except SurveyctlError as exc:
            raise StateError(f"{source}: {exc.message}") from exc
        except KeyError as exc:
            raise StateError(
                f"{source}: not a surveyctl state change: it has no {exc.args[0]!r}"
            ) from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise StateError(
                f"{source}: not a surveyctl state change: a field of it is not what a change holds"
            ) from exc


def _entry(address: str, data: Any, source: object) -> Entry | None:
    return None if data is None else Entry.from_json(address, data, source)


def apply_change(state: State, change: Change) -> None:
    """Applies `change` to `state` in place: its entries, then its serial."""
    for edit in change.edits:
        put_entry(state, edit.address, edit.after)
    state.serial = change.serial


def diff(before: State, after: State) -> list[Edit]:
    """The edits that turn `before` into `after` (records are compared by identity, as the
    state shares them between copies and replaces one rather than changing it)."""
    edits = []
    for address in sorted(
        set(before.resources) | set(after.resources) | set(before.journal) | set(after.journal)
    ):
        if before.resources.get(address) is after.resources.get(address) and (
            before.journal.get(address) is after.journal.get(address)
        ):
            continue
        edits.append(Edit(address, entry_of(before, address), entry_of(after, address)))
    return edits


@dataclass(frozen=True)
class HistoryEntry:
    """One address changed by one write, or one status set on the marketplace (`status`, with
    the serial it came after and the survey's address when managed, else None), as `surveyctl
    state history` lists it."""

    serial: int
    at: str
    who: str
    command: str
    address: str | None
    before: dict | None
    after: dict | None
    status: StatusChange | None = None

    @classmethod
    def of_status(cls, change: StatusChange) -> HistoryEntry:
        return cls(
            change.serial, change.at, change.who, change.command, change.address, None, None, change
        )

    def concerns_survey(self, survey_id: int) -> bool:
        """Whether this entry is about survey `survey_id`: a status set on it or on one of its
        transactions, or a write of a survey's address whose record holds that id before or
        after (recorded, changed, removed), whatever the address and whether the state still
        manages it."""
        if self.status is not None:
            return self.status.what.survey_id == survey_id
        if self.address is None or self.address.partition("/")[0] != SURVEY:
            return False
        return any(
            entry is not None and entry.get(SurveyRecord.id_name) == survey_id
            for entry in (self.before, self.after)
        )

    @property
    def summary(self) -> str:
        """What happened, in a few words."""
        if self.status is not None:
            return self.status.what.describe()
        before, after = self.before or {}, self.after or {}
        was_pending, is_pending = "unresolved_create" in before, "unresolved_create" in after
        had, has = _has_record(before), _has_record(after)
        if is_pending and not was_pending:
            return "create started"
        if was_pending and not is_pending:
            return "create recorded" if has and not had else "create cleared"
        if not had and has:
            return "added"
        if had and not has:
            return "removed"
        if _only_mod_on(before, after):
            # An apply that read a survey and found it as last applied records its mod_on so
            # that later plans need not read it: "changed" read as a write that was not made.
            return "mod_on recorded"
        return "changed"

    def to_json(self) -> dict:
        if self.status is not None:
            # No serial of its own: it wrote no state. `after_serial` says where it stands.
            return {
                "serial": None,
                "after_serial": self.serial,
                "at": self.at,
                "who": self.who,
                "command": self.command,
                "address": self.address,
                "change": self.summary,
                **self.status.what.to_json(),
            }
        return {
            "serial": self.serial,
            "at": self.at,
            "who": self.who,
            "command": self.command,
            "address": self.address,
            "change": self.summary,
            "before": self.before,
            "after": self.after,
        }


def _has_record(entry: dict) -> bool:
    return any(key != "unresolved_create" for key in entry)


def _only_mod_on(before: dict, after: dict) -> bool:
    """Whether the two entries differ in the survey's `mod_on` alone."""
    rest = {key: value for key, value in before.items() if key != "mod_on"}
    return before.get("mod_on") != after.get("mod_on") and rest == {
        key: value for key, value in after.items() if key != "mod_on"
    }


def history_entries(change: Change) -> list[HistoryEntry]:
    """The history rows of one write, one per address it changed."""
    return [
        HistoryEntry(
            change.serial,
            change.at,
            change.who,
            change.command,
            edit.address,
            None if edit.before is None else edit.before.to_json(),
            None if edit.after is None else edit.after.to_json(),
        )
        for edit in change.edits
    ]


def fold(changes: list[Change], serial: int, lineage: str, source: object) -> State:
    """The state right after `serial`, from its changes in serial order (those of `lineage`
    up to `serial`), starting from the last baseline among them if there is one."""
    changes = [c for c in changes if c.lineage == lineage and c.serial <= serial]
    baselines = [i for i, c in enumerate(changes) if c.command == BASELINE_COMMAND]
    if baselines:
        changes = changes[baselines[-1] :]
    if serial > 0 and (not changes or (changes[0].serial > 1 and not baselines)):
        raise StateError(
            f"the history of {source} does not reach back to serial {serial}: the state was "
            "written by a surveyctl that kept no history"
        )
    state = State(lineage=lineage)
    for change in changes:
        apply_change(state, change)
    state.serial = serial
    return state
