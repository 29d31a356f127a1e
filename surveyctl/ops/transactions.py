"""Streaming export of a survey's transactions (spec 4.4, records as in 2.10).

Rows are written as each page arrives and the page is then dropped, so memory stays flat
however many transactions a survey has. The writers (`surveyctl.ops.rows`) get `begin(columns)`
once, with the keys of the first page's rows (or, when no page has a row, the fields of spec
2.10), the ones a person reads first leading (`export_columns`); `rows(page)` for every page
with rows; `end()` once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from surveyctl.api import ApiClient
from surveyctl.fields import transaction_fields
from surveyctl.ops.rows import RowWriter

# The columns a person reads first, leading a csv or tsv export in this order when present: the
# rest follow alphabetically, so `Transaction ID` is not the 85th column of a spreadsheet.
LEADING_COLUMNS = (
    "Transaction ID",
    "Survey ID",
    "Respondent Status Code",
    "Respondent Status Description",
    "Supplier ID",
    "Supplier Name",
    "PS Entry DateTime",
    "PS Exit Datetime",
    "Respondent LOI",
    "Reconciliation Status",
)

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
            writer.begin(export_columns(columns))
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
        writer.begin(export_columns(transaction_fields()))
    writer.end()
    return state


def export_columns(keys: Iterable[str]) -> list[str]:
    """The columns of a csv or tsv export of records with `keys`: LEADING_COLUMNS that are
    among them, then the others alphabetically, whatever order the service gives them in."""
    present = set(keys)
    leading = [name for name in LEADING_COLUMNS if name in present]
    return leading + sorted(present.difference(leading))
