"""The survey list's documented filters: status (live by default), fromDate/toDate (YYYYMMDD,
Pacific time), targeting=0, page and limit."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from surveyctl.sandbox.query import PACIFIC


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.text
    return [survey["ps_survey_id"] for survey in response.json()]


def _pacific_today() -> str:
    return datetime.now(PACIFIC).strftime("%Y%m%d")


def test_without_a_status_the_list_holds_live_surveys_only(raw, live_survey):
    draft, live = raw.create()["ps_survey_id"], live_survey()
    listed = _ids(raw.v2("GET", "/surveys?limit=1000"))
    assert live in listed and draft not in listed


def test_a_status_selects_the_surveys_in_it(raw, live_survey):
    draft, live = raw.create()["ps_survey_id"], live_survey()
    listed = _ids(raw.v2("GET", "/surveys?status=11&limit=1000"))
    assert draft in listed and live not in listed


def test_several_statuses_may_be_asked_for_at_once(raw, live_survey):
    draft, live = raw.create()["ps_survey_id"], live_survey()
    listed = _ids(raw.v2("GET", "/surveys?status=11,22&limit=1000"))
    assert {draft, live} <= set(listed)


def test_the_list_shows_only_the_callers_surveys(raw, raw2):
    mine = raw.create()["ps_survey_id"]
    theirs = raw2.create()["ps_survey_id"]
    listed = _ids(raw2.v2("GET", "/surveys?status=11&limit=1000"))
    assert theirs in listed
    assert mine not in listed


def test_dates_bound_the_creation_day_in_pacific_time(raw):
    survey_id = raw.create()["ps_survey_id"]
    today = _pacific_today()
    yesterday = (datetime.now(PACIFIC) - timedelta(days=1)).strftime("%Y%m%d")
    same_day = f"/surveys?status=11&limit=1000&fromDate={today}&toDate={today}"
    assert survey_id in _ids(raw.v2("GET", same_day))
    assert survey_id not in _ids(raw.v2("GET", f"/surveys?status=11&toDate={yesterday}"))
    tomorrow = (datetime.now(PACIFIC) + timedelta(days=1)).strftime("%Y%m%d")
    assert _ids(raw.v2("GET", f"/surveys?status=11&fromDate={tomorrow}")) == []


def test_targeting_0_leaves_out_qualifications_and_quotas(raw):
    survey_id = raw.create()["ps_survey_id"]
    items = raw.v2("GET", "/surveys?status=11&targeting=0&limit=1000").json()
    item = next(s for s in items if s["ps_survey_id"] == survey_id)
    assert "qualifications" not in item and "quotas" not in item
    full = raw.v2("GET", "/surveys?status=11&targeting=1&limit=1000").json()
    assert next(s for s in full if s["ps_survey_id"] == survey_id)["quotas"]


def test_pages_split_the_list_and_say_how_many_there_are(raw):
    for _ in range(3):
        raw.create()
    first = raw.v2("GET", "/surveys?status=11&limit=2&page=1")
    total = int(first.headers["total_pages"])
    assert total >= 2 and len(first.json()) == 2
    pages = [
        _ids(raw.v2("GET", f"/surveys?status=11&limit=2&page={p}")) for p in range(1, total + 1)
    ]
    every = [i for page in pages for i in page]
    assert every == sorted(set(every))
    assert _ids(raw.v2("GET", f"/surveys?status=11&limit=2&page={total + 1}")) == []


@pytest.mark.parametrize(
    "query",
    ["status=12", "status=live", "status=11,12", "status=", "status=022", "fromDate=2025-01-01",
     "toDate=20251301", "fromDate=2025010", "targeting=2", "page=0", "limit=0", "limit=1001",
     "page=x"],
)  # fmt: skip
def test_a_malformed_filter_is_a_400(raw, query):
    response = raw.v2("GET", f"/surveys?{query}")
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1005


def _steps_of_a_page(store, status: int) -> int:
    """The SQLite virtual machine's steps to answer page 1 of buyer 1's surveys in `status`."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    with store.read() as conn:
        conn.set_progress_handler(count, 1)
        try:
            store.surveys_page(conn, 1, [status], None, None, 1, 100)
        finally:
            conn.set_progress_handler(None, 1)
    return steps


def _drafts(store, count: int) -> None:
    with store.write() as conn:
        for index in range(count):
            store.insert_survey(conn, 1, {"survey_title": f"Draft {index}"}, [])


def test_a_page_of_one_status_costs_no_more_with_more_surveys_in_other_statuses(tmp_path):
    from surveyctl.sandbox.store import Store

    store = Store(tmp_path / "list.db")
    _drafts(store, 50)
    few = _steps_of_a_page(store, 22)
    _drafts(store, 500)

    assert _steps_of_a_page(store, 22) == few
