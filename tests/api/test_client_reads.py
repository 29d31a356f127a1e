"""The client's read calls the public material names (quota list, one quota, survey status),
and the fieldwork view reading the status call instead of the whole survey."""

from __future__ import annotations

import pytest

from surveyctl.errors import ApiError
from surveyctl.ops.fieldwork import fieldwork

CRITERIA = [{"qualification_code": 211, "condition_codes": ["111"]}]


def _quotas(count: int) -> list[dict]:
    return [
        {"buyer_quota_id": f"q{n}", "quota_title": f"Quota {n}", "required_count": 10,
         "criteria": CRITERIA}
        for n in range(count)
    ]  # fmt: skip


def test_list_quotas_reads_every_page(api, new_survey):
    survey_id = new_survey(quotas=_quotas(5))
    quotas = api.list_quotas(survey_id, limit=2)
    assert [q["buyer_quota_id"] for q in quotas] == ["q0", "q1", "q2", "q3", "q4"]
    assert api.request_counts["GET quotas"] == 3


def test_list_quotas_shows_titles_and_criteria(api, new_survey):
    survey_id = new_survey(quotas=_quotas(1))
    (quota,) = api.list_quotas(survey_id)
    assert (quota["quota_title"], quota["criteria"]) == ("Quota 0", CRITERIA)


def test_get_quota_reads_one_quota_with_its_current_target(api, new_survey):
    survey_id = new_survey(quotas=_quotas(2))
    quota = api.get_quota(survey_id, "q1")
    assert (quota["buyer_quota_id"], quota["current_target"]) == ("q1", 10)


def test_get_quota_of_an_unknown_quota_raises_404(api, new_survey):
    with pytest.raises(ApiError) as missing:
        api.get_quota(new_survey(), "nobody")
    assert missing.value.status == 404


def test_get_survey_status_reads_the_status(api, new_survey):
    survey_id = new_survey(live=True)
    assert api.get_survey_status(survey_id)["ps_survey_status"] == 22


def test_fieldwork_reads_the_status_call_not_the_whole_survey(api, new_survey):
    survey_id = new_survey(live=True)
    view = fieldwork(api, survey_id)
    assert (view.status, view.goal) == (22, 100)
    assert api.request_counts.get("GET survey_status") == 1
    assert "GET survey" not in api.request_counts
