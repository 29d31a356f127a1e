"""The client's calls for the operations the spec names by method only, against the sandbox."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from surveyctl.errors import ApiError
from surveyctl.sandbox.query import PACIFIC

from .conftest import QLC


def test_patch_survey_sends_a_json_patch_list(api, new_survey):
    survey_id = new_survey()
    patched = api.patch_survey(
        survey_id, [{"op": "replace", "path": "/completes_required", "value": 2000}]
    )
    assert patched["completes_required"] == 2000
    assert api.get_survey(survey_id)["completes_required"] == 2000


def test_a_refused_patch_raises_with_the_services_code(api, new_survey):
    with pytest.raises(ApiError) as refused:
        api.patch_survey(new_survey(), [{"op": "remove", "path": "/nothing"}])
    assert (refused.value.status, refused.value.code) == (409, 1028)


def test_survey_performance_reads_the_report(api, new_survey):
    report = api.survey_performance(new_survey())
    assert report["completes_goal"] == 100 and report["completes_fielded"] == 0


def test_survey_performance_of_an_unknown_survey_raises_the_documented_404(api):
    with pytest.raises(ApiError) as missing:
        api.survey_performance(999999999)
    assert (missing.value.status, missing.value.code) == (404, 1006)
    assert "Survey not found" in str(missing.value)


def test_quotas_are_added_patched_and_deleted_one_at_a_time(api, new_survey):
    survey_id = new_survey()
    added = api.add_quota(survey_id, {"buyer_quota_id": "extra", "required_count": 20,
                                      "criteria": [{"qualification_code": 211,
                                                    "condition_codes": ["113"]}]})  # fmt: skip
    patched = api.patch_quota(
        survey_id, "extra", [{"op": "replace", "path": "/current_target", "value": 10}]
    )
    assert (patched["ps_quota_id"], patched["current_target"]) == (added["ps_quota_id"], 10)
    api.delete_quota(survey_id, "extra")
    assert [q["buyer_quota_id"] for q in api.get_survey(survey_id)["quotas"]] == ["male", "female"]


def test_list_surveys_without_a_status_reads_every_status_and_page(api, new_survey):
    draft, live = new_survey(), new_survey(live=True)
    listed = [s["ps_survey_id"] for s in api.list_surveys(limit=2)]
    assert {draft, live} <= set(listed)
    assert len(listed) == len(set(listed))


def test_list_surveys_applies_the_status_filter(api, new_survey):
    draft, live = new_survey(), new_survey(live=True)
    listed = {s["ps_survey_id"] for s in api.list_surveys(22)}
    assert live in listed and draft not in listed


def test_list_surveys_takes_dates_and_leaves_out_targeting(api, new_survey):
    survey_id = new_survey()
    today = datetime.now(PACIFIC).date()
    listed = api.list_surveys(11, from_date=today, to_date=today.strftime("%Y%m%d"),
                              targeting=False)  # fmt: skip
    item = next(s for s in listed if s["ps_survey_id"] == survey_id)
    assert "quotas" not in item
    assert survey_id not in {
        s["ps_survey_id"] for s in api.list_surveys(11, to_date=today - timedelta(days=1))
    }


def test_a_page_counts_one_more_when_full_and_the_header_is_missing(api, new_survey):
    new_survey(), new_survey()
    items, total = api.get_surveys_page(page=1, status=11, limit=1)
    assert len(items) == 1 and total >= 2


def test_set_transaction_status_records_a_qlc_complete(api, new_survey, held):
    survey_id = new_survey(live=True, qlc=QLC)
    transaction_id = held(survey_id)[0]
    api.set_transaction_status(survey_id, transaction_id, 21, ["female"])
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 21
    fielded = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert fielded == {"male": 0, "female": 1}


def test_a_refused_status_raises_with_the_calls_own_error_code(api, new_survey, held):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    with pytest.raises(ApiError) as refused:
        api.set_transaction_status(survey_id, transaction_id, 16)
    assert (refused.value.status, refused.value.code) == (400, 1001)
    assert "incorrect status code" in str(refused.value)


@pytest.mark.parametrize("transaction_id", ["", ".", ".."])
def test_an_id_a_url_path_cannot_carry_is_refused_before_anything_is_sent(transaction_id):
    from surveyctl.api import ApiClient
    from surveyctl.api.paths import UnaddressableId

    # Nothing listens there: a request sent would fail with a connection error instead.
    with ApiClient("http://127.0.0.1:9", "sandbox-buyer-1", retries=0) as client:
        with pytest.raises(UnaddressableId, match="cannot be sent as an id in a URL path"):
            client.get_transaction(10001, transaction_id)
        with pytest.raises(UnaddressableId):
            client.update_quota(10001, transaction_id, {"required_count": 5})
