"""What the programs and quota generators of one manifest file may make.

The reader bounds what a file holds as written (`surveyctl.yamlsafe`: 8 MB, a million
values). Programs and generators multiply what is written: a 4 KB program of 300 markets
and 1,000 waves is 300,000 surveys, two dimensions of 100 cells are 10,000 quotas, and a
variable of a megabyte used a hundred thousand times in a title is a hundred gigabytes. So
each file gets a budget for what its expansion makes, spent as it is made and checked before
the work is done, and an expansion over it is one error at the line that asks for it.

The bounds are above any real tracker (60 markets x 36 monthly waves is 2,160 surveys, and
with a gender x age interlock of 24 cells each, 51,840 quotas; it validates in about 5 s and
110 MB) and close to what a file written out could hold, so the expanded manifests of a file
cost about what the largest file the reader takes costs. Each file has its own budget: many
files are as many times the work, as for written manifests.
"""

from __future__ import annotations

from dataclasses import dataclass

# Surveys the programs of one file make (markets x waves, over all its programs).
MAX_MEMBERS = 10_000
# Values of those surveys' specs and exclusion groups, counted as the reader counts a
# file's values: as many as a manifest file may hold written out.
MAX_VALUES = 1_000_000
# Quotas the generators of one file make, in its surveys and its programs' members.
MAX_QUOTAS = 100_000
# Characters of the text that variables are put into, over all members of a file's programs.
MAX_CHARACTERS = 20_000_000


@dataclass
class Budget:
    """What one file's expansion may still make; each `spend_*` says whether it fit."""

    members: int = MAX_MEMBERS
    values: int = MAX_VALUES
    quotas: int = MAX_QUOTAS
    characters: int = MAX_CHARACTERS

    def spend_members(self, count: int) -> bool:
        return self._spend("members", count)

    def spend_values(self, count: int) -> bool:
        return self._spend("values", count)

    def spend_quotas(self, count: int) -> bool:
        return self._spend("quotas", count)

    def spend_characters(self, count: int) -> bool:
        return self._spend("characters", count)

    def _spend(self, what: str, count: int) -> bool:
        # A refused spend takes nothing: what comes after is judged by what is left, so one
        # huge survey does not bring an error to every survey after it.
        left = getattr(self, what)
        if count > left:
            return False
        setattr(self, what, left - count)
        return True


class Budgets:
    """One Budget per manifest file, made when the file's first expansion asks for it."""

    def __init__(self) -> None:
        self._by_file: dict[str, Budget] = {}

    def of(self, file: str) -> Budget:
        return self._by_file.setdefault(file, Budget())
