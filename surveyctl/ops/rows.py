"""Rows written as csv, tsv, json or jsonl, a page at a time: the writers of every machine
format a list command writes (`transactions list`, `surveys list`, `attributes`).

Writers share one small interface: `begin(columns)` once, `rows(page)` for every page,
`end()` once. csv and tsv make a text cell that a spreadsheet would run as a formula inert
(`inert_cell`) unless asked for raw cells.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

# Machine formats written here; the CLI adds "table" for people.
FORMATS = ("csv", "tsv", "json", "jsonl")


class RowWriter(Protocol):
    def begin(self, columns: list[str]) -> None: ...
    def rows(self, page: list[dict]) -> None: ...
    def end(self) -> None: ...


@dataclass
class CsvWriter:
    """CSV (or TSV) with a header of the first page's keys (the service's key order, `export`),
    and the header alone when there are no rows.

    A key a row lacks is an empty cell, a key the header lacks is left out. Rows go to the C
    csv writer as tuples picked by `operator.itemgetter`, about twice as fast as
    `csv.DictWriter`, which builds every row in a Python generator.
    """

    out: IO[str]
    _columns: list[str] = field(default_factory=list)
    _pick: Callable[[dict], tuple] | None = None
    delimiter: str = ","
    # False for `--raw-cells`: text cells exactly as the service gave them.
    neutralise: bool = True

    def begin(self, columns: list[str]) -> None:
        self._write([tuple(map(inert_cell, columns)) if self.neutralise else columns])
        self._columns = columns
        if len(columns) == 1:  # itemgetter of one key gives the value, not a tuple
            (only,) = columns
            self._pick = lambda row: (row[only],)
        else:
            self._pick = operator.itemgetter(*columns)

    def rows(self, page: list[dict]) -> None:
        assert self._pick is not None
        try:
            picked = list(map(self._pick, page))
        except KeyError:  # a row without some column: picked one by one, "" where missing
            picked = [tuple(row.get(name, "") for name in self._columns) for row in page]
        if self.neutralise and not _FORMULA_STARTS.isdisjoint(
            # The first characters of the page's text cells, in one pass: the usual page has
            # no cell to change and is not copied cell by cell.
            {cell[:1] for row in picked for cell in row if cell.__class__ is str}
        ):
            picked = [tuple(map(inert_cell, row)) for row in picked]
        self._write(picked)
        self.out.flush()

    def _write(self, rows: list) -> None:
        """Writes `rows`, a page's csv made in one piece, which one search tells free of
        carriage returns.

        The csv module quotes a cell that holds a character of the line terminator, and the
        terminator is "\n": a cell holding a lone "\r" would go unquoted, and a spreadsheet or
        a csv reader takes it for the end of the row. The rare page that holds one is made
        again row by row with the terminator "\r\n", which has such cells quoted."""
        text = self._text(rows, "\n")
        if "\r" in text:
            text = "".join(self._text([row], "\r\n")[:-2] + "\n" for row in rows)
        self.out.write(text)

    def _text(self, rows: list, terminator: str) -> str:
        # A new buffer each time: one emptied and written again is slower than a fresh one.
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator=terminator, delimiter=self.delimiter).writerows(rows)
        return buffer.getvalue()

    def end(self) -> None:
        self.out.flush()


# What makes a spreadsheet read a cell as a formula (OWASP "CSV injection"): a text cell of
# the export may hold what a respondent, a supplier or a survey's title put there.
_FORMULA_STARTS = frozenset("=+-@\t\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?").fullmatch


def inert_cell(value: Any) -> Any:
    """`value` as a spreadsheet shows it rather than runs it: text that starts with `=`, `+`,
    `-`, `@`, a tab or a carriage return gets a leading `'` (which spreadsheets hide); numbers,
    and text that is a plain number (`-2.5`), are left as they are, so they stay numbers."""
    if type(value) is str and value[:1] in _FORMULA_STARTS and not _PLAIN_NUMBER(value):
        return "'" + value
    return value


@dataclass
class JsonLinesWriter:
    """One JSON object per line."""

    out: IO[str]

    def begin(self, columns: list[str]) -> None:
        pass

    def rows(self, page: list[dict]) -> None:
        self.out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in page)
        self.out.flush()

    def end(self) -> None:
        self.out.flush()


@dataclass
class JsonArrayWriter:
    """A JSON array written element by element, so it never exists whole in memory."""

    out: IO[str]
    _count: int = 0

    def begin(self, columns: list[str]) -> None:
        pass

    def rows(self, page: list[dict]) -> None:
        for row in page:
            self.out.write("[\n  " if self._count == 0 else ",\n  ")
            self.out.write(json.dumps(row, ensure_ascii=False))
            self._count += 1
        self.out.flush()

    def end(self) -> None:
        self.out.write("[]\n" if self._count == 0 else "\n]\n")
        self.out.flush()


def make_writer(fmt: str, out: IO[str], raw_cells: bool = False) -> RowWriter:
    """The writer for a format name of FORMATS; csv and tsv make text cells that a
    spreadsheet would run as formulas inert (`inert_cell`) unless `raw_cells`."""
    if fmt == "csv":
        return CsvWriter(out, neutralise=not raw_cells)
    if fmt == "tsv":
        return CsvWriter(out, delimiter="\t", neutralise=not raw_cells)
    if fmt == "jsonl":
        return JsonLinesWriter(out)
    if fmt == "json":
        return JsonArrayWriter(out)
    raise ValueError(f"unknown format {fmt!r}")
