"""Every table a command prints keeps every value whole when its output is piped.

CliRunner's output is not a terminal, as with `surveyctl ... > file` or `| grep`.
"""

from __future__ import annotations

import csv
import io

import pytest

ELLIPSIS = "…"
LONG_TITLE = "Brand tracker wave 2026 for the whole market of grocery shoppers aged 18 to 99 " * 2
LONG_FILE = "adjustments-for-the-quarterly-reconciliation-of-the-brand-tracker-wave.csv"


@pytest.fixture
def traffic(api, live_survey):
    survey_id = live_survey(survey_title=LONG_TITLE.strip(), expected_ir=90)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 5, "bad_hash_share": 0})
    rows = []
    for page in api.iter_pages(api.get_transactions_page, survey_id=survey_id, limit=1000):
        rows += page
    return survey_id, rows


def test_transactions_table_keeps_every_id_and_status_whole(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id))
    assert result.exit_code == 0, result.output
    assert ELLIPSIS not in result.stdout
    for row in rows:
        assert row["Transaction ID"] in result.stdout
        assert row["Respondent Status Description"] in result.stdout


def test_attributes_table_keeps_every_name_question_and_answer_whole(run_cli):
    tsv = run_cli("attributes", "--locale", "en_US", "--format", "tsv").stdout
    found = list(csv.DictReader(io.StringIO(tsv), dialect="excel-tab"))
    result = run_cli("attributes", "--locale", "en_US")
    assert result.exit_code == 0, result.output
    assert ELLIPSIS not in result.stdout
    lines = result.stdout.splitlines()
    assert found
    for attribute in found:
        (line,) = [line for line in lines if line.split()[:1] == [attribute["code"]]]
        for column in ("name", "question", "answers"):
            assert attribute[column] in line


def test_simulate_table_keeps_every_status_name_whole(live_survey, run_cli):
    from surveyctl.statuses import transaction_status_name

    survey_id = live_survey()
    result = run_cli("sandbox", "simulate", str(survey_id), "--respondents", "40", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert ELLIPSIS not in result.stdout
    rows = [line.split(None, 1) for line in result.stdout.splitlines()[2:-1]]
    assert rows
    for code, rest in rows:
        assert rest.rsplit(None, 1)[0] == transaction_status_name(code)


def test_status_keeps_a_long_title_whole(traffic, run_cli):
    survey_id, _ = traffic
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0, result.output
    assert LONG_TITLE.strip() in result.stdout
    assert ELLIPSIS not in result.stdout


def test_adjust_summary_and_adjustments_list_keep_values_whole(traffic, run_cli, project):
    survey_id, rows = traffic
    ids = [r["Transaction ID"] for r in rows if r["Respondent Status Code"] == 21][:2]
    lines = ["transaction_id,survey_id"] + [f"{t},{survey_id}" for t in ids]
    (project / LONG_FILE).write_text("\n".join(lines) + "\n")
    submitted = run_cli("adjust", LONG_FILE, "--yes")
    assert submitted.exit_code == 0, submitted.output
    assert ELLIPSIS not in submitted.stdout
    assert str(survey_id) in submitted.stdout
    listed = run_cli("adjustments")
    assert listed.exit_code == 0, listed.output
    assert ELLIPSIS not in listed.stdout
    assert LONG_FILE in listed.stdout


def _blank_ended(text: str) -> list[str]:
    return [line for line in text.splitlines() if line != line.rstrip()]


def test_no_piped_table_ends_a_line_with_blanks(traffic, run_cli):
    survey_id, _ = traffic
    for command in (
        ("transactions", "list", str(survey_id), "--page-size", "7"),
        ("attributes", "--locale", "en_US"),
        ("sandbox", "simulate", str(survey_id), "--respondents", "5", "--seed", "3"),
    ):
        result = run_cli(*command)
        assert result.exit_code == 0, result.output
        assert _blank_ended(result.stdout) == [], command


def test_the_pages_of_a_piped_transactions_table_line_up_with_its_header(traffic, run_cli):
    survey_id, rows = traffic
    result = run_cli("transactions", "list", str(survey_id), "--page-size", "7")
    assert result.exit_code == 0, result.output
    header, *lines = result.stdout.splitlines()
    assert len(lines) == len(rows)
    column = header.index("Respondent Status Description")
    described = {row["Transaction ID"]: row["Respondent Status Description"] for row in rows}
    for line in lines:
        assert line[column:].startswith(described[line.split()[0]]), line
