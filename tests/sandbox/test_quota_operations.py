"""Adding, deleting and partly updating one quota (spec 4.11 by name; public facts)."""

from __future__ import annotations

import pytest

FEMALE = [{"qualification_code": 211, "condition_codes": ["112"]}]


def _quota(buyer_quota_id: str, required_count: int = 30, criteria=None) -> dict:
    return {"buyer_quota_id": buyer_quota_id, "required_count": required_count,
            "criteria": criteria or FEMALE}  # fmt: skip


def _quotas_of(raw, survey_id: int) -> dict[str, dict]:
    body = raw.v2("GET", f"/surveys/{survey_id}").json()
    return {q["buyer_quota_id"]: q for q in body["quotas"]}


def _internals(raw, survey_id: int) -> dict[str, dict]:
    rows = raw("GET", f"/sandbox/surveys/{survey_id}/quotas").json()
    return {row["buyer_quota_id"]: row for row in rows}


def test_an_added_quota_answers_201_with_its_ids_and_joins_the_survey(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("POST", f"/surveys/{survey_id}/quotas", json=_quota("women-extra"))
    assert response.status_code == 201, response.text
    added = response.json()
    assert added["buyer_quota_id"] == "women-extra" and len(added["ps_quota_id"]) == 36
    assert added["current_target"] == 30
    assert _quotas_of(raw, survey_id)["women-extra"]["ps_quota_id"] == added["ps_quota_id"]


def test_a_quota_id_the_survey_has_already_cannot_be_added(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("POST", f"/surveys/{survey_id}/quotas", json=_quota("male"))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1009


def test_an_added_quota_is_checked_against_the_catalogue(raw):
    survey_id = raw.create()["ps_survey_id"]
    bad = _quota("x", criteria=[{"qualification_code": 211, "condition_codes": ["999"]}])
    response = raw.v2("POST", f"/surveys/{survey_id}/quotas", json=bad)
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1018


def test_a_deleted_quota_answers_204_and_leaves_the_survey(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("DELETE", f"/surveys/{survey_id}/quotas/female")
    assert response.status_code == 204 and response.content == b""
    assert list(_quotas_of(raw, survey_id)) == ["male"]


def test_deleting_an_unknown_quota_is_a_404(raw):
    survey_id = raw.create()["ps_survey_id"]
    assert raw.v2("DELETE", f"/surveys/{survey_id}/quotas/nope").status_code == 404


def test_a_quota_priced_by_qbp_cannot_be_deleted(raw):
    survey_id = raw.create(qbp={"enable": True, "quota_ids": ["male"]})["ps_survey_id"]
    response = raw.v2("DELETE", f"/surveys/{survey_id}/quotas/male")
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1008


def test_the_last_quota_of_a_qlc_survey_cannot_be_deleted(raw, make_body):
    qlc = {"enable": True, "multiple_quotas": {"enable": True}}
    survey_id = raw.create(qlc=qlc, quotas=make_body()["quotas"][:1])["ps_survey_id"]
    response = raw.v2("DELETE", f"/surveys/{survey_id}/quotas/male")
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1014


def test_a_patch_sets_the_current_target(raw):
    survey_id = raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": "/current_target", "value": 25}]
    response = raw.v2("PATCH", f"/surveys/{survey_id}/quotas/male", json=operations)
    assert response.status_code == 200, response.text
    assert response.json()["current_target"] == 25
    assert _internals(raw, survey_id)["male"]["current_target"] == 25


def test_a_current_target_above_required_count_is_refused(raw):
    survey_id = raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": "/current_target", "value": 61}]
    response = raw.v2("PATCH", f"/surveys/{survey_id}/quotas/male", json=operations)
    assert response.status_code == 400
    assert "current_target" in response.json()["ps_api_response_message"]
    assert _internals(raw, survey_id)["male"]["current_target"] == 60


def test_a_patch_of_required_count_moves_the_current_target_like_a_put(raw):
    survey_id = raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": "/required_count", "value": 40},
                  {"op": "replace", "path": "/quota_title", "value": "Men"}]  # fmt: skip
    patched = raw.v2("PATCH", f"/surveys/{survey_id}/quotas/male", json=operations).json()
    assert (patched["required_count"], patched["current_target"]) == (40, 40)
    assert _quotas_of(raw, survey_id)["male"]["quota_title"] == "Men"


def test_a_quota_patch_to_a_null_a_quota_put_refuses_is_refused(raw):
    survey_id = raw.create(quotas=[{**_quota("male"), "quota_title": "Men"}])["ps_survey_id"]
    operations = [{"op": "replace", "path": "/quota_title", "value": None}]
    response = raw.v2("PATCH", f"/surveys/{survey_id}/quotas/male", json=operations)
    assert response.status_code == 400
    assert "quota_title" in response.json()["ps_api_response_message"]
    assert _quotas_of(raw, survey_id)["male"]["quota_title"] == "Men"


@pytest.mark.parametrize("path", ["/buyer_quota_id", "/ps_quota_id"])
def test_a_patch_cannot_change_a_quotas_identity(raw, path):
    survey_id = raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": path, "value": "renamed"}]
    response = raw.v2("PATCH", f"/surveys/{survey_id}/quotas/male", json=operations)
    assert response.status_code == 409
    assert response.json()["ps_api_response_code"] == 1028


def test_per_quota_writes_on_another_buyers_survey_answer_403(raw, raw2):
    survey_id = raw.create()["ps_survey_id"]
    added = raw2.v2("POST", f"/surveys/{survey_id}/quotas", json=_quota("x"))
    deleted = raw2.v2("DELETE", f"/surveys/{survey_id}/quotas/male")
    assert (added.status_code, deleted.status_code) == (403, 403)
    assert list(_quotas_of(raw, survey_id)) == ["male", "female"]


def test_a_closed_survey_takes_no_quota_changes(raw, live_survey):
    survey_id = live_survey()
    for status in (33, 44):
        raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": status})
    response = raw.v2("POST", f"/surveys/{survey_id}/quotas", json=_quota("late"))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1010


def _performance_quota_by(raw, make_body, way: str):
    """Writes a quota whose buyer_quota_id is `performance` by create, PUT, PATCH or add."""
    quotas = [_quota("performance")]
    if way == "create":
        return raw.v2("POST", "/surveys", json=make_body(quotas=quotas))
    survey_id = raw.create()["ps_survey_id"]
    if way == "put":
        return raw.v2("PUT", f"/surveys/{survey_id}", json=make_body(quotas=quotas))
    if way == "patch":
        operations = [{"op": "add", "path": "/quotas/-", "value": quotas[0]}]
        return raw.v2("PATCH", f"/surveys/{survey_id}", json=operations)
    return raw.v2("POST", f"/surveys/{survey_id}/quotas", json=quotas[0])


@pytest.mark.parametrize("way", ["create", "put", "patch", "add"])
def test_performance_is_refused_as_a_buyer_quota_id_since_its_path_is_the_performance_call(
    raw, make_body, way
):
    response = _performance_quota_by(raw, make_body, way)
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1004
    assert "quota performance call" in response.json()["ps_api_response_message"]
