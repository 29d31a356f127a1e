"""The times of simulated sessions: none before its survey was created, none leaving before it
entered or after it was simulated."""

from __future__ import annotations

from datetime import UTC, datetime


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_no_simulated_session_enters_before_its_survey_was_created(raw, live_survey):
    survey_id = live_survey(expected_loi=60, completes_required=500)
    created = _time(raw.v2("GET", f"/surveys/{survey_id}").json()["project_creation_date"])
    simulated = raw("POST", f"/sandbox/surveys/{survey_id}/simulate",
                    json={"respondents": 40, "seed": 5})  # fmt: skip
    assert simulated.status_code == 200
    after = datetime.now(UTC)
    rows = raw.v3("GET", f"/surveys/{survey_id}/transactions?limit=1000").json()
    assert len(rows) == 40
    for row in rows:
        entered = _time(row["PS Entry DateTime"])
        assert created <= entered <= after
        for later in ("Buyer Survey Entry Datetime", "PS Exit Datetime"):
            if row[later]:
                assert entered <= _time(row[later]) <= after
