"""Simulated respondent traffic in the sandbox, seen through the Buyer API over HTTP."""

from __future__ import annotations

import hashlib

import pytest
import requests

from surveyctl.errors import ApiError
from surveyctl.ops.links import ReturnLink, build_return_link

from .conftest import BASE_SURVEY, GENDER_QUOTAS

SECRET_1 = "sandbox-secret-1"
# The sandbox's return route takes the buyer's token, like its other routes.
BUYER_1 = {"access-token": "sandbox-buyer-1"}


def _all_transactions(api, survey_id, **filters):
    rows = []
    for page in api.iter_pages(api.get_transactions_page, survey_id=survey_id, **filters):
        rows += page
    return rows


def test_simulated_respondents_are_all_recorded_as_transactions(api, live_survey):
    survey_id = live_survey(quotas=GENDER_QUOTAS)
    result = api.simulate_traffic(survey_id, {"respondents": 120, "seed": 7})
    rows = _all_transactions(api, survey_id, limit=25)
    assert result["respondents"] == 120
    assert len(rows) == 120
    assert len({r["Transaction ID"] for r in rows}) == 120


def test_with_qlc_each_simulated_complete_fills_the_least_filled_quota(api, live_survey):
    quotas = [
        {**GENDER_QUOTAS[0], "required_count": 300},
        {**GENDER_QUOTAS[1], "required_count": 100},
    ]
    qlc = {"enable": True, "multiple_quotas": {"enable": True}}
    survey_id = live_survey(quotas=quotas, qlc=qlc)
    completes = api.simulate_traffic(survey_id, {"respondents": 120, "seed": 7})["completes"]
    fielded = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert completes > 0 and sum(fielded.values()) == completes
    # Least-fill keeps the shares of the goals level: within one complete of each other.
    assert abs(fielded["male"] / 300 - fielded["female"] / 100) <= 1 / 100


def test_transaction_records_carry_every_key_with_its_type(api, live_survey):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 20, "seed": 3})
    item = _all_transactions(api, survey_id)[0]
    single = api.get_transaction(survey_id, item["Transaction ID"])
    assert "Parent ID" in item and "Parent ID" not in single
    assert single["Survey ID"] == survey_id and single["PSID"].startswith("SBX")
    assert isinstance(single["Respondent Status Code"], int)
    assert isinstance(single["Expected Buyer CPI"], float)
    assert isinstance(single["Programmatic Direct Transaction"], bool)
    assert all(single[f"Child{n} Age"] == "" for n in range(single["Children Count"] + 1, 6))
    assert single["PS Entry DateTime"].endswith("Z")


def test_status_and_supplier_filters_select_matching_transactions(api, live_survey):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 80, "seed": 11, "supplier_ids": [12, 13]})
    everything = _all_transactions(api, survey_id, limit=30)
    completes = _all_transactions(api, survey_id, status=[21], supplier_ids=[13], limit=7)
    expected = [
        r["Transaction ID"]
        for r in everything
        if r["Respondent Status Code"] == 21 and r["Supplier ID"] == 13
    ]
    assert expected, "the seed should produce completes of supplier 13"
    assert [r["Transaction ID"] for r in completes] == expected


def test_same_seed_gives_the_same_respondents_and_outcomes(api, live_survey):
    first, second = live_survey(), live_survey()
    a = api.simulate_traffic(first, {"respondents": 50, "seed": 99})
    b = api.simulate_traffic(second, {"respondents": 50, "seed": 99})
    assert a["statuses"] == b["statuses"]
    psids = [[r["PSID"] for r in _all_transactions(api, s)] for s in (first, second)]
    assert psids[0] == psids[1]


def test_failing_a_qualification_terminates_with_13(api, live_survey):
    only_women = [{"qualification_code": 211, "condition_codes": ["112"]}]
    survey_id = live_survey(qualifications=only_women)
    api.simulate_traffic(survey_id, {"respondents": 60, "seed": 5})
    rows = _all_transactions(api, survey_id)
    others = {r["Respondent Status Code"] for r in rows if r["Gender Code"] != 112}
    women = {r["Respondent Status Code"] for r in rows if r["Gender Code"] == 112}
    assert others == {13}
    assert women and 13 not in women


def test_a_quota_that_never_opened_turns_its_respondents_away_with_24(api, live_survey):
    unopened_male = [{**GENDER_QUOTAS[0], "required_count": 0}, GENDER_QUOTAS[1]]
    survey_id = live_survey(quotas=unopened_male)
    api.simulate_traffic(survey_id, {"respondents": 40, "seed": 8})
    men = [r for r in _all_transactions(api, survey_id) if r["Gender Code"] == 111]
    assert men and {r["Respondent Status Code"] for r in men} == {24}


def test_a_quota_filled_to_its_count_turns_later_respondents_away_with_12(api, live_survey):
    two_men = [{**GENDER_QUOTAS[0], "required_count": 2}, GENDER_QUOTAS[1]]
    survey_id = live_survey(quotas=two_men, expected_ir=95)
    api.simulate_traffic(survey_id, {"respondents": 60, "seed": 9, "bad_hash_share": 0})
    men = [r for r in _all_transactions(api, survey_id) if r["Gender Code"] == 111]
    statuses = [r["Respondent Status Code"] for r in men]
    second_complete = [i for i, code in enumerate(statuses) if code == 21][1]
    assert statuses.count(21) == 2
    assert set(statuses[second_complete + 1 :]) == {12}


def test_completes_fill_quotas_and_the_survey_pauses_when_every_quota_is_achieved(api, live_survey):
    small = [{**q, "required_count": 3} for q in GENDER_QUOTAS]
    survey_id = live_survey(quotas=small, expected_ir=90)
    result = api.simulate_traffic(survey_id, {"respondents": 200, "seed": 2, "bad_hash_share": 0})
    performance = {q["buyer_quota_id"]: q for q in api.quota_performance(survey_id)}
    assert result["ps_survey_status"] == 33
    assert api.get_survey(survey_id)["ps_survey_status"] == 33
    assert [performance[q]["completes_fielded"] for q in ("male", "female")] == [3, 3]
    rows = _all_transactions(api, survey_id)
    last_complete = max(i for i, r in enumerate(rows) if r["Respondent Status Code"] == 21)
    later = {r["Respondent Status Code"] for r in rows[last_complete + 1 :]}
    assert later == {23}


def test_the_survey_goal_pauses_a_survey_without_quotas(api, live_survey):
    survey_id = live_survey(completes_required=5, expected_ir=90)
    result = api.simulate_traffic(survey_id, {"respondents": 60, "seed": 4, "bad_hash_share": 0})
    assert result["completes"] == 5
    assert result["ps_survey_status"] == 33
    assert result["statuses"]["23"] > 0


def test_qlc_return_reallocates_the_complete_to_the_named_quotas(api, live_survey, sandbox):
    qlc = {"enable": True, "multiple_quotas": {"enable": True}}
    survey_id = live_survey(quotas=GENDER_QUOTAS, qlc=qlc)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 6, "hold": True})
    man = next(r for r in _all_transactions(api, survey_id, status=[16]) if r["Gender Code"] == 111)
    link = build_return_link(
        f"{sandbox.url}/sandbox/return",
        ReturnLink(21, man["Transaction ID"], ("female",)),
        SECRET_1,
    )
    answer = requests.get(link, headers=BUYER_1, timeout=10)
    performance = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert answer.status_code == 200
    assert performance == {"male": 0, "female": 1}


def test_without_qlc_a_complete_counts_in_the_quotas_the_respondent_fell_into(
    api, live_survey, sandbox
):
    survey_id = live_survey(quotas=GENDER_QUOTAS)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 6, "hold": True})
    man = next(r for r in _all_transactions(api, survey_id, status=[16]) if r["Gender Code"] == 111)
    link = build_return_link(
        f"{sandbox.url}/sandbox/return",
        ReturnLink(21, man["Transaction ID"], ("female",)),
        SECRET_1,
    )
    requests.get(link, headers=BUYER_1, timeout=10)
    performance = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert performance == {"male": 1, "female": 0}


def test_a_return_with_a_wrong_hash_is_recorded_as_tampered_31_never_as_a_complete(
    api, live_survey, sandbox
):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 10, "seed": 1, "hold": True})
    waiting = _all_transactions(api, survey_id, status=[16])[0]
    forged = build_return_link(
        f"{sandbox.url}/sandbox/return", ReturnLink(21, waiting["Transaction ID"]), "not-the-secret"
    )
    answer = requests.get(forged, headers=BUYER_1, timeout=10)
    record = api.get_transaction(survey_id, waiting["Transaction ID"])
    assert answer.status_code == 200
    # public facts: st 31 marks a tampered buyer URL (hash mismatch)
    assert record["Respondent Status Code"] == 31
    assert record["Respondent Status Description"] == "Tampered buyer URL"
    assert "ps_hash" in record["Respondent Substatus Description"]
    assert api.get_survey(survey_id).get("project_last_complete_date") is None


def test_a_second_return_for_the_same_transaction_is_refused(api, live_survey, sandbox):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 10, "seed": 1, "hold": True})
    waiting = _all_transactions(api, survey_id, status=[16])[0]
    base = f"{sandbox.url}/sandbox/return"
    term = build_return_link(base, ReturnLink(18, waiting["Transaction ID"]), SECRET_1)
    complete = build_return_link(base, ReturnLink(21, waiting["Transaction ID"]), SECRET_1)
    assert requests.get(term, headers=BUYER_1, timeout=10).status_code == 200
    assert requests.get(complete, headers=BUYER_1, timeout=10).status_code == 409
    record = api.get_transaction(survey_id, waiting["Transaction ID"])
    assert record["Respondent Status Code"] == 18


def _signed(url: str, secret: str = SECRET_1) -> str:
    """`url` with the ps_hash of `secret`, whatever its parameters say."""
    return f"{url}&ps_hash={hashlib.sha1((url + secret).encode()).hexdigest()}"


@pytest.mark.parametrize("st", ["99", "done"])
def test_a_signed_return_whose_st_is_no_return_status_is_refused_and_records_nothing(
    api, live_survey, sandbox, st
):
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 10, "seed": 1, "hold": True})
    waiting = _all_transactions(api, survey_id, status=[16])[0]["Transaction ID"]
    url = f"{sandbox.url}/sandbox/return?st={st}&transaction_id={waiting}"
    answer = requests.get(_signed(url), headers=BUYER_1, timeout=10)
    assert answer.status_code == 400
    assert api.get_transaction(survey_id, waiting)["Respondent Status Code"] == 16


@pytest.mark.parametrize(
    ("query", "code"), [("st=21", 400), ("st=21&transaction_id=no-such-transaction", 404)]
)
def test_a_return_without_a_known_transaction_is_refused(sandbox, query, code):
    answer = requests.get(
        _signed(f"{sandbox.url}/sandbox/return?{query}"), headers=BUYER_1, timeout=10
    )
    assert answer.status_code == code


def test_simulated_bad_hash_returns_never_complete(api, live_survey):
    survey_id = live_survey(expected_ir=95)
    result = api.simulate_traffic(survey_id, {"respondents": 40, "seed": 3, "bad_hash_share": 1})
    assert result["completes"] == 0
    assert result["statuses"].get("31", 0) > 0 and "15" not in result["statuses"]


def test_a_respondent_of_one_group_survey_is_stopped_in_the_others(api, live_survey, unique_ref):
    first, second = live_survey(), live_survey()
    api.create_group(
        {
            "buyer_surveygroup_ref": unique_ref(),
            "name": "trackers",
            "surveys_in_group": [first, second],
            "exclusion_period": 30,
        }
    )
    api.simulate_traffic(first, {"respondents": 40, "seed": 21, "bad_hash_share": 0})
    took_part = {
        r["PSID"]
        for r in _all_transactions(api, first)
        if r["Respondent Status Code"] in (16, 17, 18, 20, 21, 30)
    }
    # The same seed meets the same 40 people first, then 20 newcomers.
    api.simulate_traffic(second, {"respondents": 60, "seed": 21, "bad_hash_share": 0})
    again = {r["PSID"]: r["Respondent Status Code"] for r in _all_transactions(api, second)}
    newcomers = [code for psid, code in again.items() if psid not in took_part]
    assert took_part
    assert all(again[psid] == 15 for psid in took_part)
    assert newcomers and 15 not in newcomers


def test_simulating_a_draft_survey_is_refused(api):
    draft = api.create_survey(BASE_SURVEY)["ps_survey_id"]
    with pytest.raises(ApiError) as refused:
        api.simulate_traffic(draft, {"respondents": 5})
    assert refused.value.status == 409
    assert "draft" in refused.value.message
