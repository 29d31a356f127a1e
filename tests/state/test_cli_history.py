"""`surveyctl state history [NAME]` and `surveyctl state show --serial N`: who changed the state,
when, with which command, and what it looked like then - on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.state import GroupRecord, StateBackend, SurveyRecord
from surveyctl.state.status_changes import MADE, StatusSet

from .conftest import open_staging

DRAFT, LIVE, PAUSED = 11, 22, 33


@pytest.fixture
def project(staging_project: Path) -> Path:
    return staging_project


@pytest.fixture
def store(staging_store) -> StateBackend:
    return staging_store  # serials 1-4: two surveys and two groups recorded


def history_rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines()[1:]]


def test_history_lists_every_change_oldest_first_with_serial_who_and_command(
    run_cli, store, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_ACTOR", "ann")
    assert run_cli("state", "mv", "brand-tracker-us", "brand-tracker-usa").exit_code == 0
    assert run_cli("state", "rm", "Survey/shared").exit_code == 0
    result = run_cli("state", "history")
    assert result.exit_code == 0
    header, *_ = result.stdout.splitlines()
    assert header.split() == ["SERIAL", "WHEN", "WHO", "COMMAND", "ADDRESS", "CHANGE"]
    rows = history_rows(result.stdout)
    assert [row[0] for row in rows] == ["1", "2", "3", "4", "5", "5", "6"]
    moved_from, moved_to, removed = rows[4], rows[5], rows[6]
    assert moved_from[2:] == ["ann", "state", "mv", "Survey/brand-tracker-us", "removed"]
    assert moved_to[2:] == ["ann", "state", "mv", "Survey/brand-tracker-usa", "added"]
    assert removed[2:] == ["ann", "state", "rm", "Survey/shared", "removed"]
    assert removed[1].startswith("20") and removed[1].endswith("+00:00")


def test_history_of_one_resource_includes_its_removal(run_cli, store):
    run_cli("state", "rm", "Survey/shared")
    result = run_cli("state", "history", "Survey/shared")
    assert [row[0] for row in history_rows(result.stdout)] == ["4", "5"]
    assert result.stdout.splitlines()[-1].endswith("removed")


def test_history_follows_a_create_from_journal_to_record(run_cli, store):
    store.journal_create("Survey/new-one", {"survey_title": "New"})
    store.resolve_create("Survey/new-one", SurveyRecord(4800))
    result = run_cli("state", "history", "new-one")
    changes = [line.rsplit("  ", 1)[-1].strip() for line in result.stdout.splitlines()[1:]]
    assert changes == ["create started", "create recorded"]


def test_history_as_json_has_each_change_before_and_after(run_cli, store):
    run_cli("state", "rm", "Survey/shared")
    entries = json.loads(run_cli("state", "history", "--format", "json", "--limit", "1").stdout)
    assert len(entries) == 1
    (entry,) = entries
    assert entry["serial"] == 5 and entry["command"] == "state rm"
    assert entry["before"]["ps_survey_id"] == 4712 and entry["after"] is None
    assert entry["change"] == "removed"


def test_history_of_a_name_never_seen_is_one_clear_error(run_cli, store):
    result = run_cli("state", "history", "nope")
    assert result.exit_code == 1 and "no resource named 'nope'" in result.stderr


def test_show_serial_shows_a_resource_as_it_was_then(run_cli, store, project):
    store.record("Survey/shared", SurveyRecord(9999, {}, {"survey_title": "changed"}))
    run_cli("state", "rm", "Survey/shared")
    then = json.loads(run_cli("state", "show", "Survey/shared", "--serial", "4").stdout)
    assert then["ps_survey_id"] == 4712
    later = json.loads(run_cli("state", "show", "Survey/shared", "--serial", "5").stdout)
    assert later["ps_survey_id"] == 9999
    gone = run_cli("state", "show", "Survey/shared")
    assert gone.exit_code == 1 and "no resource named" not in gone.stderr
    assert "Survey/shared is not in the state" in gone.stderr


def test_show_serial_without_a_name_prints_the_whole_state_then(run_cli, store):
    run_cli("state", "rm", "Survey/shared")
    then = json.loads(run_cli("state", "show", "--serial", "2").stdout)
    assert then["serial"] == 2
    assert sorted(then["resources"]) == ["ExclusionGroup/brand-trackers", "Survey/brand-tracker-us"]
    now = json.loads(run_cli("state", "show").stdout)
    assert now["serial"] == 5 and "Survey/shared" not in now["resources"]


def test_show_of_a_serial_not_reached_is_one_clear_error(run_cli, store):
    result = run_cli("state", "show", "--serial", "99")
    assert result.exit_code == 1
    assert "has no serial 99; it is at 4" in result.stderr and "Traceback" not in result.stderr


def test_history_of_an_empty_state_says_so(run_cli, project):
    result = run_cli("state", "history")
    assert result.exit_code == 0 and result.stdout == ""
    assert "No changes of the state recorded" in result.stderr
    assert open_staging(project).load().serial == 0


def test_an_actor_with_a_line_break_cannot_add_a_row_to_the_history(run_cli, store, monkeypatch):
    # A history written before such a name was refused ($SURVEYCTL_ACTOR, below).
    forged = "eve\x1b[31mRED\nSERIAL 999 fake  state rm  Survey/x"
    monkeypatch.setattr("surveyctl.config.actor_name", lambda: forged)
    assert run_cli("state", "rm", "Survey/shared").exit_code == 0
    result = run_cli("state", "history")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + 5  # the header and one row per change, none added
    assert not any(line.startswith("SERIAL 999") for line in lines)
    assert "\x1b" not in result.stdout
    last = lines[-1].split()
    assert last[0] == "5" and last[-1] == "removed"


def test_an_actor_name_with_a_line_break_is_refused_before_any_change(run_cli, store, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_ACTOR", "eve\nSERIAL 999 fake")
    result = run_cli("state", "rm", "Survey/shared")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: $SURVEYCTL_ACTOR holds a line break or another control character; set it to a "
        "plain name, such as the CI job's or the person's"
    )
    assert "Survey/shared" in store.load().resources


def test_history_lists_writes_and_status_changes_in_the_order_they_came(run_cli, store):
    store.record_status("status", StatusSet(9001, LIVE, MADE, from_status=DRAFT))  # after 4
    store.forget("Survey/shared")  # serial 5
    store.record_status("status", StatusSet(4711, PAUSED, MADE, from_status=LIVE))
    table = run_cli("state", "history")
    listed = run_cli("state", "history", "--format", "json")
    assert table.exit_code == 0 and listed.exit_code == 0, table.stderr + listed.stderr
    assert [(row[0], row[4]) for row in history_rows(table.stdout)] == [
        ("1", "Survey/brand-tracker-us"),
        ("2", "ExclusionGroup/brand-trackers"),
        ("3", "ExclusionGroup/shared"),
        ("4", "Survey/shared"),
        ("-", "-"),
        ("5", "Survey/shared"),
        ("-", "Survey/brand-tracker-us"),
    ]
    assert [(e["serial"], e.get("after_serial"), e.get("survey_id"))
            for e in json.loads(listed.stdout)] == [
        (1, None, None), (2, None, None), (3, None, None), (4, None, None),
        (None, 4, 9001), (5, None, None), (None, 5, 4711),
    ]  # fmt: skip


def test_history_of_the_id_of_a_survey_the_state_does_not_manage_lists_its_status_changes(
    run_cli, store
):
    store.record_status("status", StatusSet(9001, LIVE, MADE, from_status=DRAFT))
    store.record_status("status", StatusSet(9002, LIVE, MADE, from_status=DRAFT))
    store.record_status("status", StatusSet(9001, PAUSED, MADE, from_status=LIVE))
    result = run_cli("state", "history", "9001", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [(e["survey_id"], e["from"], e["to"], e["address"])
            for e in json.loads(result.stdout)] == [
        (9001, DRAFT, LIVE, None), (9001, LIVE, PAUSED, None),
    ]  # fmt: skip


def test_history_of_the_id_of_a_survey_removed_from_the_state_lists_its_writes_and_moves(
    run_cli, store
):
    store.record_status("status", StatusSet(4711, LIVE, MADE, from_status=DRAFT))
    assert run_cli("state", "rm", "Survey/brand-tracker-us").exit_code == 0
    result = run_cli("state", "history", "4711", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert [(e["serial"], e["command"], e["address"], e["change"].split(":")[0])
            for e in json.loads(result.stdout)] == [
        (1, "-", "Survey/brand-tracker-us", "added"),
        (None, "status", "Survey/brand-tracker-us", "survey 4711"),
        (5, "state rm", "Survey/brand-tracker-us", "removed"),
    ]  # fmt: skip


def test_a_resource_whose_name_is_all_digits_is_found_by_its_name_before_a_survey_id(
    run_cli, store
):
    store.record("Survey/2026", SurveyRecord(5555))
    store.record_status("status", StatusSet(2026, LIVE, MADE, from_status=DRAFT))
    result = run_cli("state", "history", "2026")
    assert result.exit_code == 0, result.stderr
    assert [(row[4], row[5]) for row in history_rows(result.stdout)] == [("Survey/2026", "added")]


def test_a_name_of_digits_that_two_kinds_have_is_ambiguous_not_a_survey_id(run_cli, store):
    store.record("Survey/2026", SurveyRecord(5555))
    store.record("ExclusionGroup/2026", GroupRecord("ref-2026", [], {}))
    store.record_status("status", StatusSet(2026, LIVE, MADE, from_status=DRAFT))
    result = run_cli("state", "history", "2026")
    assert result.exit_code == 1
    assert "'2026' is ambiguous" in result.stderr


def test_history_of_an_id_the_history_does_not_hold_is_one_clear_error(run_cli, store):
    result = run_cli("state", "history", "9001")
    assert result.exit_code == 1
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert error.startswith("Error: no resource named '9001' in the state ")
    assert error.endswith(", and no survey 9001 in its history")
    assert "Traceback" not in result.stderr
