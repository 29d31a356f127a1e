"""Where a status change is filed: after the serial the state is at, under the address that
manages its survey (none when no address does). Found without reading each record of the state,
yet refusing what a read of the whole state refuses; on the file and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from surveyctl.state import RECORD_TYPES, GroupRecord, StateError, SurveyRecord
from surveyctl.state.records import NewerState
from surveyctl.state.status_changes import MADE, StatusSet

from .conftest import open_staging
from .test_newer_state import LaterSurveyRecord

LIVE = 22


def launch(survey_id: int) -> StatusSet:
    return StatusSet(survey_id, LIVE, MADE)


def test_a_managed_surveys_change_is_filed_under_its_address_after_the_last_write(
    staging_store,
):
    change = staging_store.record_status("status", launch(4711))
    assert (change.address, change.serial) == ("Survey/brand-tracker-us", 4)
    assert change.lineage == staging_store.current().lineage


def test_a_survey_that_only_a_group_names_is_not_managed(staging_store):
    staging_store.record("ExclusionGroup/others", GroupRecord("others-2026", [9001], {}))
    change = staging_store.record_status("status", launch(9001))
    assert (change.address, change.serial) == (None, 5)


def test_a_change_before_the_first_write_is_filed_after_serial_0_of_no_lineage(
    staging_project,
):
    store = open_staging(staging_project)
    change = store.record_status("status", launch(4711))
    store.close()
    assert (change.lineage, change.serial, change.address) == ("", 0, None)


def test_a_survey_recorded_by_a_command_still_writing_is_found(staging_store, staging_project):
    with staging_store.locked("apply"):
        staging_store.record("Survey/new-one", SurveyRecord(4800))  # the file: in the log
        other = open_staging(staging_project)
        change = other.record_status("status", launch(4800))
        other.close()
    assert (change.address, change.serial) == ("Survey/new-one", 5)


def test_a_survey_recorded_under_two_names_is_filed_under_the_first(staging_store):
    staging_store.record("Survey/b-copy", SurveyRecord(4712))  # Survey/shared's id too
    change = staging_store.record_status("status", launch(4712))
    assert change.address == "Survey/b-copy"


def test_a_state_a_newer_surveyctl_wrote_takes_no_status_change(
    staging_store, staging_project, monkeypatch
):
    with monkeypatch.context() as later:
        later.setitem(RECORD_TYPES, "Survey", LaterSurveyRecord)
        writer = open_staging(staging_project)
        writer.record("Survey/later", LaterSurveyRecord(4999, owner="ann"))
        writer.flush()
        writer.close()
    store = open_staging(staging_project)
    with pytest.raises(NewerState, match="holds 'owner'"):
        store.record_status("status", launch(9001))  # a survey the state does not manage
    store.close()
    with monkeypatch.context() as later:
        later.setitem(RECORD_TYPES, "Survey", LaterSurveyRecord)
        reader = open_staging(staging_project)
        assert reader.status_changes() == []  # the newer surveyctl's history is as it was
        reader.close()


def damage_the_record(project: Path, backend: str, store, request) -> None:
    """Makes the quota ids of Survey/brand-tracker-us a number, as no surveyctl writes them."""
    if backend == "file":
        path = project / ".surveyctl" / "state" / "staging.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["resources"]["Survey/brand-tracker-us"]["quota_ids"] = 5
        path.write_text(json.dumps(data), encoding="utf-8")
        return
    postgres = request.getfixturevalue("postgres")
    with psycopg.connect(postgres.dsn()) as connection:
        connection.execute(
            f"UPDATE {store.schema}.resources SET record = %s WHERE address = %s",
            ('{"ps_survey_id": 4711, "quota_ids": 5}', "Survey/brand-tracker-us"),
        )


def test_a_damaged_record_of_the_survey_is_refused_naming_it(
    staging_store, staging_project, backend, request
):
    staging_store.flush()
    damage_the_record(staging_project, backend, staging_store, request)
    store = open_staging(staging_project)
    with pytest.raises(StateError, match="resources.Survey/brand-tracker-us.quota_ids"):
        store.record_status("status", launch(4711))
    store.close()
