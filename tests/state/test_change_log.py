"""The file backend's change log: a write appends one line, a command's end folds the log
into the JSON file, and a writer killed at any point loses nothing it wrote."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from surveyctl.state import FileStateStore, StateError, SurveyRecord, state_file
from surveyctl.state.file import store as file_backend
from surveyctl.state.file.changelog import changes_file, history_file


@pytest.fixture
def store(tmp_path) -> FileStateStore:
    return FileStateStore(state_file(tmp_path / ".surveyctl" / "state", "staging"))


def survey(ps_survey_id: int, title: str = "Tracker") -> SurveyRecord:
    return SurveyRecord(ps_survey_id, {"male": f"q-{ps_survey_id}"}, {"survey_title": title})


def fill(store: FileStateStore, count: int) -> None:
    for number in range(count):
        store.record(f"Survey/s-{number}", survey(number))
    store.flush()


def test_a_write_appends_one_line_whatever_the_size_of_the_state(store):
    fill(store, 10)
    store.record("Survey/extra-1", survey(9001))
    one_line_at_10 = changes_file(store.path).stat().st_size
    fill(store, 400)
    json_before = store.path.stat()
    store.record("Survey/extra-2", survey(9002))
    one_line_at_400 = changes_file(store.path).stat().st_size
    # The same record size, so the same bytes (give or take the serial's digits) at 40x the state.
    assert 0 <= one_line_at_400 - one_line_at_10 <= 2
    after = store.path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (json_before.st_ino, json_before.st_mtime_ns)


def test_flush_folds_the_log_into_the_json_file_and_moves_it_to_the_history(store):
    store.record("Survey/a", survey(1))
    store.record("Survey/b", survey(2))
    assert not store.path.exists() and changes_file(store.path).exists()
    store.flush()
    assert not changes_file(store.path).exists()
    on_disk = json.loads(store.path.read_text())
    assert on_disk["serial"] == 2 and sorted(on_disk["resources"]) == ["Survey/a", "Survey/b"]
    history = [json.loads(line) for line in history_file(store.path).read_text().splitlines()]
    assert [line["serial"] for line in history] == [1, 2]


def test_the_end_of_a_locked_command_compacts(store):
    with store.locked("apply"):
        store.record("Survey/a", survey(1))
        assert changes_file(store.path).exists()
    assert not changes_file(store.path).exists()
    assert json.loads(store.path.read_text())["resources"]["Survey/a"]["ps_survey_id"] == 1


def test_a_failing_command_still_compacts_what_it_wrote(store):
    with (
        pytest.raises(RuntimeError, match="the command failed after a write"),
        store.locked("apply"),
    ):
        store.record("Survey/a", survey(1))
        raise RuntimeError("the command failed after a write")
    assert "Survey/a" in json.loads(store.path.read_text())["resources"]


class SignalledAfterLogging(FileStateStore):
    """The file state, with a real SIGINT sent to this process as each change is appended to
    the log: a Ctrl-C pressed at that instant, raised before the write returns."""

    def _persist(self, change, state):
        written = super()._persist(change, state)
        os.kill(os.getpid(), signal.SIGINT)
        return written


def test_a_write_interrupted_once_it_is_in_the_log_is_kept_when_the_command_ends(tmp_path):
    path = state_file(tmp_path / ".surveyctl" / "state", "staging")
    store = SignalledAfterLogging(path)
    with pytest.raises(KeyboardInterrupt), store.locked("state mv"):
        store.record("Survey/a", survey(1))
    # The line was in the log, so the state holds it, in the JSON file the command folded.
    assert "Survey/a" in json.loads(path.read_text())["resources"]
    assert FileStateStore(path).load().resources["Survey/a"].ps_survey_id == 1


WRITER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from surveyctl.state import FileStateStore, SurveyRecord
    store = FileStateStore(Path(sys.argv[1]))
    for number in range(int(sys.argv[2])):
        store.record(f"Survey/s-{number}", SurveyRecord(number))
    store.journal_create("Survey/in-flight", {"survey_title": "x"})
    os._exit(0)  # killed: no flush, no compaction
    """
)


def test_writes_of_a_killed_writer_are_replayed_by_the_next_reader(store):
    fill(store, 3)
    subprocess.run([sys.executable, "-c", WRITER, str(store.path), "5"], check=True)
    state = FileStateStore(store.path).load()
    assert sorted(state.resources) == [f"Survey/s-{n}" for n in range(5)]
    assert state.pending_create("Survey/in-flight") is not None
    assert state.serial == 3 + 5 + 1
    with FileStateStore(store.path).locked("apply"):
        pass  # the next locked command folds them in
    assert json.loads(store.path.read_text())["serial"] == 9


def test_a_torn_last_line_is_ignored_and_cut_by_the_next_write(store):
    store.record("Survey/a", survey(1))
    with open(changes_file(store.path), "ab") as log:
        log.write(b'{"lineage": "half a line, the writer was kil')
    reader = FileStateStore(store.path)
    assert sorted(reader.load().resources) == ["Survey/a"]
    assert reader.record("Survey/b", survey(2)) == 2
    assert sorted(FileStateStore(store.path).load().resources) == ["Survey/a", "Survey/b"]


def test_a_history_append_cut_short_is_skipped_and_the_next_one_starts_on_its_own_line(store):
    store.record("Survey/a", survey(1))
    store.flush()
    with open(history_file(store.path), "ab") as history:
        history.write(b'{"lineage": "half a line, the compaction was kil')
    store.record("Survey/b", survey(2))
    store.flush()
    assert [change.serial for change in FileStateStore(store.path).changes()] == [1, 2]
    lines = history_file(store.path).read_bytes().splitlines()
    assert json.loads(lines[-1])["serial"] == 2  # not glued to the fragment


def test_lines_already_compacted_are_not_applied_twice(store):
    store.record("Survey/a", survey(1))
    store.forget("Survey/a")
    log = changes_file(store.path).read_bytes()
    store.flush()
    changes_file(store.path).write_bytes(log)  # as if killed between the rename and the removal
    state = FileStateStore(store.path).load()
    assert state.serial == 2 and state.resources == {}


def test_a_log_that_does_not_continue_the_state_file_is_refused(store, tmp_path):
    store.record("Survey/a", survey(1))
    other = FileStateStore(tmp_path / "other" / "staging.json")
    other.record("Survey/x", survey(7))
    other.flush()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(other.path.read_text())  # a state file replaced by hand
    with pytest.raises(StateError, match=r"staging\.changes\.jsonl:1: this change log does not"):
        FileStateStore(store.path).load()


def test_a_corrupt_line_in_the_middle_names_the_file_and_line(store):
    store.record("Survey/a", survey(1))
    store.record("Survey/b", survey(2))
    lines = changes_file(store.path).read_text().splitlines()
    changes_file(store.path).write_text(lines[0] + "\n{oops\n" + lines[1] + "\n")
    with pytest.raises(StateError, match=r"staging\.changes\.jsonl:2: the state's change log"):
        FileStateStore(store.path).load()


def _second_change_edited(store: FileStateStore, edit) -> None:
    """Two changes logged, the second edited by hand with `edit(change)`."""
    store.record("Survey/a", survey(1))
    store.record("Survey/b", survey(2))
    first, second = changes_file(store.path).read_text().splitlines()
    change = json.loads(second)
    edit(change)
    changes_file(store.path).write_text(first + "\n" + json.dumps(change) + "\n")


def test_a_change_without_a_field_names_the_field_and_line(store):
    _second_change_edited(store, lambda change: change.pop("changes"))
    with pytest.raises(StateError) as refused:
        FileStateStore(store.path).load()
    assert str(refused.value).endswith(
        "staging.changes.jsonl:2: not a surveyctl state change: it has no 'changes'"
    )


def test_a_change_with_a_field_of_the_wrong_shape_says_so_at_its_line(store):
    _second_change_edited(store, lambda change: change.update(serial="two"))
    with pytest.raises(StateError) as refused:
        FileStateStore(store.path).load()
    assert str(refused.value).endswith(
        "staging.changes.jsonl:2: not a surveyctl state change: a field of it is not what a "
        "change holds"
    )


def test_a_write_based_on_a_stale_read_is_refused_and_the_other_kept(store):
    store.record("Survey/a", survey(1))
    first, second = FileStateStore(store.path), FileStateStore(store.path)
    first.load(), second.load()
    first.record("Survey/b", survey(2))
    with pytest.raises(StateError, match="changed by another process"):
        second.record("Survey/c", survey(3))
    assert sorted(FileStateStore(store.path).load().resources) == ["Survey/a", "Survey/b"]


def test_a_long_log_is_compacted_on_the_way(store, monkeypatch):
    monkeypatch.setattr(file_backend, "COMPACT_FLOOR_BYTES", 2000)
    for number in range(40):
        store.record(f"Survey/s-{number}", survey(number))
        assert (
            not changes_file(store.path).exists() or changes_file(store.path).stat().st_size < 4000
        )
    assert json.loads(store.path.read_text())["serial"] > 0
    assert len(FileStateStore(store.path).load().resources) == 40


def test_a_state_from_before_history_was_kept_starts_its_history_with_a_baseline(store):
    store.record("Survey/a", survey(1))
    store.record("Survey/b", survey(2))
    store.flush()
    history_file(store.path).unlink()  # as an older surveyctl left it: serial 2, no history
    later = FileStateStore(store.path)
    later.forget("Survey/a")
    later.flush()
    assert sorted(later.state_at(2).resources) == ["Survey/a", "Survey/b"]
    assert sorted(later.state_at(3).resources) == ["Survey/b"]
    with pytest.raises(StateError, match="does not reach back to serial 1"):
        later.state_at(1)
    assert [(e.serial, e.address, e.summary) for e in later.history()] == [
        (3, "Survey/a", "removed")
    ]
