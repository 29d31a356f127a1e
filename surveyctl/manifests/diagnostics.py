"""Diagnostics: what validation found, each with a severity, one sentence and a file:line.

Validation never stops at the first problem: every check adds to a `Diagnostics` collection
and the caller decides what to print. `error` makes a manifest set invalid; `warning` and
`note` do not (a note reports a legitimate but notable choice, such as a soft launch).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from surveyctl.errors import Location, SurveyctlError

ERROR = "error"
WARNING = "warning"
NOTE = "note"
SEVERITIES = (ERROR, WARNING, NOTE)


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

    def add(self, severity: str, summary: str, location: Location | None = None) -> None:
        """Adds a finding once: a cell shared by generated quotas is reported one time."""
        item = Diagnostic(severity, _sentence(summary), location)
        if item not in self._seen:
            self._seen.add(item)
            self.items.append(item)

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
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        super().__init__(
            (first.summary if first else "the manifests are invalid") + more,
            first.location if first else None,
        )
        self.diagnostics = diagnostics


def _sentence(text: str) -> str:
    """Summaries are complete sentences ending in a full stop (messages start capitalised)."""
    text = text.strip()
    return text if not text or text.endswith((".", "?", "!")) else text + "."
