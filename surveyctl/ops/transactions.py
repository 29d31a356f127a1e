"""Streaming export of a survey's transactions (spec 4.4, records as in 2.10).

Rows are written as each page arrives and the page is then dropped, so memory stays flat
however many transactions a survey has. Writers share one small interface: `begin(columns)`
is called once, with the keys of the first page's rows (or, when no page has a row, the
fields of spec 2.10), `rows(page)` for every page with rows, `end()` once.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from surveyctl.api import ApiClient
from surveyctl.fields import transaction_fields

# Machine formats written here; the CLI adds "table" for people.
FORMATS = ("csv", "tsv", "json", "jsonl")
DEFAULT_PAGE_SIZE = 500
MAX_PAGE_SIZE = 1000  # the largest `limit` of the transactions list (docs/api-assumptions.md)


@dataclass(frozen=True)
class TransactionQuery:
    """Which transactions to read: a survey, optional status and supplier filters, page size."""

    survey_id: int
    status: tuple[int, ...] = ()
    supplier_ids: tuple[int, ...] = ()
    page_size: int = DEFAULT_PAGE_SIZE


@dataclass
class ExportProgress:
    """Where the export is: pages read of the total the service announced, rows written."""

    page: int = 0
    total_pages: int = 0
    rows: int = 0
    # Keys that records after the first page carry and the columns (the first page's keys)
    # lack: csv/tsv cannot add a column once the header is written.
    left_out: list[str] = field(default_factory=list)


ProgressCallback = Callable[[ExportProgress], None]


def iter_pages(client: ApiClient, query: TransactionQuery) -> Iterator[tuple[list[dict], int]]:
    """Every page of the query, with the number of pages known so far (the `total_pages` the
    service announced, else counted while pages come full)."""
    return client.paged(
        client.get_transactions_page,
        prefetch=True,
        survey_id=query.survey_id,
        limit=query.page_size,
        status=list(query.status) or None,
        supplier_ids=list(query.supplier_ids) or None,
    )


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


def export(
    pages: Iterable[tuple[list[dict], int]],
    writer: RowWriter,
    progress: ProgressCallback | None = None,
) -> ExportProgress:
    """Writes every page as it arrives; returns the final counts."""
    state = ExportProgress()
    columns: dict[str, None] | None = None
    for items, total in pages:
        state.page += 1
        state.total_pages = total
        if items and columns is None:
            # Every key of the first page, in the order met: a field only some records carry
            # (`Parent ID` "may appear", public facts) is a column, not lost with the first's.
            columns = dict.fromkeys(key for item in items for key in item)
            writer.begin(list(columns))
        elif items and columns is not None:
            known = columns.keys()
            for item in items:
                if not item.keys() <= known:  # a set comparison in C: the usual page costs little
                    state.left_out.extend(
                        k for k in item if k not in columns and k not in state.left_out
                    )
        if items:
            writer.rows(items)
        state.rows += len(items)
        if progress:
            progress(state)
    if columns is None:
        # No record to take the columns from: a csv of no rows still says which columns an
        # export has, so that a spreadsheet or a script reading it by name finds them.
        writer.begin(list(transaction_fields()))
    writer.end()
    return state
