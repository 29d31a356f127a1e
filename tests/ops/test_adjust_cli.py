"""`surveyctl adjust FILE`: preview, confirmation, and the summary of the sandbox's answer."""

from __future__ import annotations

import io
import json

import pytest

from surveyctl.cli.adjust import COUNTERS, SURVEY_COUNTERS, render_summary
from surveyctl.cli.console import console


@pytest.fixture
def completes(api, live_survey):
    """A survey with simulated traffic, and the ids of three of its completes."""
    survey_id = live_survey(expected_ir=90)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 12, "bad_hash_share": 0})
    items, _ = api.get_transactions_page(survey_id, status=[21])
    return survey_id, [item["Transaction ID"] for item in items[:3]]


def _write_ids(project, survey_id, ids, name="ids.csv"):
    lines = ["transaction_id,survey_id"] + [f"{t},{survey_id}" for t in ids]
    (project / name).write_text("\n".join(lines) + "\n")
    return name


def test_preview_names_the_surveys_and_counts_before_anything_is_sent(completes, run_cli, project):
    survey_id, ids = completes
    result = run_cli("adjust", _write_ids(project, survey_id, ids))
    assert result.exit_code == 1
    assert "3 transaction(s) will be submitted" in result.stdout
    assert str(survey_id) in result.stdout
    assert "confirm with --yes" in result.stderr


def test_without_yes_and_without_a_terminal_nothing_is_submitted(api, completes, run_cli, project):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids))
    record = api.get_transaction(survey_id, ids[0])
    assert record["Reconciliation Status"] == 0


def test_adjust_with_yes_submits_and_renders_the_summary(api, completes, run_cli, project):
    survey_id, ids = completes
    result = run_cli("adjust", _write_ids(project, survey_id, ids), "--yes", "--output", "a.json")
    answer = json.loads((project / "a.json").read_text())
    assert result.exit_code == 0, result.output
    assert answer["status"] == 1
    assert answer["summary"]["transactions"] == 3
    assert "status 1 (Pending)" in result.stdout
    assert "reject percentage:" in result.stdout
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] != 0


def test_adjusting_the_same_transactions_twice_counts_them_as_already_reconciled(
    completes, run_cli, project
):
    survey_id, ids = completes
    name = _write_ids(project, survey_id, ids)
    run_cli("adjust", name, "--yes")
    run_cli("adjust", name, "--yes", "--resubmit", "--output", "second.json")
    summary = json.loads((project / "second.json").read_text())["summary"]
    assert summary["alreadyReconciled"] == 3
    assert summary["eligible"] == 0


def test_unknown_transaction_ids_count_as_invalid(completes, run_cli, project):
    survey_id, ids = completes
    (project / "ids.json").write_text(json.dumps([ids[0], "no-such-transaction"]))
    run_cli("adjust", "ids.json", "--yes", "--output", "out.json")
    summary = json.loads((project / "out.json").read_text())["summary"]
    assert summary["invalid"] == 1
    assert summary["transactions"] == 2


def test_the_answer_on_a_terminal_decides(completes, run_cli, project, monkeypatch, api):
    survey_id, ids = completes
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    name = _write_ids(project, survey_id, ids)
    declined = run_cli("adjust", name, input="n\n")
    assert declined.exit_code == 1  # as apply: a declined write is not a success
    assert "nothing submitted: the adjustment was declined" in declined.stderr
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0
    accepted = run_cli("adjust", name, input="y\n")
    assert accepted.exit_code == 0
    assert "Pending" in accepted.stdout


def test_a_file_without_ids_is_refused_with_its_name(run_cli, project):
    (project / "ids.csv").write_text("transaction_id\n")
    result = run_cli("adjust", "ids.csv", "--yes")
    assert result.exit_code == 1
    assert "ids.csv: the file names no transactions" in result.stderr


def test_submitting_the_same_transactions_again_needs_resubmit(completes, run_cli, project, api):
    survey_id, ids = completes
    name = _write_ids(project, survey_id, ids)
    first = run_cli("adjust", name, "--yes")
    again = run_cli("adjust", name, "--yes")
    adjustment_id = first.stdout.split("adjustment ", 1)[1].split(":")[0]
    assert again.exit_code == 1
    assert f"was answered: adjustment {adjustment_id}, status 1" in again.stdout
    assert "nothing submitted: 3 of these 3 transaction(s) were submitted already" in again.stderr


def test_adjustments_without_any_says_so_on_stderr_and_lists_nothing(run_cli):
    result = run_cli("adjustments", "--offline")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "No adjustment was submitted to environment 'local' from here." in result.stderr


def test_adjustments_show_prints_one_submission_with_its_transactions_and_answer(
    completes, run_cli, project
):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids), "--yes", "--output", "a.json")
    listing = run_cli("adjustments", "--offline")
    ref = listing.stdout.splitlines()[1].split()[0]
    shown = json.loads(run_cli("adjustments", "--show", ref).stdout)
    answer = json.loads((project / "a.json").read_text())
    assert shown["outcome"] == "answered"
    assert shown["adjustment_id"] == answer["adjustment_id"]
    assert [t["transaction_id"] for t in shown["transactions"]] == ids
    assert {t["survey_id"] for t in shown["transactions"]} == {survey_id}


def test_adjustments_show_takes_the_adjustment_id_adjust_printed(completes, run_cli, project):
    survey_id, ids = completes
    submitted = run_cli("adjust", _write_ids(project, survey_id, ids), "--yes")
    adjustment_id = submitted.stdout.split("adjustment ", 1)[1].split(":")[0]
    shown = run_cli("adjustments", "--show", adjustment_id)
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["adjustment_id"] == adjustment_id


def test_adjustments_show_of_nothing_it_knows_says_what_it_takes(completes, run_cli, project):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids), "--yes")
    shown = run_cli("adjustments", "--show", "zzz")
    assert shown.exit_code == 1
    assert "no adjustment 'zzz' in " in shown.stderr
    assert "give a ref the list shows (or its start) or the adjustment id adjust printed" in (
        shown.stderr
    )


@pytest.mark.parametrize("survey", ["-1", "0"])
def test_a_survey_that_is_not_a_positive_id_is_a_usage_error_and_nothing_is_sent(
    survey, api, completes, run_cli, project
):
    survey_id, ids = completes
    result = run_cli("adjust", _write_ids(project, survey_id, ids), "--survey", survey, "--yes")
    assert result.exit_code == 2
    assert "Invalid value for '--survey'" in result.stderr
    assert "Traceback" not in result.stderr
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_a_survey_other_than_the_one_the_file_names_is_refused_naming_both(
    api, completes, run_cli, project
):
    survey_id, ids = completes
    other = survey_id + 1
    result = run_cli("adjust", _write_ids(project, survey_id, ids), "--survey", str(other), "--yes")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: --survey {other} differs from the survey {survey_id} that ids.csv names for 3 "
        "transaction(s); nothing submitted"
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_a_semicolon_separated_file_from_a_spreadsheet_is_read_by_its_columns(
    completes, run_cli, project
):
    survey_id, ids = completes
    lines = ["Transaction ID;Survey ID;Buyer Name"] + [f"{t};{survey_id};Zoë, Inc" for t in ids]
    (project / "ids.csv").write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    result = run_cli("adjust", "ids.csv")
    assert "3 transaction(s) will be submitted" in result.stdout
    assert f"{survey_id}   " in result.stdout  # the survey the file names, counted
    assert "survey not named" not in result.stdout


def test_the_tab_separated_export_of_transactions_list_can_be_submitted_as_it_is(
    completes, run_cli, project, api
):
    survey_id, _ = completes
    run_cli("transactions", "list", str(survey_id), "--status", "21", "--format", "tsv",
            "--out", "completes.tsv")  # fmt: skip
    exported = len(api.get_transactions_page(survey_id, status=[21])[0])
    result = run_cli("adjust", "completes.tsv")
    assert f"{exported} transaction(s) will be submitted" in result.stdout
    assert "survey not named" not in result.stdout
    assert "confirm with --yes" in result.stderr


@pytest.mark.parametrize("encoding", ["utf-16", "cp1252"])
def test_a_csv_a_spreadsheet_saved_in_its_own_encoding_is_read(
    encoding, completes, run_cli, project
):
    survey_id, ids = completes
    lines = ["Transaction ID,Survey ID,Buyer Name"] + [f"{t},{survey_id},Zoë" for t in ids]
    (project / "ids.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    result = run_cli("adjust", "ids.csv")
    assert "3 transaction(s) will be submitted" in result.stdout
    assert "confirm with --yes" in result.stderr


def test_a_json_file_that_is_not_utf8_is_refused_naming_its_line(run_cli, project):
    (project / "ids.json").write_bytes(b'[\n  "a",\n  "caf\xe9"\n]\n')
    result = run_cli("adjust", "ids.json", "--yes")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ids.json:3: the file is not UTF-8 text")


def test_a_transaction_listed_under_two_surveys_is_refused_naming_both_lines(
    api, completes, run_cli, project
):
    survey_id, ids = completes
    lines = ["transaction_id,survey_id", f"{ids[0]},{survey_id}", f"{ids[1]},{survey_id}"]
    lines.append(f"{ids[0]},{survey_id + 1}")
    (project / "ids.csv").write_text("\n".join(lines) + "\n")
    result = run_cli("adjust", "ids.csv", "--yes")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: ids.csv:4: transaction {ids[0]} is listed for survey {survey_id + 1} here and "
        f"for survey {survey_id} on line 2\n"
    )
    assert api.get_transaction(survey_id, ids[1])["Reconciliation Status"] == 0


def test_the_preview_and_question_of_a_per_survey_submission_name_its_survey(
    completes, run_cli, project
):
    survey_id, ids = completes
    (project / "ids.csv").write_text("transaction_id\n" + "\n".join(ids) + "\n")
    result = run_cli("adjust", "ids.csv", "--survey", str(survey_id))
    assert f"will be submitted for adjustment through the path of survey {survey_id}" in (
        result.stdout
    )
    assert "survey not named" not in result.stdout
    assert f"submit 3 transaction(s) of survey {survey_id} for adjustment" in result.stderr


@pytest.mark.parametrize("survey", ["-5", "0", "10001.5"])
def test_a_row_whose_survey_id_is_not_a_positive_integer_is_refused_naming_its_line(
    survey, api, completes, run_cli, project
):
    survey_id, ids = completes
    (project / "ids.csv").write_text(f"transaction_id,survey_id\n{ids[0]},{survey_id}\n"
                                     f"{ids[1]},{survey}\n")  # fmt: skip
    result = run_cli("adjust", "ids.csv", "--yes")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: ids.csv:3: survey_id '{survey}' is not a survey id (a positive integer)\n"
    )
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_a_transaction_id_written_as_a_json_number_is_refused_as_not_text(run_cli, project):
    (project / "ids.json").write_text('[\n  {"transaction_id": 123}\n]\n')
    result = run_cli("adjust", "ids.json", "--yes")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: ids.json:2: transaction_id 123 is not text (write it in quotes)\n"
    )


def test_a_csv_cell_past_the_size_limit_is_refused_naming_its_line(run_cli, project):
    (project / "ids.csv").write_text("transaction_id\nT1\n" + "x" * 200_000 + "\n")
    result = run_cli("adjust", "ids.csv", "--yes")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: ids.csv:3: the CSV cannot be read: a cell is longer than 131,072 characters\n"
    )


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    """Rows as a borderless table prints them: each column as wide as its widest cell, two
    spaces apart, the `right` columns right-aligned (trailing blanks left out)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def _mixed_file(project, survey_id, ids) -> str:
    """Two ids named for `survey_id`, one for no survey, and the first one repeated."""
    rows = [f"{ids[0]},{survey_id}", f"{ids[1]},{survey_id}", f"{ids[2]},", f"{ids[0]},"]
    (project / "mixed.csv").write_text("transaction_id,survey_id\n" + "\n".join(rows) + "\n")
    return "mixed.csv"


def test_the_preview_counts_each_survey_the_unnamed_ones_and_the_repeats(
    completes, run_cli, project
):
    survey_id, ids = completes
    result = run_cli("adjust", _mixed_file(project, survey_id, ids))
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines == [
        "3 transaction(s) will be submitted for adjustment:",
        *_table(
            [
                ["survey", "transactions"],
                [str(survey_id), "2"],
                ["(survey not named in the file)", "1"],
            ],
            right={1},
        ),
        "1 repeated id(s) in the file are submitted once.",
    ]


def test_without_yes_the_refusal_names_what_would_be_submitted(completes, run_cli, project):
    survey_id, ids = completes
    result = run_cli("adjust", _write_ids(project, survey_id, ids))
    assert result.stderr.splitlines()[-1] == (
        "Error: a confirmation is needed to submit 3 transaction(s) for adjustment (money "
        "moves) and there is no terminal to ask: confirm with --yes"
    )


def test_a_declined_adjustment_says_so_in_one_line(completes, run_cli, project, monkeypatch):
    survey_id, ids = completes
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    declined = run_cli("adjust", _write_ids(project, survey_id, ids), input="n\n")
    assert declined.stderr.splitlines()[-1] == (
        "Error: nothing submitted: the adjustment was declined"
    )


def test_the_summary_shows_the_status_counters_percentage_and_surveys_as_answered(
    completes, run_cli, project
):
    survey_id, ids = completes
    result = run_cli("adjust", _mixed_file(project, survey_id, ids), "--yes", "--out", "a.json")
    answer = json.loads((project / "a.json").read_text())
    summary = answer["summary"]
    (item,) = summary["summaryPerSurvey"]
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[5:] == [
        f"adjustment {answer['adjustment_id']}: status 1 ({answer['statusDescription']})",
        *_table([[name, str(summary[name])] for name in COUNTERS], right={1}),
        f"reject percentage: {summary['rejectPercentage']} %",
        "per survey",
        *_table(
            [
                ["survey", *SURVEY_COUNTERS, "reject %", "validCap"],
                [
                    str(item["surveyId"]),
                    *(str(item[name]) for name in SURVEY_COUNTERS),
                    str(item["rejectPercentage"]),
                    str(item["validCap"]),
                ],
            ],
            right={1, 2, 3, 4, 5, 6},
        ),
    ]
    assert item["surveyId"] == survey_id


def test_the_summary_leaves_out_no_transaction_counter_of_the_answer(completes, run_cli, project):
    survey_id, ids = completes
    result = run_cli("adjust", _mixed_file(project, survey_id, ids), "--yes", "--out", "a.json")
    summary = json.loads((project / "a.json").read_text())["summary"]
    shown = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    # invoiced is an amount billed, not a count of transactions: the summary leaves it out.
    counters = {
        name for name, value in summary.items() if type(value) is int and name != "invoiced"
    }
    assert counters and counters <= shown


def test_the_answer_file_holds_the_answer_as_indented_json(completes, run_cli, project):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids), "--yes", "--output", "a.json")
    text = (project / "a.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


class _Terminal(io.StringIO):
    """What is printed to a terminal, kept."""

    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_per_survey_title_stands_at_the_left(
    completes, run_cli, project, monkeypatch
):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids), "--yes", "--output", "a.json")
    answer = json.loads((project / "a.json").read_text())
    monkeypatch.setenv("COLUMNS", "120")  # the per-survey table is 88 columns wide
    monkeypatch.setenv("NO_COLOR", "1")
    screen = _Terminal()

    render_summary(answer, console(file=screen))

    lines = [line.rstrip() for line in screen.getvalue().splitlines()]
    assert lines[lines.index("per survey") + 1].startswith("survey  transactions  completes")


def test_a_json_file_naming_its_survey_as_surveyId_refuses_another_survey_path(
    api, completes, run_cli, project
):
    survey_id, ids = completes
    other = survey_id + 1
    items = [{"transaction_id": t, "surveyId": survey_id} for t in ids]
    (project / "ids.json").write_text(json.dumps(items))
    result = run_cli("adjust", "ids.json", "--survey", str(other), "--yes")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: --survey {other} differs from the survey {survey_id} that ids.json names for 3 "
        "transaction(s); nothing submitted"
    )
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_a_json_file_keyed_as_a_program_spells_them_is_previewed_by_survey(
    completes, run_cli, project
):
    survey_id, ids = completes
    items = [{"transactionId": t, "Survey-ID": survey_id} for t in ids]
    (project / "ids.json").write_text(json.dumps(items))
    result = run_cli("adjust", "ids.json")
    assert "3 transaction(s) will be submitted" in result.stdout
    assert f"{survey_id}   " in result.stdout
    assert "survey not named" not in result.stdout


def test_adjustments_names_the_environment_on_stderr_when_the_journal_alone_answers(
    completes, run_cli, project, sandbox
):
    survey_id, ids = completes
    run_cli("adjust", _write_ids(project, survey_id, ids), "--yes")
    listing = run_cli("adjustments", "--offline")
    shown = run_cli("adjustments", "--show", listing.stdout.splitlines()[1].split()[0])
    assert listing.exit_code == shown.exit_code == 0
    assert listing.stderr == shown.stderr == f"surveyctl: environment local ({sandbox.url})\n"
