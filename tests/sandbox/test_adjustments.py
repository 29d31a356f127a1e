"""Reconciliation adjustments (4.10, 2.12): the listed transactions are accepted."""

from __future__ import annotations

import re

import pytest

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@pytest.fixture
def fielded(raw, store, fresh_transaction_id):
    """A survey with a complete (21), a buyer termination (18) and a test complete."""
    survey_id = raw.create()["ps_survey_id"]
    ids = {}
    for name, status, source in [("complete", 21, ""), ("term", 18, ""), ("test", 21, "test")]:
        record = {
            "Transaction ID": fresh_transaction_id(),
            "Respondent Status Code": status,
            "Respondent Status Description": name,
            "Respondent Source": source,
        }
        ids[name] = store.insert_transaction(survey_id, record)["Transaction ID"]
    return survey_id, ids


def test_an_adjustment_answers_202_pending_with_an_id(api, fielded):
    _, ids = fielded
    answer = api.adjust([ids["term"]])
    assert answer["status"] == 1
    assert answer["statusDescription"] == "Pending"
    assert UUID.match(answer["adjustment_id"])


def test_the_summary_counts_what_the_upload_accepts(api, fielded):
    survey_id, ids = fielded
    summary = api.adjust([ids["complete"], ids["term"], ids["test"], "unknown-id"])["summary"]
    assert summary["transactions"] == 4
    assert summary["invalid"] == 1
    assert summary["test"] == 1
    assert summary["eligible"] == 2
    assert summary["completes"] == 1
    assert summary["currentCompletes"] == 2
    assert summary["acceptingCompletesInCurrentUpload"] == 1
    assert summary["resultingCompletes"] == 3
    assert summary["rejectPercentage"] == "0.00"
    assert [s["surveyId"] for s in summary["summaryPerSurvey"]] == [survey_id]


def test_the_same_transactions_again_count_as_already_reconciled(api, fielded):
    _, ids = fielded
    api.adjust([ids["term"]])
    summary = api.adjust([ids["term"]])["summary"]
    assert summary["alreadyReconciled"] == 1
    assert summary["eligible"] == 0
    assert summary["acceptingCompletesInCurrentUpload"] == 0


def test_an_accepted_transaction_reads_back_as_a_reconciled_complete(api, fielded):
    survey_id, ids = fielded
    api.adjust([ids["term"]])
    record = api.get_transaction(survey_id, ids["term"])
    assert record["Respondent Status Code"] == 21
    assert record["Reconciliation Status"] == 1
    assert record["Transaction Original Status"] == "18"
    assert record["Reconciliation Date"]


def test_an_accepted_transaction_is_paid_as_a_complete(raw, api, store, fresh_transaction_id):
    survey_id = raw.create(offer_price=2.5)["ps_survey_id"]
    record = {
        "Transaction ID": fresh_transaction_id(),
        "Respondent Status Code": 18,
        "Expected Buyer CPI": 2.5,
        "Respondent Buyer CPI": 0.0,
    }
    term = store.insert_transaction(survey_id, record)["Transaction ID"]
    api.adjust([term])
    assert api.get_transaction(survey_id, term)["Respondent Buyer CPI"] == 2.5


def test_the_per_survey_call_counts_other_surveys_transactions_as_invalid(raw, api, fielded):
    _, ids = fielded
    other_survey = raw.create()["ps_survey_id"]
    summary = api.adjust([ids["term"]], survey_id=other_survey)["summary"]
    assert summary["invalid"] == 1
    assert summary["eligible"] == 0


def test_another_buyers_transactions_count_as_invalid(other_buyer_api, fielded):
    _, ids = fielded
    summary = other_buyer_api.adjust([ids["term"]])["summary"]
    assert summary["invalid"] == 1


def test_the_per_survey_call_on_another_buyers_survey_answers_403(raw2, fielded):
    survey_id, ids = fielded
    response = raw2.v2("POST", f"/adjustments/surveys/{survey_id}", json=[{"transaction_id": "x"}])
    assert response.status_code == 403


def test_an_adjustment_body_must_be_a_list_of_transaction_ids(raw):
    response = raw.v2("POST", "/adjustments", json={"transaction_id": "x"})
    assert response.status_code == 400
