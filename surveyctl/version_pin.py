"""`required_version` of surveyctl.yaml: the versions of surveyctl a project allows, as
Terraform's `required_version`, so that a team stays on one version.

The pin is written in the syntax of Python's version specifiers (PEP 440), `>=0.1.0, <0.3`,
limited to what a pin needs and read strictly: clauses separated by commas, each an operator
(`==`, `!=`, `>=`, `<=`, `>`, `<`, `~=`) and a release number (`0.2`, `1.0.3`), with `.*` after
the number of an `==` or `!=` (`==0.2.*`). Anything else (a pre-release, a local version, `===`,
a bare number) is refused: a pin read another way than the person meant would let the wrong
surveyctl run. Numbers compare as PEP 440 compares releases, the shorter padded with zeros
(`0.2` is `0.2.0`). `packaging` does this too, but it is no dependency of surveyctl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLAUSE = re.compile(r"\s*(~=|==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)*)(\.\*)?\s*")
_RELEASE = re.compile(r"\d+(?:\.\d+)*")
ACCEPTED = (
    "comma-separated clauses of an operator (==, !=, >=, <=, >, <, ~=) and a release number, "
    'such as ">=0.1.0, <0.3"'
)


class PinError(ValueError):
    """A pin that is not in the accepted syntax; the message says what is wrong with it."""


Release = tuple[int, ...]


@dataclass(frozen=True)
class Clause:
    """One `operator version` of a pin; `prefix` for `==0.2.*` and `!=0.2.*`."""

    operator: str
    release: Release
    prefix: bool = False

    def allows(self, version: Release) -> bool:
        if self.prefix:
            matches = _padded(version, len(self.release))[: len(self.release)] == self.release
            return matches if self.operator == "==" else not matches
        if self.operator == "~=":
            # ~=1.4.2 is >=1.4.2, ==1.4.*
            head = self.release[:-1]
            return (
                _cmp(version, self.release) >= 0
                and _padded(version, len(head))[: len(head)] == head
            )
        order = _cmp(version, self.release)
        return {
            "==": order == 0,
            "!=": order != 0,
            ">=": order >= 0,
            "<=": order <= 0,
            ">": order > 0,
            "<": order < 0,
        }[self.operator]


def parse_pin(text: str) -> tuple[Clause, ...]:
    """The clauses of `text`; PinError naming the first clause that is not accepted."""
    if not text.strip():
        raise PinError(f"is empty: write {ACCEPTED}")
    clauses = []
    for part in text.split(","):
        found = _CLAUSE.fullmatch(part)
        if found is None:
            shown = part.strip()
            what = f"clause {shown!r}" if shown else "an empty clause"
            raise PinError(f"has {what}, which is not one it accepts: write {ACCEPTED}")
        operator, number, star = found.groups()
        release = tuple(int(piece) for piece in number.split("."))
        if star and operator not in ("==", "!="):
            raise PinError(f"has {part.strip()!r}: only == and != take a .* after the number")
        if operator == "~=" and len(release) < 2:
            raise PinError(
                f"has {part.strip()!r}: ~= needs a number of two parts at least (such as ~=0.2)"
            )
        clauses.append(Clause(operator, release, bool(star)))
    return tuple(clauses)


def release_of(version: str) -> Release:
    """The release numbers of a version string (`0.1.0` -> (0, 1, 0)); what follows them (a
    local or development suffix of a checkout's build) is not compared."""
    found = _RELEASE.match(version)
    if found is None:
        raise PinError(f"version {version!r} has no release number")
    return tuple(int(piece) for piece in found.group().split("."))


def allows(clauses: tuple[Clause, ...], version: str) -> bool:
    """Whether every clause allows `version`."""
    release = release_of(version)
    return all(clause.allows(release) for clause in clauses)


def _padded(release: Release, length: int) -> Release:
    return release + (0,) * (length - len(release))


def _cmp(left: Release, right: Release) -> int:
    length = max(len(left), len(right))
    a, b = _padded(left, length), _padded(right, length)
    return (a > b) - (a < b)
