"""POST /surveys (4.1): required fields, strict types and fields, and the 2.5 response."""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

import pytest

REQUIRED = [
    "survey_title",
    "survey_category_code",
    "survey_localization",
    "completes_required",
    "expected_ir",
    "expected_loi",
    "live_url",
    "field_time",
]
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_a_created_survey_is_a_draft_with_an_integer_id_and_a_ps_billing_id(raw):
    survey = raw.create()
    assert isinstance(survey["ps_survey_id"], int)
    assert survey["ps_survey_status"] == 11
    assert survey["billing_id"] == f"PS{survey['ps_survey_id']}"


def test_the_create_response_always_carries_the_qlc_object(raw):
    survey = raw.create()
    assert survey["qlc"] == {
        "enable": False,
        "multiple_quotas": {"enable": False, "count_by_quota": False, "compensate_by_quota": False},
    }


def test_absent_test_url_and_offer_price_come_back_as_null(raw):
    survey = raw.create()
    assert survey["test_url"] is None
    assert survey["offer_price"] is None


def test_quotas_get_uuid_shaped_ps_quota_ids(raw):
    quotas = raw.create()["quotas"]
    assert [q["buyer_quota_id"] for q in quotas] == ["male", "female"]
    assert all(UUID.match(q["ps_quota_id"]) for q in quotas)
    assert len({q["ps_quota_id"] for q in quotas}) == 2


def test_the_test_entry_link_is_a_startsurvey_url_in_test_mode(raw):
    survey = raw.create()
    link = urlsplit(survey["test_ps_survey_entry_link"])
    query = parse_qs(link.query)
    assert link.path.endswith("startsurvey")
    assert query["survey_id"] == [str(survey["ps_survey_id"])]
    assert query["ps_redirect_test"] == ["1"]
    assert "supplier_id" in query


def test_the_creation_date_is_an_iso_8601_timestamp(raw):
    created = raw.create()["project_creation_date"]
    assert datetime.fromisoformat(created).tzinfo is not None


def test_a_given_billing_id_is_kept(raw):
    assert raw.create(billing_id="PO-77")["billing_id"] == "PO-77"


def _create_refusal(raw, body) -> str:
    """The message of the 400 that a create of `body` is answered with."""
    response = raw.v2("POST", "/surveys", json=body)
    assert response.status_code == 400
    return response.json()["ps_api_response_message"]


@pytest.mark.parametrize("field", REQUIRED)
def test_a_missing_required_field_is_refused_naming_it(raw, make_body, field):
    assert field in _create_refusal(raw, make_body(**{field: None}))


def test_a_field_of_the_wrong_type_is_refused_naming_its_path(raw, make_body):
    body = make_body()
    body["quotas"][1]["required_count"] = "sixty"
    assert "quotas[1].required_count" in _create_refusal(raw, body)


def test_a_boolean_is_not_accepted_as_an_integer(raw, make_body):
    assert "completes_required" in _create_refusal(raw, make_body(completes_required=True))


def test_unknown_fields_are_refused_naming_them_in_strict_mode(strict_raw, make_body):
    message = _create_refusal(strict_raw, make_body(colour="red", size=3))
    assert "colour" in message and "size" in message


def test_an_unknown_field_inside_a_quota_is_refused_with_its_path_in_strict_mode(
    strict_raw, make_body
):
    body = make_body()
    body["quotas"][0]["colour"] = "red"
    assert "quotas[0].colour" in _create_refusal(strict_raw, body)


def test_unknown_fields_are_accepted_and_not_kept_by_default(raw, make_body):
    body = make_body(colour="red")
    body["quotas"][0]["size"] = 3
    created = raw.v2("POST", "/surveys", json=body)
    assert created.status_code == 201
    shown = raw.v2("GET", f"/surveys/{created.json()['ps_survey_id']}").json()
    assert "colour" not in shown and "size" not in shown["quotas"][0]


def test_a_body_that_is_not_json_is_refused(raw):
    response = raw.v2(
        "POST", "/surveys", data="survey_title=x", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 400


def test_two_quotas_with_the_same_buyer_quota_id_are_refused(raw, make_body):
    body = make_body()
    body["quotas"][1]["buyer_quota_id"] = "male"
    assert "male" in _create_refusal(raw, body)


def test_get_returns_the_same_body_as_the_create_response(api, make_body):
    created = api.create_survey(make_body(offer_price=2.5))
    assert api.get_survey(created["ps_survey_id"]) == created


def test_the_list_holds_the_buyers_surveys_and_not_the_other_buyers(
    api, other_buyer_api, make_body
):
    mine = api.create_survey(make_body())["ps_survey_id"]
    theirs = other_buyer_api.create_survey(make_body())["ps_survey_id"]
    listed = {s["ps_survey_id"] for s in api.list_surveys()}
    assert mine in listed
    assert theirs not in listed


def test_a_deleted_survey_is_gone(raw):
    survey_id = raw.create()["ps_survey_id"]
    assert raw.v2("DELETE", f"/surveys/{survey_id}").status_code == 204
    assert raw.v2("GET", f"/surveys/{survey_id}").status_code == 404
