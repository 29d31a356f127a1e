"""The state store: file format, lineage and serial, atomic writes, journal, thread safety."""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from surveyctl.state import (
    FORMAT_VERSION,
    FileStateStore,
    GroupRecord,
    State,
    StateError,
    SurveyRecord,
    state_file,
)
from surveyctl.state.file.changelog import ChangeLog


@pytest.fixture
def store(tmp_path) -> FileStateStore:
    return FileStateStore(state_file(tmp_path / ".surveyctl" / "state", "staging"))


# The head of a valid state file, for the files that tests write by hand.
HEAD = {"format_version": FORMAT_VERSION, "lineage": "x", "serial": 1}


def write_file(store: FileStateStore, content: str | bytes) -> None:
    """Writes `content` as the state file of `store`, as something other than surveyctl may."""
    store.path.parent.mkdir(parents=True)
    if isinstance(content, bytes):
        store.path.write_bytes(content)
    else:
        store.path.write_text(content)


def load_refusal(store: FileStateStore) -> str:
    """What loading `store` says when it refuses its file."""
    with pytest.raises(StateError) as raised:
        store.load()
    return str(raised.value)


def survey(ps_survey_id: int = 101) -> SurveyRecord:
    return SurveyRecord(
        ps_survey_id=ps_survey_id,
        quota_ids={"male": "6f1c0b9e-0000-4000-8000-000000000001"},
        last_applied={"survey_title": "Brand tracker", "completes_required": 100},
    )


def test_state_file_is_named_after_the_environment(tmp_path):
    assert state_file(tmp_path, "production") == tmp_path / "production.json"


def test_missing_file_loads_as_empty_state_without_creating_it(store):
    state = store.load()
    assert state.resources == {} and state.journal == {} and state.serial == 0
    assert state.lineage
    assert not store.path.exists()


def test_recorded_survey_survives_a_reload(store):
    store.record("Survey/brand-tracker", survey())
    reloaded = FileStateStore(store.path).load()
    assert reloaded.survey("brand-tracker") == survey()


def test_recorded_group_survives_a_reload(store):
    group = GroupRecord("trackers-2026", [101, 102], {"name": "Trackers"})
    store.record("ExclusionGroup/trackers", group)
    assert FileStateStore(store.path).load().group("trackers") == group


def test_protected_records_stay_protected_across_a_reload(store):
    # A record is what still protects a resource once its manifest is gone.
    protected = SurveyRecord(101, {}, {"survey_title": "T"}, prevent_destroy=True, mod_on=7)
    group = GroupRecord("trackers-2026", [101], {"name": "Trackers"}, prevent_destroy=True)
    store.record("Survey/brand-tracker", protected)
    store.record("ExclusionGroup/trackers", group)
    reloaded = FileStateStore(store.path).load()
    assert (reloaded.survey("brand-tracker"), reloaded.group("trackers")) == (protected, group)


def test_records_written_without_their_optional_fields_read_as_unprotected(store):
    resources = {
        "Survey/a": {"ps_survey_id": 101},
        "ExclusionGroup/g": {"buyer_surveygroup_ref": "g"},
    }
    write_file(store, json.dumps({**HEAD, "resources": resources}))
    state = store.load()
    assert (state.survey("a"), state.group("g")) == (SurveyRecord(101), GroupRecord("g"))
    assert not state.survey("a").prevent_destroy and not state.group("g").prevent_destroy


def test_every_write_bumps_the_serial_and_keeps_the_lineage(store):
    lineage = store.load().lineage
    serials = [
        store.record("Survey/a", survey(1)),
        store.record("Survey/b", survey(2)),
        store.forget("Survey/a"),
    ]
    assert serials == [1, 2, 3]
    store.flush()
    on_disk = json.loads(store.path.read_text())
    assert on_disk["serial"] == 3 and on_disk["lineage"] == lineage


def test_file_records_format_version_and_resources_by_address(store):
    store.record("Survey/brand-tracker", survey())
    store.flush()
    on_disk = json.loads(store.path.read_text())
    assert on_disk["format_version"] == FORMAT_VERSION
    assert on_disk["resources"]["Survey/brand-tracker"]["ps_survey_id"] == 101
    assert on_disk["resources"]["Survey/brand-tracker"]["quota_ids"] == survey().quota_ids


def test_unknown_format_version_is_refused_naming_the_file(store):
    write_file(store, json.dumps({**HEAD, "format_version": 99}))
    with pytest.raises(StateError, match=r"staging\.json: the state is in format 99"):
        store.load()


def test_corrupt_file_is_refused_with_its_name_and_line_and_the_way_out(store):
    write_file(store, '{\n  "format_version": 1,\n  "lineage": oops\n}')
    with pytest.raises(StateError, match=r"staging\.json:3: the state file is corrupt") as raised:
        store.load()
    assert "move it aside and run `surveyctl state rebuild`" in str(raised.value)


def test_a_state_file_of_bytes_that_are_not_text_is_called_corrupt(store):
    write_file(store, b"\xff\xfe{}")
    with pytest.raises(StateError, match=r"staging\.json: the state file is corrupt \(not UTF-8"):
        store.load()


def test_file_of_the_wrong_shape_is_refused_naming_the_field(store):
    resources = {"Survey/a": {"ps_survey_id": "not a number"}}
    write_file(store, json.dumps({**HEAD, "resources": resources}))
    with pytest.raises(StateError, match=r"staging\.json: .*resources\.Survey/a\.ps_survey_id"):
        store.load()


def test_a_state_file_that_is_not_an_object_is_refused_naming_the_file(store):
    write_file(store, "[]")
    assert load_refusal(store) == (
        f"{store.path}: not a surveyctl state file (expected a JSON object)"
    )


def test_a_top_level_field_of_the_wrong_shape_is_refused_naming_the_file_and_field(store):
    write_file(store, json.dumps({**HEAD, "serial": -1, "resources": {}}))
    assert load_refusal(store) == (
        f"{store.path}: not a valid surveyctl state file at serial: -1 is less than the "
        "minimum of 0"
    )


def test_a_group_record_of_the_wrong_shape_is_refused_naming_the_file_and_field(store):
    group = {"buyer_surveygroup_ref": "g", "ps_survey_ids": "101"}
    write_file(store, json.dumps({**HEAD, "resources": {"ExclusionGroup/g": group}}))
    assert load_refusal(store) == (
        f"{store.path}: not a valid surveyctl state file at "
        "resources.ExclusionGroup/g.ps_survey_ids: '101' is not of type 'array'"
    )


def test_a_state_file_missing_a_top_level_field_is_refused_at_its_top_level(store):
    write_file(store, json.dumps({"format_version": FORMAT_VERSION, "serial": 1}))
    assert load_refusal(store) == (
        f"{store.path}: not a valid surveyctl state file at top level: 'lineage' is a "
        "required property"
    )


def test_a_record_under_an_address_of_no_kind_is_refused_naming_the_kinds(store):
    write_file(store, json.dumps({**HEAD, "resources": {"Widget/a": {}}}))
    assert load_refusal(store).startswith(
        f"{store.path}: the state holds Widget/a, a resource of kind 'Widget', which this surveyctl"
    )


@pytest.mark.parametrize("key", ["widget/a", "Survey/"])
def test_a_record_under_a_key_that_is_no_address_is_refused_naming_the_kinds(store, key):
    write_file(store, json.dumps({**HEAD, "resources": {key: {"ps_survey_id": 1}}}))
    assert load_refusal(store) == (
        f"{store.path}: {key!r} is not a resource address; use Survey/<name> or "
        "ExclusionGroup/<name>"
    )


def test_a_state_format_no_surveyctl_writes_is_refused_naming_it(store):
    write_file(store, json.dumps({**HEAD, "format_version": 0}))
    assert load_refusal(store) == (
        f"{store.path}: state format_version 0 is not supported by this surveyctl (it reads "
        f"version {FORMAT_VERSION}); use the surveyctl that wrote it"
    )


def test_failed_compaction_leaves_the_previous_file_intact_and_loses_no_write(store, monkeypatch):
    store.record("Survey/a", survey(1))
    store.flush()
    before = store.path.read_text()
    store.record("Survey/b", survey(2))

    def crash(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StateError, match="cannot write the state file"):
        store.flush()
    monkeypatch.undo()
    assert store.path.read_text() == before
    assert not [p for p in store.path.parent.iterdir() if p.name.endswith(".tmp")]
    # The write is still in the change log: a reader sees it, the next flush folds it in.
    assert FileStateStore(store.path).load().survey("b") == survey(2)
    assert store.record("Survey/c", survey(3)) == 3
    store.flush()
    assert sorted(json.loads(store.path.read_text())["resources"]) == [
        "Survey/a",
        "Survey/b",
        "Survey/c",
    ]


def test_failed_append_is_refused_and_the_store_stays_as_it_was(store, monkeypatch):
    store.record("Survey/a", survey(1))

    class FullDisk:
        def seek(self, offset):
            pass

        def write(self, data):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(ChangeLog, "_open", lambda log: FullDisk())
    with pytest.raises(StateError, match="no space left"):
        store.record("Survey/b", survey(2))
    monkeypatch.undo()
    assert "Survey/b" not in store.current().resources
    assert store.record("Survey/c", survey(3)) == 2
    assert sorted(FileStateStore(store.path).load().resources) == ["Survey/a", "Survey/c"]


def test_create_is_journaled_before_and_resolved_after(store):
    entry = store.journal_create("Survey/new-one", {"survey_title": "New"})
    pending = FileStateStore(store.path).load().pending_create("Survey/new-one")
    assert pending == entry and pending.fingerprint.startswith("sha256:")
    store.resolve_create("Survey/new-one", survey(555))
    after = FileStateStore(store.path).load()
    assert after.pending_create("Survey/new-one") is None
    assert after.survey("new-one").ps_survey_id == 555


def test_a_create_is_journaled_with_its_time_in_utc(store):
    # Recovery compares it with the service's creation times, which carry their own zone.
    entry = store.journal_create("Survey/new-one", {"survey_title": "New"})
    started = datetime.fromisoformat(entry.started_at)
    assert started.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - started) < timedelta(minutes=1)


def test_unresolved_create_blocks_a_second_create_of_that_name(store):
    store.journal_create("Survey/new-one", {"survey_title": "New"})
    crashed_then_restarted = FileStateStore(store.path)
    with pytest.raises(StateError, match="Survey/new-one is already in flight"):
        crashed_then_restarted.journal_create("Survey/new-one", {"survey_title": "New"})


def test_failed_create_is_resolved_without_a_record(store):
    store.journal_create("Survey/new-one", {"survey_title": "New"})
    store.resolve_create("Survey/new-one", None)
    state = FileStateStore(store.path).load()
    assert state.journal == {} and state.resources == {}


def test_fingerprint_ignores_key_order_but_not_content(store):
    a = store.journal_create("Survey/a", {"x": 1, "y": 2})
    b = store.journal_create("Survey/b", {"y": 2, "x": 1})
    c = store.journal_create("Survey/c", {"y": 2, "x": 3})
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_fingerprint_is_the_digest_of_compact_sorted_json_in_utf8(store):
    # The form every surveyctl writes, so that a journal entry left by one is matched by the
    # next: no spaces, keys sorted, non-ASCII characters as themselves.
    entry = store.journal_create("Survey/a", {"title": "Étude", "count": 1})
    canonical = '{"count":1,"title":"Étude"}'.encode()
    assert entry.fingerprint == "sha256:" + hashlib.sha256(canonical).hexdigest()


def test_forget_removes_a_resource_and_its_unresolved_create(store):
    store.record("Survey/a", survey(1))
    store.journal_create("Survey/a", {"survey_title": "again"})
    store.forget("Survey/a")
    state = store.current()
    assert "Survey/a" not in state.resources and "Survey/a" not in state.journal


def test_forget_of_an_unknown_address_is_an_error(store):
    with pytest.raises(StateError, match="Survey/ghost is not in the state"):
        store.forget("Survey/ghost")


def test_move_renames_keeping_ids_and_last_applied(store):
    store.record("Survey/old-name", survey(7))
    store.move("Survey/old-name", "Survey/new-name")
    state = FileStateStore(store.path).load()
    assert state.survey("new-name") == survey(7) and state.survey("old-name") is None


def test_move_refuses_to_change_kind_or_overwrite(store):
    store.record("Survey/a", survey(1))
    store.record("Survey/b", survey(2))
    with pytest.raises(StateError, match="keeps its kind"):
        store.move("Survey/a", "ExclusionGroup/a")
    with pytest.raises(StateError, match="Survey/b is already in the state"):
        store.move("Survey/a", "Survey/b")


def test_writes_from_many_threads_all_land_with_one_serial_each(store):
    names = [f"s-{i}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: store.record(f"Survey/{n}", survey(names.index(n))), names))
    reloaded = FileStateStore(store.path).load()
    assert sorted(reloaded.resources) == sorted(f"Survey/{n}" for n in names)
    assert reloaded.serial == len(names)


def test_empty_state_has_a_fresh_lineage_each_time():
    assert State.empty().lineage != State.empty().lineage


def test_file_is_json_of_the_state_with_one_line_per_resource(store):
    store.record("Survey/a", survey(1))
    store.record("ExclusionGroup/g", GroupRecord("g-ref", [1], {"name": "G"}))
    store.flush()
    state = store.current()
    text = store.path.read_text()
    assert json.loads(text) == state.to_json()
    lines = text.splitlines()
    assert any(line.startswith('    "Survey/a": {"ps_survey_id": 1, ') for line in lines)
    assert len(lines) == 10  # 2 resources, 1 line each, around 8 lines of frame


def test_copies_handed_out_do_not_change_the_store(store):
    store.record("Survey/a", survey(1))
    copy = store.current()
    copy.resources.pop("Survey/a")
    assert "Survey/a" in store.current().resources
    store.record("Survey/b", survey(2))
    assert "Survey/a" in store.current().resources
