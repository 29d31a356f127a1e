"""Export writers: rows leave as pages arrive, and every format is complete and parseable."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from surveyctl.cli.transactions import TableWriter
from surveyctl.ops.rows import make_writer
from surveyctl.ops.transactions import export


def _pages(count: int, size: int):
    for page in range(count):
        items = [
            {"Transaction ID": f"t{page}-{n}", "Respondent Status Code": 21} for n in range(size)
        ]
        yield items, count


def test_csv_rows_of_a_page_are_written_before_the_next_page_is_read():
    out = io.StringIO()
    seen_before_next_page = []

    def pages():
        for items, total in _pages(3, 2):
            yield items, total
            seen_before_next_page.append(out.getvalue().count("\n"))

    export(pages(), make_writer("csv", out))
    assert seen_before_next_page == [3, 5, 7]  # header + 2 rows per page


def test_csv_export_has_one_header_and_every_row():
    out = io.StringIO()
    state = export(_pages(4, 3), make_writer("csv", out))
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert state.rows == 12 and len(rows) == 12
    assert rows[0] == {"Transaction ID": "t0-0", "Respondent Status Code": "21"}


def test_json_export_is_one_valid_array():
    out = io.StringIO()
    export(_pages(2, 2), make_writer("json", out))
    assert [r["Transaction ID"] for r in json.loads(out.getvalue())] == [
        "t0-0",
        "t0-1",
        "t1-0",
        "t1-1",
    ]


def test_json_export_of_nothing_is_an_empty_array():
    out = io.StringIO()
    export(iter([([], 1)]), make_writer("json", out))
    assert json.loads(out.getvalue()) == []


def test_jsonl_export_has_one_object_per_line():
    out = io.StringIO()
    export(_pages(2, 3), make_writer("jsonl", out))
    lines = out.getvalue().splitlines()
    assert len(lines) == 6 and json.loads(lines[5])["Transaction ID"] == "t1-2"


def test_table_export_shows_the_header_once():
    out = io.StringIO()
    export(_pages(3, 1), TableWriter(Console(file=out, width=200)))
    text = out.getvalue()
    assert text.count("Transaction ID") == 1
    assert "t2-0" in text


def test_progress_reports_each_page_with_the_announced_total():
    reports = []
    export(
        _pages(3, 2),
        make_writer("jsonl", io.StringIO()),
        lambda s: reports.append((s.page, s.total_pages, s.rows)),
    )
    assert reports == [(1, 3, 2), (2, 3, 4), (3, 3, 6)]


def test_csv_cells_of_keys_a_row_lacks_are_empty_and_extra_keys_are_left_out():
    out = io.StringIO()
    pages = iter(
        [
            ([{"a": 1, "b": "x"}, {"a": 2}], 2),
            ([{"b": "y", "a": None, "c": "extra"}], 2),
        ]
    )
    export(pages, make_writer("csv", out))
    assert out.getvalue() == "a,b\n1,x\n2,\n,y\n"


def test_csv_of_a_single_column_has_one_cell_per_line():
    out = io.StringIO()
    export(
        iter([([{"Transaction ID": "t-1"}, {"Transaction ID": "t-2"}], 1)]), make_writer("csv", out)
    )
    assert out.getvalue() == "Transaction ID\nt-1\nt-2\n"


def test_csv_export_of_nothing_is_the_header_of_the_documented_fields():
    out = io.StringIO()
    export(iter([([], 1)]), make_writer("csv", out))
    (header,) = csv.reader(io.StringIO(out.getvalue()))
    assert header[:2] == ["Transaction ID", "Survey ID"]
    assert "Parent ID" in header and header[-1] == "ZipCode"
    assert len(header) == len(set(header)) == 89


def test_tsv_export_of_nothing_is_one_tab_separated_header_line():
    out = io.StringIO()
    export(iter([([], 1)]), make_writer("tsv", out))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Transaction ID\tSurvey ID\t")


def _one_row_csv(row: dict, **options) -> dict:
    out = io.StringIO()
    export(iter([([row], 1)]), make_writer("csv", out, **options))
    return next(csv.DictReader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("text", ["=1+2", "+44 20 7946", "-2+3", "@SUM(A1)", "\tx"])
def test_csv_text_a_spreadsheet_would_run_as_a_formula_gets_a_leading_quote(text):
    assert _one_row_csv({"Project Name": text})["Project Name"] == "'" + text


def test_csv_negative_numbers_stay_numbers_whether_sent_as_numbers_or_text():
    row = _one_row_csv({"Respondent Buyer CPI": -2.5, "Block": -1, "Reason": "-0.75"})
    assert row == {"Respondent Buyer CPI": "-2.5", "Block": "-1", "Reason": "-0.75"}


def test_csv_raw_cells_writes_formula_text_as_the_service_gave_it():
    assert _one_row_csv({"Project Name": "=1+2"}, raw_cells=True) == {"Project Name": "=1+2"}


def test_tsv_text_a_spreadsheet_would_run_as_a_formula_gets_a_leading_quote():
    out = io.StringIO()
    export(iter([([{"a": "=cmd", "b": "x"}], 1)]), make_writer("tsv", out))
    assert out.getvalue() == "a\tb\n'=cmd\tx\n"


def test_json_export_keeps_formula_text_as_the_service_gave_it():
    out = io.StringIO()
    export(iter([([{"a": "=cmd"}], 1)]), make_writer("json", out))
    assert json.loads(out.getvalue()) == [{"a": "=cmd"}]


@pytest.mark.parametrize("raw_cells", [False, True], ids=["inert", "raw"])
def test_csv_a_carriage_return_in_a_text_cell_keeps_the_row_one_row(raw_cells):
    out = io.StringIO()
    pages = iter([([{"a": "one\rtwo", "b": 1}, {"a": "\r=x", "b": 2}, {"a": "ok", "b": 3}], 1)])
    export(pages, make_writer("csv", out, raw_cells=raw_cells))
    rows = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    first = "'\r=x" if not raw_cells else "\r=x"
    assert rows == [["a", "b"], ["one\rtwo", "1"], [first, "2"], ["ok", "3"]]
    assert out.getvalue().endswith("\nok,3\n")
