"""PUT /surveys/{id}/quotas/{buyer_quota_id} (4.3), quota performance and quota internals."""

from __future__ import annotations

import pytest

from surveyctl.errors import ApiError

MALE = [{"qualification_code": 211, "condition_codes": ["111"]}]


def _internals(raw, survey_id: int) -> dict[str, dict]:
    response = raw("GET", f"/sandbox/surveys/{survey_id}/quotas")
    assert response.status_code == 200
    return {q["buyer_quota_id"]: q for q in response.json()}


def test_the_quota_update_answers_the_four_fields(api, make_body):
    created = api.create_survey(make_body())
    answer = api.update_quota(
        created["ps_survey_id"], "male", {"required_count": 40, "criteria": MALE}
    )
    assert answer == {
        "buyer_quota_id": "male",
        "ps_quota_id": created["quotas"][0]["ps_quota_id"],
        "required_count": 40,
        "criteria": MALE,
    }
    assert api.get_survey(created["ps_survey_id"])["quotas"][0]["required_count"] == 40


def test_a_negative_required_count_is_refused(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2(
        "PUT", f"/surveys/{survey_id}/quotas/male", json={"required_count": -1, "criteria": MALE}
    )
    assert response.status_code == 400
    assert "required_count" in response.json()["ps_api_response_message"]


def test_an_unknown_quota_answers_404(api, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    with pytest.raises(ApiError) as refused:
        api.update_quota(survey_id, "nobody", {"required_count": 1, "criteria": MALE})
    assert refused.value.status == 404


def test_a_quota_id_with_a_slash_is_addressed_whole(api, make_body):
    body = make_body()
    body["quotas"][0]["buyer_quota_id"] = "m/18-24"
    survey_id = api.create_survey(body)["ps_survey_id"]
    answer = api.update_quota(survey_id, "m/18-24", {"required_count": 9, "criteria": MALE})
    assert answer["buyer_quota_id"] == "m/18-24"


def test_current_target_never_exceeds_required_count(api, raw, make_body):
    body = make_body(completes_required=100)
    body["quotas"][0]["required_count"] = 150
    survey_id = api.create_survey(body)["ps_survey_id"]
    assert _internals(raw, survey_id)["male"]["current_target"] == 100
    api.update_quota(survey_id, "male", {"required_count": 30, "criteria": MALE})
    assert _internals(raw, survey_id)["male"]["current_target"] == 30


def test_a_required_count_at_or_below_the_completes_closes_the_quota(api, raw, store, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    store.record_complete(survey_id, ["male"])
    store.record_complete(survey_id, ["male"])
    api.update_quota(survey_id, "male", {"required_count": 2, "criteria": MALE})
    assert _internals(raw, survey_id)["male"]["open"] is False


def test_a_required_count_above_the_completes_reopens_the_quota(api, raw, store, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    store.record_complete(survey_id, ["male"])
    api.update_quota(survey_id, "male", {"required_count": 1, "criteria": MALE})
    api.update_quota(survey_id, "male", {"required_count": 2, "criteria": MALE})
    internals = _internals(raw, survey_id)["male"]
    assert internals["open"] is True
    assert internals["completes"] == 1


def test_quota_performance_lists_goal_and_fielded_completes(api, store, make_body):
    created = api.create_survey(make_body())
    store.record_complete(created["ps_survey_id"], ["female"])
    performance = api.quota_performance(created["ps_survey_id"])
    assert performance == [
        {
            "ps_quota_id": created["quotas"][0]["ps_quota_id"],
            "buyer_quota_id": "male",
            "completes_goal": 60,
            "completes_fielded": 0,
        },
        {
            "ps_quota_id": created["quotas"][1]["ps_quota_id"],
            "buyer_quota_id": "female",
            "completes_goal": 60,
            "completes_fielded": 1,
        },
    ]


def test_quota_criteria_are_checked_against_the_catalogue(raw):
    survey_id = raw.create()["ps_survey_id"]
    criteria = [{"qualification_code": 211, "condition_codes": ["999"]}]
    response = raw.v2(
        "PUT", f"/surveys/{survey_id}/quotas/male", json={"required_count": 5, "criteria": criteria}
    )
    assert response.status_code == 400
    assert "999" in response.json()["ps_api_response_message"]
