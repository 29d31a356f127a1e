"""`surveyctl transactions list|get` over HTTP: every page, filters, streamed formats."""

from __future__ import annotations

import csv
import io
import json

import pytest


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


def test_csv_export_parses_back_to_the_same_values(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--format", "csv")
    first = next(csv.DictReader(io.StringIO(result.stdout)))
    assert first["Transaction ID"] == rows[0]["Transaction ID"]
    assert first["Respondent Status Code"] == str(rows[0]["Respondent Status Code"])


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
