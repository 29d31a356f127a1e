"""The buyer's transaction status call (public facts):
`POST /surveys/{id}/transactions/{tid}/status?st=..&quota_id=..`, with its own error body."""

from __future__ import annotations

import pytest

from .conftest import survey_body

QLC = {"enable": True, "multiple_quotas": {"enable": True}}


def _set(raw, survey_id: int, transaction_id: str, query: str):
    return raw.v2("POST", f"/surveys/{survey_id}/transactions/{transaction_id}/status?{query}")


def _record(raw, survey_id: int, transaction_id: str) -> dict:
    return raw.v3("GET", f"/surveys/{survey_id}/transactions/{transaction_id}").json()


def _error(response) -> int:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"ps_error_code", "ps_error_message"}
    return body["ps_error_code"]


def test_a_status_is_recorded_and_answered_with_an_empty_list(raw, live_survey, held_sessions):
    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 5)[0]
    response = _set(raw, survey_id, transaction_id, "st=18")
    assert (response.status_code, response.json()) == (200, [])
    assert _record(raw, survey_id, transaction_id)["Respondent Status Code"] == 18


def test_a_complete_counts_in_the_survey(raw, live_survey, held_sessions):
    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 5)[0]
    assert _set(raw, survey_id, transaction_id, "st=21").status_code == 200
    report = raw.v2("GET", f"/surveys/{survey_id}/performance").json()
    assert report["completes_fielded"] == 1


def test_the_status_set_by_the_call_wins_over_a_later_return_link(
    raw, live_survey, held_sessions, sandbox
):
    from surveyctl.sandbox.returns import signed_return_url

    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 5)[0]
    _set(raw, survey_id, transaction_id, "st=18")
    url = signed_return_url(
        sandbox.url + "/sandbox/return", 21, transaction_id, [], False, "sandbox-secret-1"
    )
    returned = raw.session.get(url, timeout=10)
    assert returned.status_code == 409
    assert "transaction status call" in returned.json()["ps_api_response_message"]
    assert _record(raw, survey_id, transaction_id)["Respondent Status Code"] == 18


def test_a_dropped_respondent_may_still_be_given_a_status(
    raw, live_survey, store, fresh_transaction_id
):
    survey_id = live_survey()
    transaction_id = fresh_transaction_id()
    store.insert_transaction(
        survey_id, {"Transaction ID": transaction_id, "Respondent Status Code": 19}
    )
    assert _set(raw, survey_id, transaction_id, "st=20").status_code == 200
    assert _record(raw, survey_id, transaction_id)["Respondent Status Code"] == 20


@pytest.mark.parametrize("query", ["st=16", "st=99", "st=complete", "st=21.0"])
def test_a_status_that_is_not_a_return_status_is_1001(raw, live_survey, held_sessions, query):
    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 3)[0]
    assert _error(_set(raw, survey_id, transaction_id, query)) == 1001


def test_a_call_without_st_is_1002(raw, live_survey, held_sessions):
    survey_id = live_survey()
    assert _error(_set(raw, survey_id, held_sessions(survey_id, 3)[0], "quota_id=male")) == 1002


def test_a_transaction_with_a_final_status_is_1003(raw, live_survey, held_sessions):
    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 3)[0]
    _set(raw, survey_id, transaction_id, "st=21")
    assert _error(_set(raw, survey_id, transaction_id, "st=18")) == 1003
    assert _record(raw, survey_id, transaction_id)["Respondent Status Code"] == 21


def test_an_unknown_transaction_or_one_of_another_survey_is_1004(raw, live_survey, held_sessions):
    survey_id, other_id = live_survey(), live_survey()
    transaction_id = held_sessions(other_id, 3)[0]
    assert _error(_set(raw, survey_id, "no-such-transaction", "st=21")) == 1004
    assert _error(_set(raw, survey_id, transaction_id, "st=21")) == 1004


def test_a_qlc_complete_without_quota_ids_is_1005(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC)
    assert _error(_set(raw, survey_id, held_sessions(survey_id, 3)[0], "st=21")) == 1005


def test_a_quota_id_naming_no_quota_is_1005(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC)
    transaction_id = held_sessions(survey_id, 3)[0]
    assert _error(_set(raw, survey_id, transaction_id, "st=21&quota_id=male,nope")) == 1005


def _fielded_after(raw, survey_id: int, transaction_id: str, query: str) -> dict[str, int]:
    """The completes fielded per quota once the status of `transaction_id` is set by `query`."""
    response = _set(raw, survey_id, transaction_id, query)
    assert response.status_code == 200, response.text
    fielded = raw.v2("GET", f"/surveys/{survey_id}/quotas/performance").json()
    return {q["buyer_quota_id"]: q["completes_fielded"] for q in fielded}


def test_a_qlc_complete_counts_in_the_named_quotas(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC)
    transaction_id = held_sessions(survey_id, 3)[0]
    fielded = _fielded_after(raw, survey_id, transaction_id, "st=21&quota_id=male,female")
    assert fielded == {
        "male": 1,
        "female": 1,
    }


def test_a_quota_id_with_a_percent_encoded_comma_names_each_quota(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC)
    transaction_id = held_sessions(survey_id, 3)[0]
    fielded = _fielded_after(raw, survey_id, transaction_id, "st=21&quota_id=male%2Cfemale")
    assert list(fielded.values()) == [1, 1]


def _supplier_quotas() -> list[dict]:
    quotas = survey_body()["quotas"]
    for quota, supplier_id in zip(quotas, ("sm", "sf"), strict=True):
        quota["buyer_quota_supplier_id"] = supplier_id
    return quotas


@pytest.mark.parametrize("named", ["sm", "male"], ids=["supplier id", "buyer quota id"])
def test_a_supplier_level_complete_takes_either_id_of_the_quota(
    raw, live_survey, held_sessions, named
):
    # Spec 2.4 names buyer_quota_supplier_id the id of supplier-level QLC; 4.12 rule 2 says
    # the quota_id with sqlc=true carries "the buyer quota identifier": both are taken.
    survey_id = live_survey(qlc=QLC, quotas=_supplier_quotas())
    transaction_id = held_sessions(survey_id, 3)[0]
    fielded = _fielded_after(raw, survey_id, transaction_id, f"st=21&quota_id={named}&sqlc=true")
    assert fielded == {
        "male": 1,
        "female": 0,
    }


def test_a_supplier_level_quota_id_naming_no_quota_is_1005(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC, quotas=_supplier_quotas())
    transaction_id = held_sessions(survey_id, 3)[0]
    response = _set(raw, survey_id, transaction_id, "st=21&quota_id=nope&sqlc=true")
    assert _error(response) == 1005
    assert "'nope' is the buyer_quota_supplier_id or buyer_quota_id of no quota" in response.text


def test_the_survey_is_checked_first_with_the_documented_errors(raw, raw2, live_survey):
    survey_id = live_survey()
    forbidden = _set(raw2, survey_id, "anything", "st=21")
    missing = _set(raw, 999999999, "anything", "st=21")
    assert (forbidden.status_code, forbidden.json()["ps_api_response_code"]) == (403, 1020)
    assert (missing.status_code, missing.json()["ps_api_response_code"]) == (404, 1006)
