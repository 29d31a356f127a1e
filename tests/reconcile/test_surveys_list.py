"""surveys list over real HTTP: the account's surveys, marked when managed here."""

from __future__ import annotations

import csv
import io
import json

from surveyctl.reconcile.discovery import ROW_FIELDS
from surveyctl.state import FileStateStore, State

from .conftest import survey_manifest, survey_title


def _listed(run_cli, *options) -> list[dict]:
    result = run_cli("surveys", "list", "--format", "json", *options)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _managed_tracker(run_cli, manifests) -> None:
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0


def test_surveys_list_marks_the_surveys_this_environment_manages(own_market, manifests, run_cli):
    _managed_tracker(run_cli, manifests)
    other = own_market.create_survey(survey_manifest("x", survey_title="Made by hand")["spec"])
    rows = {row["survey_title"]: row for row in _listed(run_cli)}
    assert rows[survey_title("tracker")]["managed_as"] == "Survey/tracker"
    assert rows["Made by hand"]["managed_as"] is None
    assert rows["Made by hand"]["ps_survey_id"] == other["ps_survey_id"]
    assert rows["Made by hand"]["status_name"] == "draft"


def test_surveys_list_unmanaged_leaves_out_the_managed_ones(own_market, manifests, run_cli):
    _managed_tracker(run_cli, manifests)
    own_market.create_survey(survey_manifest("x", survey_title="Made by hand")["spec"])
    rows = _listed(run_cli, "--unmanaged")
    assert [row["survey_title"] for row in rows] == ["Made by hand"]


def test_surveys_list_shows_the_statuses_asked_for(own_market, run_cli):
    draft = own_market.create_survey(survey_manifest("a")["spec"])["ps_survey_id"]
    live = own_market.create_survey(survey_manifest("b")["spec"])["ps_survey_id"]
    closed = own_market.create_survey(survey_manifest("c")["spec"])["ps_survey_id"]
    own_market.set_survey_status(live, 22)
    for status in (22, 33, 44):
        own_market.set_survey_status(closed, status)
    assert [r["ps_survey_id"] for r in _listed(run_cli)] == [draft, live]  # not closed
    assert [r["ps_survey_id"] for r in _listed(run_cli, "--status", "live")] == [live]
    assert [r["ps_survey_id"] for r in _listed(run_cli, "--status", "44,draft")] == [
        draft,
        closed,
    ]
    assert len(_listed(run_cli, "--status", "all")) == 3


def test_the_survey_list_reads_every_page(own_market):
    specs = [survey_manifest(f"s{i}")["spec"] for i in range(5)]
    made = [own_market.create_survey(spec)["ps_survey_id"] for spec in specs]
    before = own_market.request_counts.get("GET surveys", 0)
    listed = own_market.list_surveys(status=[11], limit=2)
    assert sorted(s["ps_survey_id"] for s in listed) == sorted(made)
    assert own_market.request_counts["GET surveys"] - before == 3  # pages 1, 2 and 3 of 2 each


def test_surveys_list_as_csv_has_a_header_and_a_row_per_survey(own_market, manifests, run_cli):
    _managed_tracker(run_cli, manifests)
    result = run_cli("surveys", "list", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["managed_as"] for row in rows] == ["Survey/tracker"]
    assert rows[0]["status_name"] == "draft" and rows[0]["offer_price"] == "2.5"


def test_an_empty_survey_table_leaves_stdout_empty_and_says_so_on_stderr(own_market, run_cli):
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "0 survey(s) listed, 0 of them managed in environment" in result.stderr


def test_an_empty_survey_list_parses_as_the_format_asked(own_market, run_cli):
    as_json = run_cli("surveys", "list", "--format", "json")
    as_csv = run_cli("surveys", "list", "--format", "csv")
    assert json.loads(as_json.stdout) == []
    assert as_csv.stdout.splitlines() == [",".join(ROW_FIELDS)]


def test_surveys_list_as_a_table_names_the_managing_address(own_market, manifests, run_cli):
    _managed_tracker(run_cli, manifests)
    own_market.create_survey(survey_manifest("x", survey_title="Made by hand")["spec"])
    result = run_cli("surveys", "list")
    tracker, by_hand = (
        next(line for line in result.stdout.splitlines() if title in line)
        for title in (survey_title("tracker"), "Made by hand")
    )
    assert tracker.rstrip().endswith("Survey/tracker")
    assert by_hand.rstrip().endswith("-")
    assert "2 survey(s) listed, 1 of them managed in environment local." in result.stderr


def test_an_unknown_status_is_refused_in_one_sentence(own_market, run_cli):
    result = run_cli("surveys", "list", "--status", "running")
    assert result.exit_code != 0
    assert "'running' is not a survey status" in result.stderr


def test_a_lost_create_that_shows_no_survey_yet_is_left_for_a_later_run(
    project, manifests, run_cli
):
    manifests.write(survey_manifest("lost"))
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    store.journal_create("Survey/lost", survey_manifest("lost")["spec"])
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert "the service may still be processing it" in result.stdout
    assert "1 create is blocked by an unresolved earlier attempt" in result.stdout


LONG_TITLE = "Brand tracker for the United States, wave twelve, with a long descriptive title"


def test_the_surveys_table_piped_keeps_every_value_whole(own_market, run_cli):
    spec = survey_manifest("long", survey_title=LONG_TITLE, offer_price=2.75)["spec"]
    made = own_market.create_survey(spec)["ps_survey_id"]
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith(str(made)))
    assert "…" not in result.stdout
    assert LONG_TITLE in row and "draft" in row and "en_US" in row and "2.75" in row


def test_on_a_narrow_terminal_the_id_column_is_not_the_one_that_shrinks(own_market, run_cli):
    from rich.console import Console

    from surveyctl.cli.surveys import _table
    from surveyctl.reconcile.discovery import list_surveys

    spec = survey_manifest("narrow", survey_title=LONG_TITLE, offer_price=2.75)["spec"]
    made = own_market.create_survey(spec)["ps_survey_id"]
    screen = io.StringIO()
    listed = list_surveys(own_market, State(lineage="test"), (11,))
    _table(listed, Console(file=screen, width=60, force_terminal=True, color_system=None))
    row = next(line for line in screen.getvalue().splitlines() if line.startswith(str(made)))
    assert row.split()[:2] == [str(made), "draft"]
    assert "en_US" in screen.getvalue() and "2.75" in screen.getvalue()


def test_surveys_list_writes_tsv_as_other_lists_do(own_market, run_cli):
    made = own_market.create_survey(survey_manifest("a")["spec"])["ps_survey_id"]
    result = run_cli("surveys", "list", "--format", "tsv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout), dialect="excel-tab"))
    assert [int(row["ps_survey_id"]) for row in rows] == [made]


def _csv_titles(run_cli, *options: str) -> list[str]:
    result = run_cli("surveys", "list", "--format", "csv", *options)
    assert result.exit_code == 0, result.stderr
    return [row["survey_title"] for row in csv.DictReader(io.StringIO(result.stdout))]


def test_surveys_list_as_csv_makes_a_title_a_spreadsheet_would_run_inert(own_market, run_cli):
    own_market.create_survey(survey_manifest("a", survey_title="=1+2 tracker")["spec"])
    assert _csv_titles(run_cli) == ["'=1+2 tracker"]


def test_surveys_list_raw_cells_writes_the_title_as_the_service_gave_it(own_market, run_cli):
    own_market.create_survey(survey_manifest("a", survey_title="=1+2 tracker")["spec"])
    assert _csv_titles(run_cli, "--raw-cells") == ["=1+2 tracker"]


def test_the_surveys_table_piped_has_every_value_in_its_column_and_no_blank_at_line_ends(
    own_market, run_cli
):
    spec = survey_manifest("long", survey_title=LONG_TITLE, offer_price=2.75)["spec"]
    made = own_market.create_survey(spec)["ps_survey_id"]
    short = own_market.create_survey(survey_manifest("s", survey_title="S")["spec"])
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line != line.rstrip()] == []
    header = lines[0]
    row = next(line for line in lines if line.startswith(str(made)))
    for heading, value in (("TITLE", LONG_TITLE), ("LOCALE", "en_US"), ("PRICE", "2.75")):
        assert row.index(value) == header.index(heading)
    assert row.endswith("  -")  # MANAGED AS, unmanaged
    assert any(line.startswith(f"{short['ps_survey_id']}  draft   S  ") for line in lines)


def test_the_surveys_table_heads_completes_required_as_the_goal(own_market, run_cli):
    made = own_market.create_survey(survey_manifest("g", completes_required=321)["spec"])
    lines = run_cli("surveys", "list").stdout.splitlines()
    header, row = (
        lines[0],
        next(line for line in lines if line.startswith(str(made["ps_survey_id"]))),
    )
    assert "COMPLETES" not in header
    assert row.index("321") == header.index("GOAL")


def test_a_piped_table_is_written_without_rich_laying_it_out(own_market, run_cli, monkeypatch):
    from rich.table import Table

    def laid_out(*args, **kwargs):
        raise AssertionError("rich laid the table out")

    monkeypatch.setattr(Table, "_calculate_column_widths", laid_out)
    own_market.create_survey(survey_manifest("a")["spec"])
    result = run_cli("surveys", "list")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ID")
