"""The access-token header and ownership: 401 without a valid token, 403 for another's data."""

from __future__ import annotations

import pytest
import requests

from surveyctl.errors import ApiError
from surveyctl.sandbox.server import SandboxOptions, start


def test_a_request_without_access_token_is_refused_with_401(raw, sandbox):
    response = requests.get(sandbox.url + "/buyers/v2/surveys", timeout=10)
    assert response.status_code == 401
    assert response.json()["ps_api_response_message"]


def test_an_unknown_access_token_is_refused_with_401(sandbox):
    response = requests.get(
        sandbox.url + "/buyers/v2/surveys", headers={"access-token": "nope"}, timeout=10
    )
    assert response.status_code == 401
    assert "not valid" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize(
    "method, suffix",
    [("GET", ""), ("DELETE", ""), ("GET", "/quotas/performance")],
)
def test_another_buyers_survey_answers_403(raw, raw2, method, suffix):
    survey_id = raw.create()["ps_survey_id"]
    response = raw2.v2(method, f"/surveys/{survey_id}{suffix}")
    assert response.status_code == 403
    assert raw.v2("GET", f"/surveys/{survey_id}").status_code == 200


def test_another_buyers_survey_cannot_be_overwritten(api, other_buyer_api, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    with pytest.raises(ApiError) as refused:
        other_buyer_api.update_survey(survey_id, make_body(survey_title="Taken over"))
    assert refused.value.status == 403
    assert api.get_survey(survey_id)["survey_title"] == "Brand tracker"


def test_a_survey_that_does_not_exist_answers_the_documented_404(raw):
    response = raw.v2("GET", "/surveys/999999999")
    assert response.status_code == 404
    assert response.json() == {
        "ps_api_response_code": 1006,
        "ps_api_response_message": "Survey not found",
    }


def test_another_buyers_survey_answers_the_documented_403(raw, raw2):
    survey_id = raw.create()["ps_survey_id"]
    response = raw2.v2("GET", f"/surveys/{survey_id}")
    assert response.json() == {
        "ps_api_response_code": 1020,
        "ps_api_response_message": "You don't have permission for this survey",
    }


def test_another_buyers_group_answers_403_and_a_missing_one_404(api, raw2, fresh_ref):
    ref = fresh_ref()
    api.create_group(
        {"buyer_surveygroup_ref": ref, "name": "g", "surveys_in_group": [], "exclusion_period": 7}
    )
    assert raw2.v2("GET", f"/surveygroups/{ref}").status_code == 403
    assert raw2.v2("GET", f"/surveygroups/{fresh_ref()}").status_code == 404


def test_a_key_added_for_a_buyer_acts_for_that_buyer(tmp_path, make_body):
    running = start(SandboxOptions(db_path=tmp_path / "s.db", keys={"team-key": 7}))
    try:
        headers = {"access-token": "team-key"}
        created = requests.post(
            running.url + "/buyers/v2/surveys", json=make_body(), headers=headers, timeout=10
        )
        assert created.status_code == 201
        survey_id = created.json()["ps_survey_id"]
        as_buyer_1 = requests.get(
            f"{running.url}/buyers/v2/surveys/{survey_id}",
            headers={"access-token": "sandbox-buyer-1"},
            timeout=10,
        )
        assert as_buyer_1.status_code == 403
        assert running.store.survey(survey_id).buyer_id == 7
    finally:
        running.stop()


TRANSACTION_READS = ["/transactions", "/transactions/tx-anything"]


@pytest.mark.parametrize("suffix", TRANSACTION_READS)
def test_a_transaction_read_without_access_token_is_refused_with_403(raw, sandbox, suffix):
    """Spec 5.2 and 7: the transaction reads list 403, not 401, for a call not permitted."""
    survey_id = raw.create()["ps_survey_id"]
    url = f"{sandbox.url}/buyers/v3/surveys/{survey_id}{suffix}"
    response = requests.get(url, timeout=10)
    assert response.status_code == 403
    assert "missing" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize("suffix", TRANSACTION_READS)
def test_a_transaction_read_with_an_unknown_access_token_is_refused_with_403(raw, sandbox, suffix):
    survey_id = raw.create()["ps_survey_id"]
    url = f"{sandbox.url}/buyers/v3/surveys/{survey_id}{suffix}"
    response = requests.get(url, headers={"access-token": "nope"}, timeout=10)
    assert response.status_code == 403
    assert "not valid" in response.json()["ps_api_response_message"]


def test_a_transaction_read_of_an_id_no_survey_can_have_is_refused_with_403_without_a_key(
    sandbox,
):
    """Its route matches no survey id, but the key is checked first, as the operation's."""
    response = requests.get(sandbox.url + "/buyers/v3/surveys/-1/transactions", timeout=10)
    assert response.status_code == 403
