"""A state that cannot be used as it stands, or a state folder the file system refuses: one
clear sentence and exit 1, never a traceback, and never a problem used silently."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from surveyctl.state import StateBackend, SurveyRecord

from .conftest import open_staging


@pytest.fixture
def project(staging_project: Path) -> Path:
    return staging_project


@pytest.fixture
def store(staging_store) -> StateBackend:
    return staging_store


def one_sentence(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_one_survey_under_two_names_stops_plan_with_one_sentence(run_cli, store):
    store.record("Survey/copy-of-tracker", SurveyRecord(4711))
    message = one_sentence(run_cli("plan"))
    assert "Survey/brand-tracker-us and Survey/copy-of-tracker both record ps_survey_id 4711" in (
        message
    )
    assert "surveyctl state rm Survey/copy-of-tracker" in message


def test_one_survey_under_two_names_names_the_rm_of_either(run_cli, store):
    # The copy sorts before the original: the message does not pick the original for removal.
    store.record("Survey/a-copy", SurveyRecord(4711))
    message = one_sentence(run_cli("plan"))
    assert "`surveyctl state rm Survey/a-copy`" in message
    assert "`surveyctl state rm Survey/brand-tracker-us`" in message


def test_the_state_commands_still_work_to_repair_it_and_say_what_is_wrong(run_cli, store, project):
    store.record("Survey/copy-of-tracker", SurveyRecord(4711))
    listed = run_cli("state", "list")
    assert listed.exit_code == 0 and "Survey/copy-of-tracker" in listed.stdout
    assert "both record ps_survey_id 4711" in listed.stderr
    assert run_cli("state", "rm", "Survey/copy-of-tracker").exit_code == 0
    assert open_staging(project).load().problems() == []


def test_one_group_under_two_names_is_reported_too(store, project):
    from surveyctl.state import GroupRecord, StateError

    store.record("ExclusionGroup/again", GroupRecord("trackers-2026", [4711], {}))
    with pytest.raises(StateError, match="both record buyer_surveygroup_ref trackers-2026"):
        open_staging(project).load()


# The file backend: what a hand-edited file or a hostile file system can do.
file_only = pytest.mark.parametrize("backend", ["file"])


def state_folder(project: Path) -> Path:
    return project / ".surveyctl" / "state"


def state_list_with_journal_entry(run_cli, store, project: Path, key: str, address: str) -> str:
    """What `state list` says of the file state once a create of `address` is journaled under
    `key` by hand."""
    store.flush()
    path = state_folder(project) / "staging.json"
    data = json.loads(path.read_text())
    data["journal"][key] = {"address": address, "started_at": "t", "fingerprint": "f"}
    path.write_text(json.dumps(data))
    return one_sentence(run_cli("state", "list"))


@file_only
def test_a_journal_entry_under_an_unknown_kind_is_one_sentence(run_cli, store, project):
    message = state_list_with_journal_entry(run_cli, store, project, "Widget/x", "Widget/x")
    assert "staging.json: the state holds a create in flight of Widget/x, a resource of kind " in (
        message
    )
    assert "a newer surveyctl wrote this state" in message


@file_only
def test_a_journal_entry_for_another_address_than_its_key_is_one_sentence_naming_both(
    run_cli, store, project
):
    message = state_list_with_journal_entry(run_cli, store, project, "Survey/x", "Survey/y")
    assert message.endswith(
        "staging.json: the journal holds a create under 'Survey/x' for 'Survey/y', which is not "
        "a resource surveyctl manages (Survey/<name> or ExclusionGroup/<name>); it was not "
        "written by surveyctl: remove that entry from the state by hand"
    )


@file_only
def test_a_journal_entry_under_a_key_no_surveyctl_writes_is_one_sentence(run_cli, store, project):
    # `widget` is spelt as no resource kind is: a hand edit, not a later surveyctl's kind.
    message = state_list_with_journal_entry(run_cli, store, project, "widget/x", "widget/x")
    assert message.endswith(
        "staging.json: the journal holds a create under 'widget/x', which is not a resource "
        "surveyctl manages (Survey/<name> or ExclusionGroup/<name>); it was not written by "
        "surveyctl: remove that entry from the state by hand"
    )


@file_only
def test_a_change_log_line_under_an_unknown_kind_names_file_and_line(run_cli, store, project):
    log = state_folder(project) / "staging.changes.jsonl"
    line = json.loads(log.read_text().splitlines()[-1])
    line["serial"] += 1
    line["changes"][0]["address"] = "Widget/x"
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    message = one_sentence(run_cli("state", "list"))
    assert "staging.changes.jsonl:5: the state holds Widget/x, a resource of kind 'Widget'" in (
        message
    )


@file_only
def test_temporary_files_of_interrupted_writes_are_removed(run_cli, store, project):
    folder = state_folder(project)
    leftovers = [folder / ".staging.json.k1ll3d.tmp", folder / ".staging.history.jsonl.migrating"]
    for leftover in leftovers:
        leftover.write_text("half a state")
    assert run_cli("state", "rm", "Survey/shared").exit_code == 0
    assert not any(leftover.exists() for leftover in leftovers)
    assert sorted(p.name for p in folder.iterdir()) == [
        "staging.history.jsonl",
        "staging.json",
        "staging.lock.guard",
    ]


@file_only
@pytest.mark.parametrize("blocked", [".surveyctl", ".surveyctl/state"])
def test_a_file_where_the_state_folder_should_be_is_one_sentence(run_cli, project, blocked):
    (project / blocked).parent.mkdir(parents=True, exist_ok=True)
    (project / blocked).write_text("not a folder")
    for command in (("state", "list"), ("state", "rm", "Survey/x")):
        message = one_sentence(run_cli(*command))
        assert f"{project / blocked} is a file where a folder is expected" in message


@file_only
def test_a_folder_where_the_lock_file_should_be_is_one_sentence(run_cli, store, project):
    (state_folder(project) / "staging.lock.json").mkdir()
    message = one_sentence(run_cli("state", "rm", "Survey/shared"))
    assert "cannot read the state lock" in message
    assert "staging.lock.json is a folder where a file is expected" in message


@file_only
def test_a_read_only_state_folder_is_one_sentence_and_reading_still_works(
    run_cli, store, project, monkeypatch
):
    store.flush()
    work = project / ".surveyctl"
    folders = [work, state_folder(project)]
    for folder in folders:
        folder.chmod(0o555)
    if os.geteuid() == 0:
        # root writes through any mode; refuse as the kernel refuses everyone else.
        real_open = os.open

        def refusing_open(path, flags, *args, **kwargs):
            writes = flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR)
            if writes and Path(path).resolve().is_relative_to(work.resolve()):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing_open)
    try:
        message = one_sentence(run_cli("state", "rm", "Survey/shared"))
        assert "cannot take the state lock: permission denied in" in message
        listed = run_cli("state", "list")
        assert listed.exit_code == 0 and "Survey/shared" in listed.stdout
    finally:
        for folder in folders:
            folder.chmod(0o755)
