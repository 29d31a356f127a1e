"""conform: a live body reshaped to the update contract before import writes it."""

from __future__ import annotations

import pytest

from surveyctl.reconcile.conform import SURVEY_UPDATE_SCHEMA, conform, schema_of

UPDATE = schema_of(SURVEY_UPDATE_SCHEMA)


def test_string_range_bounds_become_numbers():
    body = {
        "qualifications": [
            {"qualification_code": 212, "range_sets": [{"from": "21", "to": "45.5", "units": 311}]}
        ]
    }
    ranges = conform(body, UPDATE)["qualifications"][0]["range_sets"]
    assert ranges == [{"from": 21, "to": 45.5, "units": 311}]


def test_fields_the_contract_does_not_list_are_dropped_at_every_level():
    body = {
        "survey_title": "T",
        "mod_on": 1741166851000,
        "quotas": [{"buyer_quota_id": "m", "required_count": 5, "criteria": [], "extra": 1}],
    }
    assert conform(body, UPDATE) == {
        "survey_title": "T",
        "quotas": [{"buyer_quota_id": "m", "required_count": 5, "criteria": []}],
    }


def test_empty_strings_and_nulls_are_left_out():
    body = {
        "buyer_message": None,
        "quotas": [{"buyer_quota_id": "m", "quota_title": "", "required_count": 5, "criteria": []}],
    }
    assert conform(body, UPDATE) == {
        "quotas": [{"buyer_quota_id": "m", "required_count": 5, "criteria": []}]
    }


def test_numbers_keep_their_value_and_take_the_contracts_type():
    body = {"offer_price": 10, "completes_required": 200.0, "survey_category_code": "231"}
    assert conform(body, UPDATE) == {
        "survey_category_code": 231,
        "completes_required": 200,
        "offer_price": 10,
    }


def test_numeric_condition_codes_become_text():
    body = {"qualifications": [{"qualification_code": 211, "condition_codes": [111, "112"]}]}
    codes = conform(body, UPDATE)["qualifications"][0]["condition_codes"]
    assert codes == ["111", "112"]


def test_a_string_that_is_no_number_is_kept_for_validation_to_name():
    body = {"completes_required": "many"}
    assert conform(body, UPDATE) == {"completes_required": "many"}


@pytest.mark.parametrize("text", ["nan", "Infinity", "1_000", "٣"])
def test_text_python_would_read_as_a_number_but_the_service_never_writes_is_kept(text):
    # Written into a manifest as a number, "nan" would be a price no validation names.
    assert conform({"offer_price": text}, UPDATE) == {"offer_price": text}
