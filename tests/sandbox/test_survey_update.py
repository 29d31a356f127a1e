"""PUT /surveys/{id} (4.2): a full overwrite; quotas keep their identity by buyer_quota_id."""

from __future__ import annotations


def test_a_field_left_out_of_the_put_goes_back_to_its_default(api, make_body):
    created = api.create_survey(make_body(buyer_message="hello", offer_price=3.0, incl_excl=0))
    updated = api.update_survey(created["ps_survey_id"], make_body())
    assert updated["buyer_message"] is None
    assert updated["offer_price"] is None


def test_nothing_is_merged_from_the_old_qualifications(api, make_body):
    created = api.create_survey(make_body())
    updated = api.update_survey(created["ps_survey_id"], make_body(qualifications=[]))
    assert updated["qualifications"] == []


def test_the_update_response_adds_mcqb(api, make_body):
    created = api.create_survey(make_body())
    assert api.update_survey(created["ps_survey_id"], make_body())["mcqb"] == []


def test_a_put_needs_the_required_fields_too(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(live_url=None))
    assert response.status_code == 400
    assert "live_url" in response.json()["ps_api_response_message"]


def test_a_quota_matched_by_buyer_quota_id_keeps_its_ps_quota_id_and_completes(
    api, store, make_body
):
    created = api.create_survey(make_body())
    survey_id = created["ps_survey_id"]
    store.record_complete(survey_id, ["male"])
    body = make_body()
    body["quotas"][0]["required_count"] = 70
    updated = api.update_survey(survey_id, body)
    before = {q["buyer_quota_id"]: q["ps_quota_id"] for q in created["quotas"]}
    after = {q["buyer_quota_id"]: q["ps_quota_id"] for q in updated["quotas"]}
    assert after == before
    assert store.survey(survey_id).quotas[0].completes == 1


def test_quotas_left_out_are_removed_and_new_ones_get_new_ids(api, make_body):
    created = api.create_survey(make_body())
    body = make_body()
    body["quotas"] = [
        body["quotas"][0],
        {"buyer_quota_id": "all", "required_count": 5, "criteria": []},
    ]
    updated = api.update_survey(created["ps_survey_id"], body)
    assert [q["buyer_quota_id"] for q in updated["quotas"]] == ["male", "all"]
    old_ids = {q["ps_quota_id"] for q in created["quotas"]}
    assert updated["quotas"][1]["ps_quota_id"] not in old_ids


def test_a_ps_quota_id_sent_back_by_the_client_does_not_change_the_quota(api, make_body):
    created = api.create_survey(make_body())
    body = make_body()
    body["quotas"][0]["ps_quota_id"] = "00000000-0000-0000-0000-000000000000"
    updated = api.update_survey(created["ps_survey_id"], body)
    assert updated["quotas"][0]["ps_quota_id"] == created["quotas"][0]["ps_quota_id"]


def test_a_closed_survey_cannot_be_overwritten(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    for status in (22, 33, 44):
        moved = raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": status})
        assert moved.status_code == 200
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body())
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1010
