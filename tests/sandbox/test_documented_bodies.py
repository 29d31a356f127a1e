"""The sandbox takes what the service takes: the documented answer codes and entry links as a
buyer's own script writes them (public facts, "Added for the fidelity step")."""

from __future__ import annotations

import copy

import pytest
import yaml

# Entry links as a published buyer script writes them: answer macros, the transaction macro,
# and a query value with a space nobody encoded.
LIVE_URL = (
    "https://survey.example.com/s/entry?zip=[%%229%%]&state=[%%225%%]"
    "&tid=[%%ps_transaction_id%%]&source=buyer script"
)
TEST_URL = "https://survey.example.com/s/entry?tid=[%%ps_transaction_id%%]&mode=test run"


def _codes(*codes: int) -> list[str]:
    return [str(code) for code in codes]


DOCUMENTED_QUALIFICATIONS = [
    {"qualification_code": 211, "condition_codes": _codes(111, 112)},
    {"qualification_code": 212, "range_sets": [{"from": 21, "to": 65, "units": 311}]},
    {"qualification_code": 213, "range_sets": [{"from": 0, "to": 999999, "units": 321}]},
    {"qualification_code": 214, "condition_codes": _codes(111, 112, 113, 114)},
    {"qualification_code": 215, "condition_codes": _codes(*range(111, 116))},
    {"qualification_code": 216, "condition_codes": _codes(111, 112)},
    {"qualification_code": 217, "condition_codes": _codes(*range(111, 117))},
    {"qualification_code": 218, "condition_codes": _codes(111, 112)},
    {"qualification_code": 225, "condition_codes": ["1", "6", "36"]},
    {"qualification_code": 228, "condition_codes": ["6037", "36061"]},
    {"qualification_code": 229, "condition_codes": ["10001", "90210"]},
]

SCRIPT_BODY = {
    "survey_title": "Survey posted by a buyer's script",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 200,
    "expected_ir": 50,
    "expected_loi": 10,
    "offer_price": 10,
    "field_time": 5,
    "live_url": LIVE_URL,
    "test_url": TEST_URL,
    "qualifications": DOCUMENTED_QUALIFICATIONS,
    "quotas": [
        {
            "buyer_quota_id": "women-21-40",
            "quota_title": "",
            "required_count": 100,
            "criteria": [
                {"qualification_code": 211, "condition_codes": ["112"]},
                {"qualification_code": 212, "range_sets": [{"from": 21, "to": 40, "units": 311}]},
            ],
        },
        {
            "buyer_quota_id": "men",
            "quota_title": "",
            "required_count": 100,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        },
    ],
}


def script_body(**overrides) -> dict:
    body = copy.deepcopy(SCRIPT_BODY)
    body.update(overrides)
    return body


def test_a_body_with_the_documented_en_us_codes_is_accepted(raw):
    response = raw.v2("POST", "/surveys", json=script_body())
    assert response.status_code == 201, response.text
    assert response.json()["qualifications"] == DOCUMENTED_QUALIFICATIONS


def test_entry_links_with_macros_and_an_unencoded_space_are_kept_verbatim(raw):
    created = raw.v2("POST", "/surveys", json=script_body()).json()
    fetched = raw.v2("GET", f"/surveys/{created['ps_survey_id']}").json()
    assert (fetched["live_url"], fetched["test_url"]) == (LIVE_URL, TEST_URL)


@pytest.mark.parametrize(
    "url",
    ["ftp://survey.example.com/s", "survey.example.com/s?tid=1", "https://", "https:// x.com",
     "javascript:alert(1)", ""],
)  # fmt: skip
def test_an_entry_link_that_is_not_an_http_url_is_refused(raw, url):
    response = raw.v2("POST", "/surveys", json=script_body(live_url=url))
    assert response.status_code == 400
    assert "live_url" in response.json()["ps_api_response_message"]


def test_a_test_link_that_is_not_an_http_url_is_refused_too(raw):
    response = raw.v2("POST", "/surveys", json=script_body(test_url="www.example.com/t"))
    assert response.status_code == 400
    assert "test_url" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize(
    ("code", "condition_codes"),
    [(225, ["AL"]), (229, ["1000"]), (228, ["Los Angeles"]), (214, ["21401"]), (216, ["117"])],
)
def test_codes_outside_the_en_us_scheme_are_refused(raw, code, condition_codes):
    target = {"qualification_code": code, "condition_codes": condition_codes}
    response = raw.v2("POST", "/surveys", json=script_body(qualifications=[target]))
    assert response.status_code == 400
    assert "condition_codes" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize("address", ["ops@example.com", "ops@localhost"])
def test_a_subscriber_address_needs_only_one_at_sign(raw, address):
    response = raw.v2("POST", "/surveys", json=script_body(subscriber_emails=[address]))
    assert response.status_code == 201, response.text


def test_a_subscriber_address_without_an_at_sign_is_refused(raw):
    response = raw.v2("POST", "/surveys", json=script_body(subscriber_emails=["ops"]))
    assert response.status_code == 400


@pytest.mark.parametrize(
    "start_time", ["10:00:00.000Z", "10:00:00Z", "10:00", "2026-03-01T10:00:00.000Z"]
)
def test_a_schedule_pause_start_time_may_be_any_time_of_day_notation(raw, start_time):
    pause = {"enable": True, "info": [{"timezone": "UTC", "days": [1], "start_time": start_time}]}
    response = raw.v2("POST", "/surveys", json=script_body(schedule_pause=pause))
    assert response.status_code == 201, response.text


def test_a_schedule_pause_start_time_that_is_no_time_is_refused(raw):
    pause = {"enable": True, "info": [{"timezone": "UTC", "days": [1], "start_time": "soon"}]}
    response = raw.v2("POST", "/surveys", json=script_body(schedule_pause=pause))
    assert response.status_code == 400
    assert "start_time" in response.json()["ps_api_response_message"]


def test_a_script_survey_round_trips_through_import_and_plans_no_changes(raw, run_cli, project):
    survey_id = raw.v2("POST", "/surveys", json=script_body()).json()["ps_survey_id"]
    imported = run_cli(
        "import", str(survey_id), "--name", "script-survey", "--out", "manifests/script.yaml"
    )
    assert imported.exit_code == 0, imported.stderr
    manifest = yaml.safe_load((project / "manifests" / "script.yaml").read_text(encoding="utf-8"))
    assert (manifest["spec"]["live_url"], manifest["spec"]["test_url"]) == (LIVE_URL, TEST_URL)
    validated = run_cli("validate", "manifests")
    assert validated.exit_code == 0, validated.stdout + validated.stderr
    planned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert "No changes." in planned.stdout
