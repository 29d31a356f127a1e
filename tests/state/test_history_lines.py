"""The history keeps a write of the state and a status change in one shape, a history line:
what the last release wrote reads back as it was, and what is written now is what it wrote,
byte for byte in the file and column for column in PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import psycopg

from surveyctl.state import SurveyRecord
from surveyctl.state.changes import Change, Edit, Entry
from surveyctl.state.file.changelog import encode, encode_status, read_history_file
from surveyctl.state.status_changes import MADE, StatusChange, StatusSet, from_history

from .conftest import open_staging

# The history of tests/state/data/earlier: writes, then status changes of a managed survey,
# of a survey the state does not manage, and of a transaction, as the last release wrote them.
LAST_RELEASE = Path(__file__).parent / "data" / "earlier" / "7c955c6" / "sandbox.history.jsonl"
DRAFT, LIVE = 11, 22


def test_every_line_the_last_release_wrote_is_written_again_byte_for_byte():
    lines = LAST_RELEASE.read_bytes().splitlines(keepends=True)
    again = []
    for line in lines:
        parsed = json.loads(line)
        status = from_history(parsed, LAST_RELEASE)
        again.append(encode_status([status]) if status else encode(Change.from_json(parsed, "")))
    assert again == lines


def test_the_status_changes_the_last_release_wrote_read_back_as_they_were():
    _, statuses = read_history_file(LAST_RELEASE)
    assert [
        (s.serial, s.who, s.command, s.address, s.what.survey_id, s.what.transaction_id,
         s.what.from_status, s.what.to_status, s.what.outcome)
        for s in statuses
    ] == [
        (7, "ann", "status", "Survey/tracker-us", 10002, None, 11, 22, "made"),
        (7, "ann", "status", None, 10007, None, 22, 33, "made"),
        (7, "ci@runner", "transactions set-status", "Survey/tracker-us", 10002,
         "0b6c9a5e-4f0d-4d9e-9d53-2b7d1f2e8a10", 16, 21, "made_answer_lost"),
        (7, "ci@runner", "status", None, 10007, None, None, 44, "may_have_been_made"),
    ]  # fmt: skip


def test_a_status_change_line_has_the_keys_of_a_write_line_in_their_order():
    status = StatusChange("l-1", 3, "2026-11-30T00:00:00+00:00", "ann", "status", None,
                          StatusSet(4711, LIVE, MADE)).to_json()  # fmt: skip
    write = Change("l-1", 3, "2026-11-30T00:00:00+00:00", "ann", "apply",
                   (Edit("Survey/x", None, Entry(SurveyRecord(4711))),)).to_json()  # fmt: skip
    assert list(status) == list(write)
    assert list(status["changes"][0]) == list(write["changes"][0])


def test_a_write_and_a_status_change_are_kept_as_the_last_release_kept_them(
    staging_project, backend, request
):
    store = open_staging(staging_project)
    store.actor = "ann"
    store.record("Survey/tracker", SurveyRecord(4711))
    store.flush()  # the file backend: the write moves from the change log to the history
    written = store.history()[0].at
    what = StatusSet(4711, LIVE, MADE, from_status=DRAFT, cost="up to $5.00 in US dollars")
    change = store.record_status("status", what)
    lineage = store.current().lineage
    store.close()
    after = (
        '{"status_change":{"address":"Survey/tracker","survey_id":4711,"transaction_id":null,'
        '"from":11,"to":22,"cost":"up to $5.00 in US dollars","outcome":"made"}}'
    )
    added = '{"ps_survey_id":4711,"quota_ids":{},"last_applied":null,"prevent_destroy":false}'
    if backend == "file":
        history = staging_project / ".surveyctl" / "state" / "staging.history.jsonl"
        assert history.read_bytes().splitlines(keepends=True) == [
            f'{{"lineage":"{lineage}","serial":1,"at":"{written}","who":"ann","command":"-",'
            f'"changes":[{{"address":"Survey/tracker","before":null,"after":{added}}}]}}\n'.encode(),
            f'{{"lineage":"{lineage}","serial":1,"at":"{change.at}","who":"ann",'
            f'"command":"status","changes":[{{"address":"Survey/tracker","before":null,'
            f'"after":{after}}}]}}\n'.encode(),
        ]
        return
    postgres = request.getfixturevalue("postgres")
    with psycopg.connect(postgres.dsn()) as connection:  # the json columns keep their text
        rows = connection.execute(
            "SELECT environment, lineage, serial, address, at, who, command, before::text, "
            f"after::text FROM {store.schema}.history ORDER BY id"
        ).fetchall()
    assert [(*row[:4], row[4].astimezone(UTC).isoformat(timespec="seconds"), *row[5:])
            for row in rows] == [
        ("staging", lineage, 1, "Survey/tracker", written, "ann", "-", None, added),
        ("staging", lineage, 1, "Survey/tracker", change.at, "ann", "status", None, after),
    ]  # fmt: skip
