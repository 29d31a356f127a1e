"""Quota level complete (2.7) and quota based pricing (2.6) rules."""

from __future__ import annotations

QLC_ON = {"enable": True, "multiple_quotas": {"enable": True}}
# The service's own words (public facts).
QLC_NEEDS_QUOTAS = (
    "QLC can only be turned on if there are quotas. Please set QLC to false, or add quotas in "
    "order to launch this survey."
)


def _go_live(raw, survey_id: int) -> None:
    response = raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": 22})
    assert response.status_code == 200


def test_qlc_without_quotas_is_refused_with_1014_and_the_documented_message(raw, make_body):
    response = raw.v2("POST", "/surveys", json=make_body(qlc=QLC_ON, quotas=[]))
    assert response.status_code == 400
    assert response.json() == {
        "ps_api_response_code": 1014,
        "ps_api_response_message": QLC_NEEDS_QUOTAS,
    }


def test_qbp_without_quotas_is_refused_with_1007(raw, make_body):
    response = raw.v2("POST", "/surveys", json=make_body(qbp={"enable": True}, quotas=[]))
    assert response.status_code == 400
    assert response.json() == {
        "ps_api_response_code": 1007,
        "ps_api_response_message": "QBP can be enabled with quotas only.",
    }


def test_qlc_with_quotas_is_accepted_and_echoed(raw):
    survey = raw.create(qlc=QLC_ON)
    assert survey["qlc"]["enable"] is True
    assert survey["qlc"]["multiple_quotas"]["enable"] is True


def test_qlc_needs_multiple_quotas_enabled(raw, make_body):
    response = raw.v2("POST", "/surveys", json=make_body(qlc={"enable": True}))
    assert response.status_code == 400
    assert "multiple_quotas.enable" in response.json()["ps_api_response_message"]


def test_no_qlc_option_may_be_true_while_qlc_is_off(raw, make_body):
    qlc = {"enable": False, "multiple_quotas": {"count_by_quota": True}}
    response = raw.v2("POST", "/surveys", json=make_body(qlc=qlc))
    assert response.status_code == 400
    assert "count_by_quota" in response.json()["ps_api_response_message"]


def test_qlc_may_change_while_the_survey_is_a_draft(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(qlc=QLC_ON))
    assert response.status_code == 200
    assert response.json()["qlc"]["enable"] is True


def test_qlc_cannot_change_once_the_survey_has_been_live(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    _go_live(raw, survey_id)
    raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": 33})
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(qlc=QLC_ON))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1017


def test_an_unchanged_qlc_is_fine_after_going_live(raw, make_body):
    survey_id = raw.create(qlc=QLC_ON)["ps_survey_id"]
    _go_live(raw, survey_id)
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(qlc=QLC_ON, field_time=20))
    assert response.status_code == 200


def test_qbp_quota_ids_must_name_quotas_of_the_survey(raw, make_body):
    qbp = {"enable": True, "quota_ids": ["male", "ghost"]}
    response = raw.v2("POST", "/surveys", json=make_body(qbp=qbp))
    assert response.status_code == 400
    assert "ghost" in response.json()["ps_api_response_message"]


def test_qbp_is_echoed_with_its_quota_ids(raw):
    survey = raw.create(qbp={"enable": True, "quota_ids": ["male"]})
    assert survey["qbp"] == {"enable": True, "quota_ids": ["male"]}


def test_qbp_cannot_change_once_the_survey_is_not_a_draft(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    _go_live(raw, survey_id)
    qbp = {"enable": True, "quota_ids": ["male"]}
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(qbp=qbp))
    assert response.status_code == 400
    assert response.json() == {
        "ps_api_response_code": 1007,
        "ps_api_response_message": "QBP changes are allowed in draft surveys only.",
    }


def test_qbp_may_change_while_the_survey_is_a_draft(raw, make_body):
    survey_id = raw.create()["ps_survey_id"]
    qbp = {"enable": True, "quota_ids": ["female"]}
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(qbp=qbp))
    assert response.status_code == 200
    assert response.json()["qbp"]["quota_ids"] == ["female"]
