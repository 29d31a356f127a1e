"""Partial survey update: `PATCH /surveys/{id}` with a JSON Patch list (public facts)."""

from __future__ import annotations

import pytest


def _patch(raw, survey_id: int, operations) -> object:
    return raw.v2("PATCH", f"/surveys/{survey_id}", json=operations)


def _replace(path: str, value) -> list[dict]:
    return [{"op": "replace", "path": path, "value": value}]


@pytest.mark.parametrize(
    ("path", "value"),
    [("/completes_required", 2000), ("/offer_price", 3.25), ("/is_dq_enable", True)],
)
def test_a_documented_replace_changes_the_survey(raw, path, value):
    survey_id = raw.create()["ps_survey_id"]
    response = _patch(raw, survey_id, _replace(path, value))
    assert response.status_code == 200, response.text
    assert response.json()[path[1:]] == value
    assert raw.v2("GET", f"/surveys/{survey_id}").json()[path[1:]] == value


def test_fields_the_patch_does_not_name_stay_as_they_were(raw):
    created = raw.create(buyer_message="keep me")
    patched = _patch(raw, created["ps_survey_id"], _replace("/survey_title", "Renamed")).json()
    assert patched["buyer_message"] == "keep me"
    assert [q["ps_quota_id"] for q in patched["quotas"]] == [
        q["ps_quota_id"] for q in created["quotas"]
    ]


def test_several_operations_apply_in_order(raw):
    survey_id = raw.create()["ps_survey_id"]
    operations = [
        {"op": "add", "path": "/subscriber_emails/-", "value": "ops@example.com"},
        {"op": "copy", "from": "/subscriber_emails/0", "path": "/subscriber_emails/-"},
        {"op": "remove", "path": "/quotas/1"},
    ]
    patched = _patch(raw, survey_id, operations).json()
    assert patched["subscriber_emails"] == ["ops@example.com", "ops@example.com"]
    assert [q["buyer_quota_id"] for q in patched["quotas"]] == ["male"]


def test_an_empty_patch_list_changes_nothing(raw):
    created = raw.create()
    response = _patch(raw, created["ps_survey_id"], [])
    assert response.status_code == 200
    assert response.json()["survey_title"] == created["survey_title"]


@pytest.mark.parametrize(
    "body",
    [
        {"op": "replace", "path": "/survey_title", "value": "x"},
        {"completes_required": 2000},
        [{"op": "replace", "path": "/survey_title"}],
        [{"op": "rename", "path": "/survey_title", "value": "x"}],
        [{"op": "move", "path": "/survey_title"}],
        ["replace /survey_title"],
        [{"op": "replace", "path": "survey_title", "value": "not a JSON Pointer"}],
    ],
)
def test_a_body_that_is_not_a_patch_list_is_a_400(raw, body):
    survey_id = raw.create()["ps_survey_id"]
    response = _patch(raw, survey_id, body)
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1004


@pytest.mark.parametrize(
    "operations",
    [
        [{"op": "replace", "path": "/no_such_field", "value": 1}],
        [{"op": "remove", "path": "/quotas/7"}],
        [{"op": "test", "path": "/completes_required", "value": 5}],
    ],
)
def test_a_patch_that_cannot_be_applied_is_a_409_and_changes_nothing(raw, operations):
    created = raw.create()
    response = _patch(raw, created["ps_survey_id"], operations)
    assert response.status_code == 409
    assert response.json()["ps_api_response_code"] == 1028
    after = raw.v2("GET", f"/surveys/{created['ps_survey_id']}").json()
    assert after["completes_required"] == created["completes_required"]


def test_a_failed_test_operation_undoes_the_operations_before_it(raw):
    created = raw.create()
    operations = [*_replace("/survey_title", "Changed"), *_replace("/field_time", 3)]
    operations.append({"op": "test", "path": "/field_time", "value": 99})
    assert _patch(raw, created["ps_survey_id"], operations).status_code == 409
    after = raw.v2("GET", f"/surveys/{created['ps_survey_id']}").json()
    assert (after["survey_title"], after["field_time"]) == (created["survey_title"], 14)


@pytest.mark.parametrize("path", ["/ps_survey_status", "/ps_survey_id", "/estimated_clicks"])
def test_a_field_the_buyer_cannot_set_is_refused(raw, path):
    survey_id = raw.create()["ps_survey_id"]
    response = _patch(raw, survey_id, _replace(path, 44))
    assert response.status_code == 409
    assert path[1:] in response.json()["ps_api_response_message"]


def test_a_patched_value_breaking_the_update_schema_names_the_field(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = _patch(raw, survey_id, _replace("/completes_required", -5))
    assert response.status_code == 400
    assert "completes_required" in response.json()["ps_api_response_message"]


def test_a_strict_sandbox_refuses_an_unknown_field_a_patch_adds_inside_a_quota(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    operations = [{"op": "add", "path": "/quotas/0/foo", "value": 1}]
    response = _patch(strict_raw, survey_id, operations)
    assert response.status_code == 400
    assert response.json() == {
        "ps_api_response_code": 1004,
        "ps_api_response_message": "invalid request body: unknown field quotas[0].foo",
    }


def test_a_faithful_sandbox_ignores_an_unknown_field_a_patch_adds_inside_a_quota(raw):
    survey_id = raw.create()["ps_survey_id"]
    operations = [{"op": "add", "path": "/quotas/0/foo", "value": 1}]
    response = _patch(raw, survey_id, operations)
    assert response.status_code == 200, response.text
    assert "foo" not in raw.v2("GET", f"/surveys/{survey_id}").json()["quotas"][0]


@pytest.mark.parametrize("client", ["raw", "strict_raw"])
def test_a_null_a_put_refuses_is_refused_in_a_patch_naming_the_field(request, client):
    raw = request.getfixturevalue(client)
    survey_id = raw.create(is_dq_enable=True)["ps_survey_id"]
    response = _patch(raw, survey_id, _replace("/is_dq_enable", None))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1004
    assert "is_dq_enable" in response.json()["ps_api_response_message"]
    assert raw.v2("GET", f"/surveys/{survey_id}").json()["is_dq_enable"] is True


def test_a_null_a_put_takes_is_taken_by_a_patch(raw):
    survey_id = raw.create(buyer_message="drop me")["ps_survey_id"]
    response = _patch(raw, survey_id, _replace("/buyer_message", None))
    assert response.status_code == 200, response.text
    assert response.json()["buyer_message"] is None


def test_the_rules_of_a_put_hold_for_a_patch(raw, live_survey):
    survey_id = live_survey()
    qbp = {"enable": True, "quota_ids": ["male"]}
    response = _patch(raw, survey_id, [{"op": "replace", "path": "/qbp", "value": qbp}])
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1007


def test_a_patch_keeps_the_survey_in_its_exclusion_groups(raw, fresh_ref):
    survey_id = raw.create()["ps_survey_id"]
    ref = fresh_ref()
    group = {"buyer_surveygroup_ref": ref, "name": "G", "exclusion_period": 7,
             "surveys_in_group": [survey_id]}  # fmt: skip
    assert raw.v2("POST", "/surveygroups", json=group).status_code == 201
    patched = _patch(raw, survey_id, _replace("/survey_title", "Still grouped")).json()
    assert patched["buyer_surveygroup_refs"] == [ref]


def test_another_buyers_survey_answers_403_and_an_unknown_one_404(raw, raw2):
    survey_id = raw.create()["ps_survey_id"]
    forbidden = _patch(raw2, survey_id, _replace("/survey_title", "Mine now"))
    missing = _patch(raw, 999999999, _replace("/survey_title", "x"))
    assert (forbidden.status_code, forbidden.json()["ps_api_response_code"]) == (403, 1020)
    assert (missing.status_code, missing.json()["ps_api_response_code"]) == (404, 1006)
