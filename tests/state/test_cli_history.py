"""`surveyctl state history [NAME]` and `surveyctl state show --serial N`: who changed the state,
when, with which command, and what it looked like then - on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.state import StateBackend, SurveyRecord

from .conftest import open_staging


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
