"""`surveyctl transactions list|get` over HTTP: every page, filters, streamed formats."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console

from surveyctl.cli.console import console
from surveyctl.cli.transactions import TableWriter

from ..reconcile.conftest import pointed_at
from ..reconcile.proxies import Proxy


@pytest.fixture
def traffic(api, live_survey):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 75, "seed": 31, "supplier_ids": [12, 13]})
    rows = []
    for page in api.iter_pages(api.get_transactions_page, survey_id=survey_id, limit=1000):
        rows += page
    return survey_id, rows


def test_csv_export_has_as_many_rows_as_the_sandbox_holds(traffic, run_cli, project):
    survey_id, rows = traffic
    result = run_cli(
        "transactions", "list", str(survey_id), "--format", "csv", "--output", "t.csv",
        "--page-size", "10",
    )  # fmt: skip
    with open(project / "t.csv", newline="", encoding="utf-8") as handle:
        exported = list(csv.DictReader(handle))
    assert result.exit_code == 0, result.output
    assert len(exported) == len(rows) == 75
    assert [r["Transaction ID"] for r in exported] == [r["Transaction ID"] for r in rows]
    assert "page 8/8: 75 rows" in result.stderr


def test_filters_by_status_and_supplier(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli(
        "transactions", "list", str(survey_id), "--status", "21,18", "--supplier", "13",
        "--format", "jsonl",
    )  # fmt: skip
    got = [json.loads(line) for line in result.stdout.splitlines()]
    expected = [
        r for r in rows if r["Respondent Status Code"] in (21, 18) and r["Supplier ID"] == 13
    ]
    assert result.exit_code == 0
    assert expected and [g["Transaction ID"] for g in got] == [
        e["Transaction ID"] for e in expected
    ]


def test_json_format_prints_one_array_on_stdout_and_progress_on_stderr(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--format", "json")
    assert len(json.loads(result.stdout)) == len(rows)
    assert "environment local" in result.stderr
    assert "75 transaction(s)" in result.stderr


def test_table_format_shows_the_transaction_ids(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--status", "21")
    completes = [r for r in rows if r["Respondent Status Code"] == 21]
    assert result.exit_code == 0
    assert completes[0]["Transaction ID"][:20] in result.stdout


def test_get_prints_the_single_record(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "get", str(survey_id), rows[0]["Transaction ID"])
    record = json.loads(result.stdout)
    assert record["Transaction ID"] == rows[0]["Transaction ID"]
    assert record["PSID"] == rows[0]["PSID"]


def test_another_buyers_survey_is_refused_in_one_sentence(other_buyer_api, run_cli):
    from .conftest import BASE_SURVEY

    theirs = other_buyer_api.create_survey(BASE_SURVEY)["ps_survey_id"]
    result = run_cli("transactions", "list", str(theirs))
    assert result.exit_code == 1
    assert "answered 403" in result.stderr
    assert "Traceback" not in result.output


def test_filters_by_status_names_as_set_status_spells_them(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli(
        "transactions", "list", str(survey_id), "--status", "complete,Term", "--format", "jsonl"
    )
    got = [json.loads(line)["Transaction ID"] for line in result.stdout.splitlines()]
    expected = [r["Transaction ID"] for r in rows if r["Respondent Status Code"] in (21, 18)]
    assert result.exit_code == 0, result.stderr
    assert expected and got == expected


def test_a_page_size_of_1000_reads_every_transaction(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--format", "json",
                     "--page-size", "1000")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == len(rows)


def test_a_page_size_above_the_services_limit_is_a_usage_error_before_any_request(run_cli):
    # The sandbox (docs/api-assumptions.md) takes a `limit` of at most 1000: a larger page size
    # would only come back as the service's 400 after the command had started.
    result = run_cli("transactions", "list", "1", "--page-size", "1001")
    assert result.exit_code == 2
    assert "1<=x<=1000" in result.stderr


def test_a_bad_status_list_is_a_usage_error(run_cli):
    result = run_cli("transactions", "list", "1", "--status", "21,x")
    assert result.exit_code == 2
    assert "'x' is not a transaction status: use a code (such as 16,19) or complete," in (
        result.stderr
    )


@pytest.mark.parametrize("option", ["--status", "--supplier"])
@pytest.mark.parametrize("value", ["", ","])
def test_an_empty_filter_is_a_usage_error_not_every_transaction(traffic, run_cli, option, value):
    survey_id, _ = traffic
    result = run_cli("transactions", "list", str(survey_id), option, value, "--format", "csv")
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.stderr
    assert "name at least one, or leave the option out" in result.stderr
    assert result.stdout == ""


def test_a_supplier_list_that_is_not_of_integers_is_a_usage_error(run_cli):
    result = run_cli("transactions", "list", "1", "--supplier", "12,acme")
    assert result.exit_code == 2
    assert "'12,acme' is not a comma-separated list of integers" in result.stderr


def test_csv_export_parses_back_to_the_same_values(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--format", "csv")
    first = next(csv.DictReader(io.StringIO(result.stdout)))
    assert first["Transaction ID"] == rows[0]["Transaction ID"]
    assert first["Respondent Status Code"] == str(rows[0]["Respondent Status Code"])


def test_a_survey_without_transactions_as_json_prints_an_empty_array(live_survey, run_cli):
    result = run_cli("transactions", "list", str(live_survey()), "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []


def test_a_page_that_is_not_json_is_one_clear_error(tmp_path, monkeypatch):
    import responses
    from click.testing import CliRunner

    from surveyctl.cli.main import cli

    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: STG}\n"
        "default_environment: staging\n"
    )
    monkeypatch.setenv("STG", "staging-key-1")
    monkeypatch.chdir(tmp_path)
    with responses.RequestsMock() as mocked:
        mocked.get(
            "https://staging.example.com/buyers/v3/surveys/5/transactions",
            body="<html>gateway</html>",
            headers={"total_pages": "3"},
        )
        result = CliRunner().invoke(cli, ["transactions", "list", "5", "--format", "csv"])
    assert result.exit_code == 1
    assert "answered 200: the body is not JSON" in result.stderr
    assert "Traceback" not in result.output


def test_an_export_that_fails_half_way_leaves_the_earlier_file_and_no_partial_one(
    tmp_path, monkeypatch
):
    import responses
    from click.testing import CliRunner

    from surveyctl.cli.main import cli

    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n  staging: {host: 'https://staging.example.com', api_key_env: STG}\n"
        "default_environment: staging\n"
    )
    (tmp_path / "t.csv").write_text("the export of yesterday\n")
    monkeypatch.setenv("STG", "staging-key-1")
    monkeypatch.chdir(tmp_path)
    url = "https://staging.example.com/buyers/v3/surveys/5/transactions"
    first_page = [{"Transaction ID": f"t{n}", "Respondent Status Code": 21} for n in range(3)]
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mocked:
        mocked.get(url, json=first_page, headers={"total_pages": "3"})  # page 1
        mocked.get(url, body="<html>gateway</html>", headers={"total_pages": "3"})  # page 2
        result = CliRunner().invoke(
            cli, ["transactions", "list", "5", "--format", "csv", "--output", "t.csv"]
        )
    assert result.exit_code == 1
    assert "the body is not JSON" in result.stderr
    # Page 1 was written before page 2 failed: a partial t.csv would pass for the whole export.
    assert (tmp_path / "t.csv").read_text() == "the export of yesterday\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["surveyctl.yaml", "t.csv"]


def test_a_finished_export_replaces_the_earlier_file(traffic, run_cli, project):
    survey_id, _ = traffic
    (project / "t.csv").write_text("the export of yesterday\n")
    result = run_cli("transactions", "list", str(survey_id), "--format", "csv", "--output", "t.csv")
    assert result.exit_code == 0, result.stderr
    with open(project / "t.csv", newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 75


def test_a_table_of_several_pages_has_one_header_above_every_row(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--page-size", "10")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["Transaction", "ID"]
    assert sum(line.startswith("Transaction") for line in lines) == 1
    shown = [line.split()[0] for line in lines if line.split() and line.split()[0] in {
        row["Transaction ID"] for row in rows
    }]  # fmt: skip
    assert shown == [row["Transaction ID"] for row in rows]


def test_a_survey_without_transactions_leaves_stdout_empty_and_says_so_on_stderr(
    live_survey, run_cli
):
    result = run_cli("transactions", "list", str(live_survey()))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "0 transaction(s) in 1 page(s)" in result.stderr


def test_a_csv_export_without_transactions_has_the_columns_an_export_with_them_has(
    traffic, live_survey, run_cli
):
    survey_id, _ = traffic
    full = run_cli("transactions", "list", str(survey_id), "--format", "csv")
    empty = run_cli("transactions", "list", str(live_survey()), "--format", "csv")
    assert empty.exit_code == 0, empty.output
    (header,) = csv.reader(io.StringIO(empty.stdout))
    assert header == next(csv.reader(io.StringIO(full.stdout)))
    assert "0 transaction(s) in 1 page(s)" in empty.stderr


def test_a_tsv_export_leads_with_the_columns_a_person_reads_first(traffic, run_cli):
    survey_id, _ = traffic
    result = run_cli("transactions", "list", str(survey_id), "--format", "tsv")
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split("\t")
    assert header[:10] == [
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
    ]
    assert header[10:] == sorted(header[10:])


def _exported_titles(api, live_survey, run_cli, *options: str) -> set[str]:
    survey_id = live_survey(survey_title='=HYPERLINK("https://example.com","open")')
    api.simulate_traffic(survey_id, {"respondents": 3, "seed": 5})
    result = run_cli("transactions", "list", str(survey_id), "--format", "csv", *options)
    assert result.exit_code == 0, result.output
    return {row["Project Name"] for row in csv.DictReader(io.StringIO(result.stdout))}


def test_a_survey_title_that_a_spreadsheet_would_run_is_exported_with_a_leading_quote(
    api, live_survey, run_cli
):
    titles = _exported_titles(api, live_survey, run_cli)
    assert titles == {'\'=HYPERLINK("https://example.com","open")'}


def test_raw_cells_exports_the_survey_title_as_the_service_gave_it(api, live_survey, run_cli):
    titles = _exported_titles(api, live_survey, run_cli, "--raw-cells")
    assert titles == {'=HYPERLINK("https://example.com","open")'}


def _table(pages: list[list[dict]], terminal: bool) -> list[str]:
    """The lines `transactions list` prints for `pages`, on a terminal 200 columns wide or
    piped."""
    out = io.StringIO()
    terminal_console = Console(file=out, force_terminal=True, width=200, color_system=None)
    shown = terminal_console if terminal else console(out)
    writer = TableWriter(shown)
    for page in pages:
        writer.rows(page)
    writer.end()
    return out.getvalue().splitlines()


def test_a_field_a_record_leaves_out_is_an_empty_cell():
    (header, line) = _table([[{"Transaction ID": "t-1", "Respondent Status Code": 21}]], False)
    assert line.split() == ["t-1", "21"]
    assert header.split()[:2] == ["Transaction", "ID"]


def test_on_a_terminal_a_long_value_is_cut_and_every_page_keeps_the_columns():
    long_id = "x" * 50
    first = [{"Transaction ID": long_id, "Respondent Status Code": 21, "Supplier ID": 12}]
    second = [{"Transaction ID": "short", "Respondent Status Code": 18, "Supplier ID": 13}]
    lines = _table([first, second], True)
    assert len(lines) == 3  # one header, one line per row: nothing wrapped
    assert lines[0].split()[:2] == ["Transaction", "ID"]
    assert lines[1].startswith("x" * 37 + "\u2026")  # cut at the column's 38 characters
    assert lines[1].index("21") == lines[2].index("18")
    assert lines[1].index("12") == lines[2].index("13")


def test_piped_a_long_value_is_never_cut():
    long_id = "x" * 50
    lines = _table([[{"Transaction ID": long_id, "Respondent Status Code": 21}]], False)
    assert lines[1].split()[:2] == [long_id, "21"]


def test_piped_every_page_keeps_the_columns_of_the_first():
    first = [{"Transaction ID": "a-rather-long-transaction-id", "Respondent Status Code": 21}]
    second = [{"Transaction ID": "t", "Respondent Status Code": 18, "Supplier ID": 13}]
    lines = _table([first, second], False)
    assert lines[1].index("21") == lines[2].index("18")


def test_an_argument_whose_bytes_are_not_utf8_is_one_sentence_not_a_bug(run_cli, live_survey):
    # A shell's $'T\xff' reaches Python as the escape U+DCFF, which no URL can carry.
    result = run_cli("transactions", "get", str(live_survey()), "T\udcff")
    assert result.exit_code == 1
    assert "Error: b'T\\xff' holds bytes that are not UTF-8 text" in result.stderr
    assert "bug in surveyctl" not in result.stderr
    assert "Traceback" not in result.stderr


class _ParentIdOnSomeRecords(Proxy):
    """Transactions pages where `Parent ID` (which "may appear", public facts) is carried by
    the second record of each page only, and by nothing on the first page when `late`."""

    late = False

    def reshape(self, request, answer, headers) -> bytes:
        if request.method != "GET" or not request.path.endswith("/transactions"):
            return answer.content
        records = answer.json()
        first_page = request.args.get("page", "1") == "1"
        for index, record in enumerate(records):
            record.pop("Parent ID", None)
            if index == 1 and not (self.late and first_page):
                record["Parent ID"] = f"parent-{record['Transaction ID']}"
        return json.dumps(records).encode()


def _export_through(proxy, project, run_cli, survey_id) -> tuple[list[dict], str]:
    with pointed_at(project, proxy):
        result = run_cli("transactions", "list", str(survey_id), "--format", "csv",
                         "--page-size", "10")  # fmt: skip
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout))), result.stderr


def test_a_field_only_some_records_of_the_first_page_carry_is_a_csv_column(
    traffic, sandbox, run_cli, project
):
    survey_id, _ = traffic
    rows, _ = _export_through(_ParentIdOnSomeRecords(sandbox.url), project, run_cli, survey_id)
    assert "Parent ID" in rows[0]
    assert rows[0]["Parent ID"] == ""
    assert rows[1]["Parent ID"] == f"parent-{rows[1]['Transaction ID']}"


def test_a_field_first_seen_after_the_first_page_is_named_in_a_warning(
    traffic, sandbox, run_cli, project
):
    survey_id, _ = traffic
    proxy = _ParentIdOnSomeRecords(sandbox.url)
    proxy.late = True
    rows, stderr = _export_through(proxy, project, run_cli, survey_id)
    assert len(rows) == 75 and "Parent ID" not in rows[0]
    assert "carry field(s) Parent ID, which are not csv columns" in stderr


class _EscapeKeyAfterTheFirstPage(Proxy):
    """Transactions pages whose records after the first page carry a key holding an escape
    code, as a service may answer anything."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method != "GET" or not request.path.endswith("/transactions"):
            return answer.content
        records = answer.json()
        if request.args.get("page", "1") != "1":
            for record in records:
                record["Note\x1b[2J"] = "x"
        return json.dumps(records).encode()


def test_the_warning_of_a_late_field_shows_its_escape_codes_as_text(
    traffic, sandbox, run_cli, project
):
    survey_id, _ = traffic
    proxy = _EscapeKeyAfterTheFirstPage(sandbox.url)
    _, stderr = _export_through(proxy, project, run_cli, survey_id)
    assert "\x1b" not in stderr
    assert "carry field(s) Note\\u001b[2J, which are not csv columns" in stderr
