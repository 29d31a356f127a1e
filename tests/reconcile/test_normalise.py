"""Normalisation: what the service and a manifest spell differently must compare equal."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from surveyctl.fields import (
    GROUP_FIELDS,
    QUOTA_RESPONSE_ONLY_FIELDS,
    QUOTA_UPDATE_FIELDS,
    RESPONSE_ONLY_FIELDS,
    UPDATE_FIELDS,
)
from surveyctl.reconcile.normalise import (
    group_update_body,
    normalise_group,
    normalise_survey,
    update_body,
)
from surveyctl.schemafiles import load_schema

LIVE = {
    "ps_survey_id": 4711,
    "ps_survey_status": 11,
    "survey_title": "Brand tracker",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1000,
    "expected_ir": 40.0,
    "expected_loi": 12,
    "offer_price": 2.5,
    "field_time": 14,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "test_url": None,
    "buyer_message": None,
    "billing_id": "PS4711",
    "estimated_clicks": 2500,
    "soft_launch": {"enable": False},
    "unique_links": {"enable": False},
    "uniqueLinks": False,
    "survey_external_id": "",
    "test_ps_survey_entry_link": "https://example.com/startsurvey?survey_id=4711",
    "project_creation_date": "2026-11-21T10:00:00Z",
    "dq_settings": {"corescore_filter_enabled": False},
    "mcqb": [],
    "buyer_surveygroup_ref": None,
    "buyer_surveygroup_refs": [],
    "qlc": {
        "enable": False,
        "multiple_quotas": {"enable": False, "count_by_quota": False, "compensate_by_quota": False},
    },
    "qualifications": [
        {"qualification_code": 211, "condition_codes": ["111", "112"]},
        {"qualification_code": 212, "range_sets": [{"from": 18, "to": 34, "units": 311}]},
    ],
    "quotas": [
        {
            "buyer_quota_id": "male",
            "ps_quota_id": "6f1c0b9e-0000-4000-8000-000000000001",
            "quota_title": "",
            "required_count": 500,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        }
    ],
}

MANIFEST = {
    "survey_title": "Brand tracker",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1000,
    "expected_ir": 40,
    "expected_loi": 12.0,
    "offer_price": 2.5,
    "field_time": 14,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "billing_id": "PS4711",
    "qlc": {"enable": False},
    "qualifications": [
        {"qualification_code": 212, "range_sets": [{"units": 311, "from": 18.0, "to": 34}]},
        {"qualification_code": 211, "condition_codes": [112, "111"]},
    ],
    "quotas": [
        {
            "buyer_quota_id": "male",
            "required_count": 500,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        }
    ],
}


def test_live_response_and_equivalent_manifest_normalise_equal():
    assert normalise_survey(LIVE) == normalise_survey(MANIFEST)


def test_response_only_fields_are_dropped():
    normal = normalise_survey(LIVE)
    assert not set(normal) & RESPONSE_ONLY_FIELDS


def test_ps_quota_id_inside_quotas_is_dropped():
    assert "ps_quota_id" not in normalise_survey(LIVE)["quotas"]["male"]


def test_null_and_empty_equal_absent():
    assert normalise_survey({"survey_title": "A", "buyer_message": None}) == normalise_survey(
        {"survey_title": "A", "buyer_surveygroup_refs": [], "schedule_pause": {}, "test_url": ""}
    )


def test_numbers_compare_by_value():
    assert normalise_survey({"completes_required": 5}) == normalise_survey(
        {"completes_required": 5.0}
    )
    assert normalise_survey({"offer_price": 2.5}) != normalise_survey({"offer_price": 2.0})


def test_condition_codes_compare_as_sets_of_strings():
    one = {"qualifications": [{"qualification_code": 211, "condition_codes": ["112", "111"]}]}
    two = {"qualifications": [{"qualification_code": 211, "condition_codes": [111, 112, 111]}]}
    assert normalise_survey(one) == normalise_survey(two)


def test_changed_condition_codes_still_differ():
    one = {"qualifications": [{"qualification_code": 211, "condition_codes": ["111"]}]}
    two = {"qualifications": [{"qualification_code": 211, "condition_codes": ["112"]}]}
    assert normalise_survey(one) != normalise_survey(two)


def test_quotas_are_keyed_by_buyer_quota_id_and_criteria_by_code():
    normal = normalise_survey(LIVE)
    assert list(normal["quotas"]) == ["male"]
    assert list(normal["quotas"]["male"]["criteria"]) == [211]
    assert list(normal["qualifications"]) == [211, 212]


def test_range_sets_are_order_insensitive():
    ranges = [{"from": 18, "to": 24, "units": 311}, {"from": 35, "to": 44, "units": 311}]
    one = {"qualifications": [{"qualification_code": 212, "range_sets": ranges}]}
    two = {"qualifications": [{"qualification_code": 212, "range_sets": ranges[::-1]}]}
    assert normalise_survey(one) == normalise_survey(two)


def test_qlc_defaults_equal_absent_but_enabled_options_do_not():
    assert normalise_survey({"qlc": LIVE["qlc"]}) == normalise_survey({"qlc": {"enable": False}})
    enabled = {"qlc": {"enable": True, "multiple_quotas": {"enable": True}}}
    assert normalise_survey(enabled) != normalise_survey({"qlc": {"enable": True}})


def test_update_body_keeps_only_update_fields_in_list_form():
    body = update_body(LIVE)
    assert set(body) <= set(UPDATE_FIELDS)
    assert "ps_survey_id" not in body and "soft_launch" not in body
    assert isinstance(body["quotas"], list) and "ps_quota_id" not in body["quotas"][0]
    assert body["quotas"][0]["buyer_quota_id"] == "male"
    assert body["qualifications"] == LIVE["qualifications"]


def test_update_body_leaves_out_nulls():
    body = update_body(LIVE)
    assert "test_url" not in body and "buyer_message" not in body
    assert "buyer_surveygroup_ref" not in body


def test_update_body_does_not_share_objects_with_the_response():
    live = copy.deepcopy(LIVE)
    body = update_body(live)
    body["quotas"][0]["required_count"] = 1
    body["quotas"][0]["criteria"][0]["condition_codes"].append("999")
    body["qualifications"][0]["condition_codes"].append("999")
    assert live == LIVE


def test_update_body_normalises_like_the_response():
    assert normalise_survey(update_body(LIVE)) == normalise_survey(LIVE)


def test_group_normalisation_ignores_survey_order_and_unknown_fields():
    live = {
        "buyer_surveygroup_ref": "g",
        "name": "G",
        "surveys_in_group": [3, 1, 2],
        "exclusion_period": 30,
        "created": "2026-11-21",
    }
    desired = {
        "buyer_surveygroup_ref": "g",
        "name": "G",
        "surveys_in_group": [1, 2, 3],
        "exclusion_period": 30.0,
    }
    assert normalise_group(live) == normalise_group(desired)
    assert group_update_body(live) == {k: v for k, v in live.items() if k != "created"}


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_order_and_number_spelling_never_make_a_difference(random, as_float):
    shuffled = copy.deepcopy(MANIFEST)
    random.shuffle(shuffled["qualifications"])
    for qualification in shuffled["qualifications"]:
        random.shuffle(qualification.get("condition_codes", []))
    if as_float:
        shuffled["completes_required"] = float(shuffled["completes_required"])
    shuffled = dict(random.sample(list(shuffled.items()), len(shuffled)))
    assert normalise_survey(shuffled) == normalise_survey(LIVE)


def _properties(definition: str) -> set[str]:
    return set(load_schema("api/common.json")["$defs"][definition]["properties"])


def test_the_compared_survey_fields_are_the_api_schemas_update_fields():
    assert set(UPDATE_FIELDS) == _properties("survey_body")


def test_every_response_field_outside_the_update_is_dropped_from_comparison():
    assert _properties("survey_response") - _properties("survey_body") <= RESPONSE_ONLY_FIELDS


def test_the_quota_and_group_fields_are_the_api_schemas():
    assert set(QUOTA_UPDATE_FIELDS) | QUOTA_RESPONSE_ONLY_FIELDS == _properties("quota_request")
    assert set(GROUP_FIELDS) == _properties("survey_group")
