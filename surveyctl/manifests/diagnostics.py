"""Diagnostics: what validation found, each with a severity, one sentence and a file:line.

Validation never stops at the first problem: every check adds to a `Diagnostics` collection
and the caller decides what to print. `error` makes a manifest set invalid; `warning` and
`note` do not (a note reports a legitimate but notable choice, such as a soft launch).

A finding is reported once: the same one again is dropped, and so is one that differs only by
the program member it names (members of a SurveyProgram share the lines of its file, so one
mistake there is found in every member it reaches); the first then names the others, as in
`Survey 'tracker[en_GB,w1]' (and 1 more member: [en_GB,w2]) names attributes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from surveyctl.errors import Location, SurveyctlError
from surveyctl.resources import MARKET_PATTERN, NAME_PATTERN, WAVE_PATTERN

ERROR = "error"
WARNING = "warning"
NOTE = "note"

# A program member's name as a message quotes it: 'brand-tracker[en_GB,2026-11]'.
_QUOTED_MEMBER = re.compile(
    "'(?P<program>"
    + NAME_PATTERN[1:-1]
    + r")(?P<member>\[(?:"
    + MARKET_PATTERN[1:-1]
    + "),(?:"
    + WAVE_PATTERN[1:-1]
    + r")\])'"
)
_LISTED = 5  # members named in a merged finding; the others are counted


@dataclass(frozen=True)
class Diagnostic:
    """One finding: severity, a one-sentence summary, and where it applies."""

    severity: str
    summary: str
    location: Location | None = None

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{where}{self.severity}: {self.summary}"

    def to_json(self) -> dict:
        loc = self.location
        return {
            "severity": self.severity,
            "summary": self.summary,
            "file": loc.file if loc else None,
            "line": loc.line if loc else None,
            "column": loc.column if loc else None,
        }


@dataclass
class Diagnostics:
    """An ordered collection of diagnostics with counters by severity."""

    items: list[Diagnostic] = field(default_factory=list)
    _seen: set[Diagnostic] = field(default_factory=set, repr=False)
    # (severity, location, summary with the member masked) -> (index in items, summary as
    # first found, the members' bracketed parts in the order found)
    _shared: dict[tuple, tuple[int, str, list[str]]] = field(default_factory=dict, repr=False)

    def add(self, severity: str, summary: str, location: Location | None = None) -> None:
        """Adds a finding once: a cell shared by generated quotas is reported one time, and a
        line of a program shared by several members once, naming them."""
        item = Diagnostic(severity, _sentence(summary), location)
        if item in self._seen:
            return
        self._seen.add(item)
        members = {(m["program"], m["member"]) for m in _QUOTED_MEMBER.finditer(item.summary)}
        if location is None or len(members) != 1:
            self.items.append(item)
            return
        ((program, member),) = members
        masked = item.summary.replace(f"'{program}{member}'", f"'{program}[]'")
        key = (severity, location, masked)
        if key not in self._shared:
            self._shared[key] = (len(self.items), item.summary, [member])
            self.items.append(item)
            return
        index, first, found = self._shared[key]
        found.append(member)
        self.items[index] = Diagnostic(severity, _naming_others(first, program, found), location)

    def error(self, summary: str, location: Location | None = None) -> None:
        self.add(ERROR, summary, location)

    def warning(self, summary: str, location: Location | None = None) -> None:
        self.add(WARNING, summary, location)

    def note(self, summary: str, location: Location | None = None) -> None:
        self.add(NOTE, summary, location)

    def count(self, severity: str) -> int:
        return sum(1 for item in self.items if item.severity == severity)

    @property
    def has_errors(self) -> bool:
        return any(item.severity == ERROR for item in self.items)

    def sorted(self) -> list[Diagnostic]:
        """By file, then line and column; diagnostics without a place come first."""

        def key(item: Diagnostic) -> tuple:
            loc = item.location
            return (loc.file, loc.line, loc.column) if loc else ("", 0, 0)

        return sorted(self.items, key=key)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class ManifestError(SurveyctlError):
    """Manifests are invalid; carries the diagnostics so that callers can show all of them."""

    def __init__(self, diagnostics: Diagnostics):
        errors = [d for d in diagnostics.sorted() if d.severity == ERROR]
        first = errors[0] if errors else None
        others = len(errors) - 1
        more = f" (and {others} more error{'s' if others > 1 else ''})" if others else ""
        super().__init__(
            (first.summary if first else "the manifests are invalid") + more,
            first.location if first else None,
        )
        self.diagnostics = diagnostics


def _naming_others(summary: str, program: str, members: list[str]) -> str:
    """`summary` of the first member, with the other members named after its name."""
    first, others = members[0], members[1:]
    listed = ", ".join(others[:_LISTED]) + (", ..." if len(others) > _LISTED else "")
    word = "member" if len(others) == 1 else "members"
    quoted = f"'{program}{first}'"
    return summary.replace(quoted, f"{quoted} (and {len(others)} more {word}: {listed})", 1)


def _sentence(text: str) -> str:
    """Summaries are complete sentences ending in a full stop (messages start capitalised)."""
    text = text.strip()
    return text if not text or text.endswith((".", "?", "!")) else text + "."
