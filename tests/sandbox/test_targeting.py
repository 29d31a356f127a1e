"""Survey targeting is checked against the attribute catalogue of the survey's locale."""

from __future__ import annotations

import pytest

AGE_RANGE = {"qualification_code": 212, "range_sets": [{"from": 18, "to": 34, "units": 311}]}


def _refused(raw, body) -> str:
    response = raw.v2("POST", "/surveys", json=body)
    assert response.status_code == 400, response.text
    return response.json()["ps_api_response_message"]


def test_an_unknown_locale_is_refused(raw, make_body):
    assert "xx_XX" in _refused(raw, make_body(survey_localization="xx_XX"))


def test_a_malformed_locale_is_refused_naming_the_closest_known_one(raw, make_body):
    response = raw.v2("POST", "/surveys", json=make_body(survey_localization="en-us"))
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, 1004)
    message = response.json()["ps_api_response_message"]
    assert "survey_localization: 'en-us' is not a known locale (did you mean 'en_US'?)" in message
    assert "en_AU, en_CA, en_GB, en_US" in message


def test_a_qualification_code_missing_from_the_locale_is_refused(raw, make_body):
    body = make_body(qualifications=[{"qualification_code": 98765, "condition_codes": ["1"]}])
    assert "98765" in _refused(raw, body)


def test_a_condition_code_that_is_not_an_answer_is_refused(raw, make_body):
    body = make_body(qualifications=[{"qualification_code": 211, "condition_codes": ["111", "5"]}])
    message = _refused(raw, body)
    assert "qualifications[0].condition_codes" in message
    assert "5" in message


def test_a_quota_criterion_is_checked_too(raw, make_body):
    body = make_body()
    body["quotas"][1]["criteria"] = [{"qualification_code": 211, "condition_codes": ["114"]}]
    assert "quotas[1].criteria[0]" in _refused(raw, body)


def test_ranges_are_accepted_where_the_attribute_takes_ranges(raw):
    survey = raw.create(qualifications=[AGE_RANGE])
    assert survey["qualifications"] == [AGE_RANGE]


def test_ranges_are_refused_on_a_choice_attribute(raw, make_body):
    target = {"qualification_code": 211, "range_sets": [{"from": 1, "to": 2, "units": 311}]}
    assert "ranges" in _refused(raw, make_body(qualifications=[target]))


def test_condition_codes_are_refused_on_a_range_attribute(raw, make_body):
    target = {"qualification_code": 212, "condition_codes": ["18"]}
    assert "range_sets" in _refused(raw, make_body(qualifications=[target]))


def test_a_range_in_the_wrong_units_is_refused(raw, make_body):
    target = {"qualification_code": 212, "range_sets": [{"from": 18, "to": 34, "units": 321}]}
    assert "units" in _refused(raw, make_body(qualifications=[target]))


def test_an_age_range_in_months_is_taken(raw):
    in_months = {"qualification_code": 212, "range_sets": [{"from": 216, "to": 420, "units": 312}]}
    survey = raw.create(qualifications=[in_months])
    assert survey["qualifications"] == [in_months]


def test_months_are_no_units_of_income(raw, make_body):
    target = {"qualification_code": 213, "range_sets": [{"from": 0, "to": 9000, "units": 312}]}
    assert "units" in _refused(raw, make_body(qualifications=[target]))


def test_an_age_range_in_months_screens_respondents_as_the_same_range_in_years(raw, live_survey):
    in_years = {"qualification_code": 212, "range_sets": [{"from": 18, "to": 34, "units": 311}]}
    in_months = {"qualification_code": 212, "range_sets": [{"from": 216, "to": 408, "units": 312}]}
    statuses = []
    for target in (in_years, in_months):
        survey_id = live_survey(qualifications=[target])
        body = {"respondents": 60, "seed": 11, "hold": True}
        response = raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json=body)
        assert response.status_code == 200, response.text
        statuses.append(response.json()["statuses"])
    assert statuses[1] == statuses[0]
    assert statuses[0].get("16")


def test_a_range_that_runs_backwards_is_refused(raw, make_body):
    target = {"qualification_code": 212, "range_sets": [{"from": 40, "to": 18, "units": 311}]}
    assert "from" in _refused(raw, make_body(qualifications=[target]))


def test_a_target_without_codes_or_ranges_is_refused(raw, make_body):
    assert "condition_codes or range_sets" in _refused(
        raw, make_body(qualifications=[{"qualification_code": 211}])
    )


def _simulated_statuses(raw, live_survey, target) -> dict:
    survey_id = live_survey(qualifications=[target])
    body = {"respondents": 60, "seed": 11, "hold": True}
    response = raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json=body)
    assert response.status_code == 200, response.text
    return response.json()["statuses"]


def test_an_empty_condition_codes_list_beside_ranges_is_as_if_absent(raw, make_body, live_survey):
    with_empty_codes = {**AGE_RANGE, "condition_codes": []}
    body = make_body(qualifications=[with_empty_codes])
    assert raw.v2("POST", "/surveys", json=body).status_code == 201
    screened = _simulated_statuses(raw, live_survey, with_empty_codes)
    assert screened == _simulated_statuses(raw, live_survey, AGE_RANGE)
    assert screened.get("16")


def test_an_empty_range_sets_list_beside_condition_codes_is_as_if_absent(raw, make_body):
    target = {"qualification_code": 211, "condition_codes": ["111"], "range_sets": []}
    response = raw.v2("POST", "/surveys", json=make_body(qualifications=[target]))
    assert response.status_code == 201, response.text


def test_an_empty_list_of_the_wrong_kind_alone_still_needs_the_right_kind(raw, make_body):
    target = {"qualification_code": 212, "condition_codes": []}
    message = _refused(raw, make_body(qualifications=[target]))
    assert "attribute 212 takes range_sets" in message


def test_a_strict_sandbox_refuses_an_empty_list_of_the_kind_the_attribute_does_not_take(
    strict_raw, make_body
):
    target = {**AGE_RANGE, "condition_codes": []}
    response = strict_raw.v2("POST", "/surveys", json=make_body(qualifications=[target]))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1018
    assert "takes range_sets, not condition_codes" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize("locale", ["en_GB", "en_CA", "en_AU", "de_DE"])
def test_an_income_range_in_us_dollars_is_taken_in_every_locale(raw, make_body, locale):
    in_usd = {"qualification_code": 213, "range_sets": [{"from": 0, "to": 50000, "units": 321}]}
    body = make_body(survey_localization=locale, qualifications=[in_usd], quotas=[])
    response = raw.v2("POST", "/surveys", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["qualifications"] == [in_usd]


@pytest.mark.parametrize(("locale", "units"), [("en_GB", 323), ("en_AU", 325), ("fr_FR", 322)])
def test_an_income_range_in_the_locales_own_currency_is_taken(raw, make_body, locale, units):
    local = {"qualification_code": 213, "range_sets": [{"from": 0, "to": 50000, "units": units}]}
    body = make_body(survey_localization=locale, qualifications=[local], quotas=[])
    assert raw.v2("POST", "/surveys", json=body).status_code == 201


def test_an_income_range_in_another_markets_currency_is_refused(raw, make_body):
    in_eur = {"qualification_code": 213, "range_sets": [{"from": 0, "to": 50000, "units": 322}]}
    body = make_body(survey_localization="en_GB", qualifications=[in_eur], quotas=[])
    assert "units must be 323 or 321" in _refused(raw, body)
