"""No bad request is answered 500: each one found by fuzzing gets its 4xx with the usual body."""

from __future__ import annotations

import json

import pytest
import requests
from click.testing import CliRunner
from flask import Blueprint

from surveyctl.cli.main import cli
from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.store import Store

from .conftest import BUYER_2

BEYOND_64_BITS = 2**63
JSON = {"Content-Type": "application/json"}


def _error(response, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["ps_api_response_code"] == code
    return body["ps_api_response_message"]


def _post_text(raw, path: str, text: str):
    return raw.v2("POST", path, data=text.encode(), headers=JSON)


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_a_survey_id_beyond_64_bits_is_a_400(raw, method):
    response = raw.v2(method, f"/surveys/{BEYOND_64_BITS}", json={})
    assert "beyond 64 bits" in _error(response, 400, 1005)


@pytest.mark.parametrize(
    "path",
    [f"/buyers/v3/surveys/{BEYOND_64_BITS}/transactions",
     f"/buyers/v2/surveys/{BEYOND_64_BITS}/quotas/performance",
     f"/sandbox/surveys/{BEYOND_64_BITS}/quotas"],
)  # fmt: skip
def test_every_route_with_a_survey_id_takes_the_same_care(raw, path):
    _error(raw("GET", path), 400, 1005)


def test_the_largest_64_bit_id_is_simply_not_found(raw):
    _error(raw.v2("GET", f"/surveys/{BEYOND_64_BITS - 1}"), 404, 1006)


def test_completes_required_of_1e308_is_a_400(raw, make_body):
    text = json.dumps(make_body()).replace(
        '"completes_required": 100', '"completes_required": 1e308'
    )
    assert "completes_required" in _error(_post_text(raw, "/surveys", text), 400, 1004)


def test_a_required_count_of_2_to_the_63_is_a_400(raw, make_body):
    body = make_body()
    body["quotas"][0]["required_count"] = BEYOND_64_BITS
    assert "quotas[0].required_count" in _error(raw.v2("POST", "/surveys", json=body), 400, 1004)


def test_a_quota_update_beyond_64_bits_is_a_400(raw):
    survey_id = raw.create()["ps_survey_id"]
    body = {"required_count": BEYOND_64_BITS, "criteria": []}
    _error(raw.v2("PUT", f"/surveys/{survey_id}/quotas/male", json=body), 400, 1004)


@pytest.mark.parametrize(
    "path",
    ["/buyers/v2/surveys?page=99999999999999999999",
     "/buyers/v2/surveys?limit=99999999999999999999",
     "/buyers/v3/attributes?localization=en_US&page=99999999999999999999",
     "/buyers/v3/attributes?localization=en_US&class=99999999999999999999"],
)  # fmt: skip
def test_a_page_or_filter_beyond_64_bits_is_a_400(raw, path):
    _error(raw("GET", path), 400, 1005)


def test_transaction_pages_beyond_64_bits_are_a_400(raw):
    survey_id = raw.create()["ps_survey_id"]
    path = f"/surveys/{survey_id}/transactions?page=99999999999999999999&status=2{'0' * 30}"
    _error(raw.v3("GET", path), 400, 1005)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_json_does_not_have_is_a_400_and_nothing_is_stored(raw, make_body, token):
    text = json.dumps(make_body()).replace('"expected_ir": 40', f'"expected_ir": {token}')
    _error(_post_text(raw, "/surveys", text), 400, 1004)
    listed = raw.v2("GET", "/surveys?status=11&limit=1000")
    assert listed.status_code == 200
    assert all(s["expected_ir"] == s["expected_ir"] for s in listed.json())  # no NaN came back


def test_five_thousand_nested_brackets_are_a_400(raw):
    assert "nests deeper" in _error(_post_text(raw, "/surveys", "[" * 5000), 400, 1004)


def test_a_body_nested_deeper_than_the_api_ever_needs_is_a_400(raw):
    deep = {"survey_title": "x"}
    for _ in range(40):
        deep = {"schedule_pause": deep}
    assert "nests deeper" in _error(raw.v2("POST", "/surveys", json=deep), 400, 1004)


def test_a_deep_json_patch_value_is_a_400(raw):
    survey_id = raw.create()["ps_survey_id"]
    value: list = []
    for _ in range(200):
        value = [value]
    patch = [{"op": "add", "path": "/buyer_message", "value": value}]
    _error(raw.v2("PATCH", f"/surveys/{survey_id}", json=patch), 400, 1004)


def test_a_body_over_the_size_limit_is_a_413(raw, make_body):
    huge = make_body(survey_title="x" * (17 * 1024 * 1024))
    response = raw.v2("POST", "/surveys", data=json.dumps(huge), headers=JSON)
    assert "larger than 16 MiB" in _error(response, 413, 1029)


def test_a_tiny_incidence_rate_does_not_overflow_the_estimated_clicks(raw):
    survey = raw.create(expected_ir=1e-300)
    assert survey["estimated_clicks"] == 2**63 - 1


def test_a_huge_loi_and_exclusion_period_do_not_break_the_simulation(raw, live_survey, fresh_ref):
    survey_id = live_survey(expected_loi=10**15)
    group = {"buyer_surveygroup_ref": fresh_ref(), "name": "G", "exclusion_period": 10**15,
             "surveys_in_group": [survey_id]}  # fmt: skip
    assert raw.v2("POST", "/surveygroups", json=group).status_code == 201
    response = raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json={"respondents": 5})
    assert response.status_code == 200, response.text


def test_a_method_the_path_does_not_take_is_a_405_with_allow(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("POST", f"/surveys/{survey_id}", json={})
    _error(response, 405, 1021)
    assert {"GET", "PUT", "PATCH", "DELETE"} <= set(response.headers["Allow"].split(", "))


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/sandbox/surveys/10001/quotas"), ("POST", "/sandbox/surveys/10001/simulate"),
     ("GET", "/sandbox/return?st=21&transaction_id=x&ps_hash=0")],
)  # fmt: skip
def test_sandbox_routes_need_the_buyers_token(sandbox, method, path):
    response = requests.request(method, sandbox.url + path, json={"respondents": 1}, timeout=10)
    _error(response, 401, 1001)


def test_one_buyer_cannot_drive_another_buyers_traffic(raw, raw2, live_survey, held_sessions):
    survey_id = live_survey()
    transaction_id = held_sessions(survey_id, 3)[0]
    simulate = raw2("POST", f"/sandbox/surveys/{survey_id}/simulate", json={"respondents": 5})
    internals = raw2("GET", f"/sandbox/surveys/{survey_id}/quotas")
    forged = raw2("GET", f"/sandbox/return?st=21&transaction_id={transaction_id}&ps_hash=0")
    for response in (simulate, internals, forged):
        _error(response, 403, 1020)
    record = raw.v3("GET", f"/surveys/{survey_id}/transactions/{transaction_id}").json()
    assert record["Respondent Status Code"] == 16
    assert len(raw.v3("GET", f"/surveys/{survey_id}/transactions").json()) == 3


def test_a_bug_of_the_sandbox_says_so_instead_of_blaming_the_body(tmp_path):
    broken = Blueprint("broken", __name__)
    broken.get("/buyers/v2/broken")(lambda: 1 / 0)
    store = Store(tmp_path / "s.db")
    client = create_app(store, blueprints=[broken]).test_client()
    response = client.get("/buyers/v2/broken", headers={"access-token": BUYER_2})
    store.close()
    assert response.status_code == 500
    assert response.get_json() == {
        "ps_api_response_code": 1098,
        "ps_api_response_message": "internal error of the sandbox (a bug): Internal Server Error",
    }


def test_a_sandbox_that_cannot_open_its_data_is_one_error_sentence(tmp_path):
    garbage = tmp_path / "not-a-database.db"
    garbage.write_bytes(b"this is no SQLite file" * 100)
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--port", "0", "--db", str(garbage)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {garbage}: cannot open the sandbox data")
    assert "Traceback" not in result.output


def test_the_sandbox_has_its_own_base_error():
    from surveyctl.errors import SurveyctlError
    from surveyctl.sandbox.catalogue import CatalogueDataError
    from surveyctl.sandbox.errors import SandboxError
    from surveyctl.sandbox.server import SandboxStartError

    for error in (SandboxStartError, CatalogueDataError):
        assert issubclass(error, SandboxError) and not issubclass(error, SurveyctlError)


def test_an_embedded_sandbox_that_cannot_start_is_one_error_sentence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    (tmp_path / ".surveyctl").mkdir()
    (tmp_path / ".surveyctl" / "sandbox.db").write_bytes(b"no SQLite here" * 100)
    result = CliRunner().invoke(cli, ["transactions", "get", "10001", "T1"])
    assert result.exit_code == 1
    assert "Error: the embedded sandbox cannot start:" in result.output
    assert "Traceback" not in result.output
