"""The strict mode on request: `sandbox serve --strict` and the embedded sandbox with
`SURVEYCTL_SANDBOX_STRICT` refuse request fields the schemas do not list, and query
parameters the call's description does not list; without them the same request is taken."""

from __future__ import annotations

import json

import pytest
import requests

from surveyctl.config import load_config
from surveyctl.connection import open_client
from surveyctl.errors import ApiError
from surveyctl.sandbox.errors import INVALID_QUERY

from .conftest import HEADERS, new_ref, survey_body

STRAY = survey_body(colour="red")


def _create(url: str) -> requests.Response:
    return requests.post(url + "/buyers/v2/surveys", json=STRAY, headers=HEADERS, timeout=10)


def test_serve_strict_refuses_an_unknown_field_naming_it(served):
    server = served("--strict")
    assert "strict" in "".join(server.banner)
    response = _create(server.url)
    assert response.status_code == 400
    assert "colour" in response.json()["ps_api_response_message"]


def test_serve_without_strict_takes_the_same_body(served):
    assert _create(served().url).status_code == 201


def test_the_strict_description_closes_the_bodies_it_takes(served):
    strict = requests.get(served("--strict").url + "/openapi.json", timeout=10).json()
    body = strict["components"]["schemas"]["common"]["$defs"]["survey_body"]
    assert body["additionalProperties"] is False


@pytest.mark.parametrize(("setting", "status"), [("1", 400), ("", 201)])
def test_the_embedded_sandbox_is_strict_when_the_variable_says_so(
    tmp_path, monkeypatch, setting, status
):
    monkeypatch.setenv("SURVEYCTL_SANDBOX_STRICT", setting)
    config = load_config(cwd=tmp_path)
    client = open_client(config, config.environment("sandbox"), retries=0)
    try:
        client.create_survey(STRAY)
        answered = 201
    except ApiError as exc:
        answered = exc.status
    finally:
        client.close()
    assert answered == status


def test_a_strict_setting_that_is_neither_yes_nor_no_is_refused_not_taken_for_no(
    run_cli, tmp_path_factory, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_SANDBOX_STRICT", "ture")
    monkeypatch.chdir(tmp_path_factory.mktemp("unconfigured"))  # the embedded sandbox
    result = run_cli("surveys", "list")
    assert result.exit_code == 1
    assert "$SURVEYCTL_SANDBOX_STRICT must be 1 or 0" in result.stderr and "'ture'" in result.stderr


def test_strict_refuses_a_misspelt_query_parameter_naming_it_and_what_the_call_takes(strict_raw):
    # Read leniently, `statuses` is ignored and every live survey answered: the client would
    # take the unfiltered list for the filtered one.
    response = strict_raw.v2("GET", "/surveys?statuses=11")
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, INVALID_QUERY)
    assert response.json()["ps_api_response_message"] == (
        "unknown query parameter statuses "
        "(this call takes status, fromDate, toDate, targeting, page, limit)"
    )


def test_strict_refuses_a_query_on_a_call_that_takes_none(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    response = strict_raw.v2("GET", f"/surveys/{survey_id}?targeting=0")
    assert response.status_code == 400
    assert "unknown query parameter targeting (this call takes none)" in response.text


def test_strict_takes_every_query_parameter_the_calls_list(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    answers = [
        strict_raw.v2("GET", "/surveys?status=11&fromDate=20260101&toDate=20991231"
                      "&targeting=0&page=1&limit=5"),
        strict_raw.v2("GET", f"/surveys/{survey_id}/quotas?page=1&limit=5"),
        strict_raw.v3("GET", "/attributes?localization=en_US&class=1,2&page=1&limit=5"),
        strict_raw.v3("GET", f"/surveys/{survey_id}/transactions?status=21&supplier_ids=1"
                      "&page=1&limit=5"),
    ]  # fmt: skip
    assert [response.status_code for response in answers] == [200, 200, 200, 200]


def test_strict_takes_the_qbs_parameter_the_spec_shows_on_a_quota_update(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    criteria = [{"qualification_code": 211, "condition_codes": ["111"]}]
    body = {"required_count": 70, "criteria": criteria}
    response = strict_raw.v2("PUT", f"/surveys/{survey_id}/quotas/male?QBS=1", json=body)
    assert response.status_code == 200, response.text


def test_without_strict_an_unknown_query_parameter_is_ignored(raw):
    assert raw.v2("GET", "/surveys?statuses=11").status_code == 200


def test_strict_refuses_an_integer_written_with_a_fraction_naming_the_field(strict_raw):
    # JSON Schema counts 1000.0 as an integer; a typed reader of the service may not.
    response = strict_raw.v2("POST", "/surveys", json=survey_body(completes_required=100.0))
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"] == (
        "invalid request body: field completes_required: 100.0 is not of type 'integer'"
    )


def test_strict_refuses_a_group_created_with_an_exclusion_period_written_with_a_fraction(
    strict_raw,
):
    # The create body's schema refers to the whole file of the overwrite body.
    survey_id = strict_raw.create()["ps_survey_id"]
    group = {
        "buyer_surveygroup_ref": new_ref(),
        "name": "Trackers",
        "surveys_in_group": [survey_id],
        "exclusion_period": 30.0,
    }
    response = strict_raw.v2("POST", "/surveygroups", json=group)
    assert response.status_code == 400
    assert "field exclusion_period: 30.0 is not of type 'integer'" in response.text


def test_strict_takes_a_whole_number_where_the_spec_wants_any_number(strict_raw):
    response = strict_raw.v2(
        "POST", "/surveys", json=survey_body(offer_price=2.0, expected_ir=40.0)
    )
    assert response.status_code == 201, response.text


def test_without_strict_an_integer_written_with_a_fraction_is_taken(raw):
    assert raw.v2("POST", "/surveys", json=survey_body(completes_required=100.0)).status_code == 201


def test_strict_refuses_a_null_for_a_field_the_contract_gives_a_type_naming_it(strict_raw):
    # GET shows an unset buyer_message as null; the spec's create body gives it a string only.
    response = strict_raw.v2("POST", "/surveys", json={**survey_body(), "buyer_message": None})
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, 1004)
    assert response.json()["ps_api_response_message"] == (
        "invalid request body: field buyer_message is null, where the contract gives a type "
        "and no null (leave the field out)"
    )


def test_without_strict_a_null_field_as_a_get_body_shows_it_is_taken(raw):
    response = raw.v2("POST", "/surveys", json={**survey_body(), "buyer_message": None})
    assert response.status_code == 201, response.text


def test_strict_takes_a_patch_of_a_survey_whose_get_shows_unset_fields_as_null(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": "/completes_required", "value": 150}]
    response = strict_raw.v2("PATCH", f"/surveys/{survey_id}", json=operations)
    assert response.status_code == 200, response.text
    assert response.json()["buyer_message"] is None


def test_strict_refuses_a_patch_that_sets_a_field_to_null(strict_raw):
    survey_id = strict_raw.create(buyer_message="hello")["ps_survey_id"]
    operations = [{"op": "replace", "path": "/buyer_message", "value": None}]
    response = strict_raw.v2("PATCH", f"/surveys/{survey_id}", json=operations)
    assert response.status_code == 400
    assert "field buyer_message is null" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_strict_refuses_a_body_on_a_call_that_takes_none(strict_raw, method):
    survey_id = strict_raw.create()["ps_survey_id"]
    response = strict_raw.v2(method, f"/surveys/{survey_id}", json={"ps_survey_id": survey_id})
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, 1004)
    assert response.json()["ps_api_response_message"] == (
        f"{method} /buyers/v2/surveys/{{survey_id}} takes no body: send none"
    )
    assert strict_raw.v2("GET", f"/surveys/{survey_id}").status_code == 200  # not deleted


def test_without_strict_a_body_on_a_get_is_ignored(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("GET", f"/surveys/{survey_id}", json={"ps_survey_id": 1})
    assert response.status_code == 200
    assert response.json()["ps_survey_id"] == survey_id


_SLOPPY_TYPES = [
    "application/vnd.foo+json",
    "application/json-patch+json",
    "text/plain",
    "application/json; charset=iso-8859-1",
]


@pytest.mark.parametrize("content_type", _SLOPPY_TYPES)
def test_strict_refuses_a_body_sent_as_anything_but_application_json(strict_raw, content_type):
    response = strict_raw.v2(
        "POST", "/surveys", data=json.dumps(survey_body()), headers={"Content-Type": content_type}
    )
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, 1004)
    assert response.json()["ps_api_response_message"] == (
        f"the body must be sent as Content-Type: application/json, not {content_type}"
    )


def test_strict_refuses_a_patch_sent_as_json_patch_json(strict_raw):
    # The OpenAPI media type of a JSON Patch; the spec's convention is application/json.
    survey_id = strict_raw.create()["ps_survey_id"]
    operations = [{"op": "replace", "path": "/completes_required", "value": 150}]
    response = strict_raw.v2(
        "PATCH",
        f"/surveys/{survey_id}",
        data=json.dumps(operations),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert response.status_code == 400
    assert strict_raw.v2("GET", f"/surveys/{survey_id}").json()["completes_required"] == 100


def test_strict_takes_application_json_with_a_utf8_charset(strict_raw):
    response = strict_raw.v2(
        "POST",
        "/surveys",
        data=json.dumps(survey_body()).encode(),
        headers={"Content-Type": "application/json; charset=UTF-8"},
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    "content_type", ["application/vnd.foo+json", "application/json-patch+json"]
)
def test_without_strict_a_json_media_type_of_another_name_is_taken(raw, content_type):
    response = raw.v2(
        "POST", "/surveys", data=json.dumps(survey_body()), headers={"Content-Type": content_type}
    )
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (json.dumps(survey_body()).encode("utf-16"), "the body is not UTF-8"),
        (
            b"\xef\xbb\xbf" + json.dumps(survey_body()).encode(),
            "the body starts with a byte order mark",
        ),
    ],
    ids=["utf-16", "byte-order-mark"],
)
def test_strict_refuses_a_body_that_is_not_plain_utf8(strict_raw, data, message):
    response = strict_raw.v2(
        "POST", "/surveys", data=data, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"] == message


def test_strict_refuses_a_body_naming_a_field_twice_in_one_object(strict_raw):
    # Readers differ on which of the two they keep (RFC 8259 4): this one keeps the last.
    text = json.dumps(survey_body())[:-1] + ', "field_time": 3}'
    response = strict_raw.v2(
        "POST", "/surveys", data=text, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"] == (
        "the body names field_time more than once in one object"
    )


def test_without_strict_a_field_named_twice_counts_as_its_last_value(raw):
    text = json.dumps(survey_body())[:-1] + ', "field_time": 3}'
    response = raw.v2("POST", "/surveys", data=text, headers={"Content-Type": "application/json"})
    assert response.status_code == 201
    assert response.json()["field_time"] == 3


def test_strict_refuses_a_query_parameter_given_twice(strict_raw):
    # Read leniently the first counts; a server that keeps the last answers page 2.
    response = strict_raw.v2("GET", "/surveys?page=1&page=2")
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, INVALID_QUERY)
    assert response.json()["ps_api_response_message"] == (
        "query parameter page given 2 times (send it once)"
    )


def test_without_strict_a_query_parameter_given_twice_counts_once(raw):
    assert raw.v2("GET", "/surveys?page=1&page=2").status_code == 200


@pytest.mark.parametrize("written", ["%2B1", "%201", "1%20"])
def test_strict_refuses_a_query_integer_not_written_in_plain_digits(strict_raw, written):
    response = strict_raw.v2("GET", f"/surveys?page={written}")
    assert response.status_code == 400
    assert "is not an integer written in plain digits" in response.json()["ps_api_response_message"]


def test_without_strict_a_page_written_with_a_plus_sign_is_read(raw):
    assert raw.v2("GET", "/surveys?page=%2B1").status_code == 200


def test_strict_refuses_a_query_value_the_description_does_not_list(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    response = strict_raw.v2(
        "POST", f"/surveys/{survey_id}/transactions/tx-1/status?st=21&sqlc=yes"
    )
    assert (response.status_code, response.json()["ps_api_response_code"]) == (400, INVALID_QUERY)
    assert (
        response.json()["ps_api_response_message"]
        == "query parameter sqlc: 'yes' is not one it takes"
    )


def test_the_strict_description_takes_bodies_as_application_json_only(served):
    strict = requests.get(served("--strict").url + "/openapi.json", timeout=10).json()
    patch = strict["paths"]["/buyers/v2/surveys/{survey_id}"]["patch"]
    assert list(patch["requestBody"]["content"]) == ["application/json"]


QLC_COUNTING_BY_QUOTA = {
    "enable": True,
    "multiple_quotas": {"enable": True, "count_by_quota": True},
}


def test_strict_mode_refuses_a_qlc_option_the_spec_says_to_omit_or_send_false(strict_raw):
    """Spec 2.7: count_by_quota and compensate_by_quota, "omit or send false"."""
    response = strict_raw.v2("POST", "/surveys", json=survey_body(qlc=QLC_COUNTING_BY_QUOTA))
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"] == (
        "invalid request body: field qlc.multiple_quotas.count_by_quota: must be false, not true"
    )


def test_the_default_mode_takes_a_qlc_option_sent_true_and_shows_it(raw):
    created = raw.create(qlc=QLC_COUNTING_BY_QUOTA)
    assert created["qlc"]["multiple_quotas"]["count_by_quota"] is True


def _paused_at(start_time: str) -> dict:
    info = [{"timezone": "UTC", "days": [1], "start_time": start_time}]
    return survey_body(schedule_pause={"enable": True, "info": info})


def test_strict_mode_refuses_a_pause_start_time_not_written_as_the_spec_gives_it(strict_raw):
    response = strict_raw.v2("POST", "/surveys", json=_paused_at("10:00"))
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"] == (
        'invalid request body: field schedule_pause.info[0].start_time: "10:00" is not a time '
        "of day with fractional seconds and Z suffix (10:00:00.000Z), as spec 2.2 gives it"
    )


def test_strict_mode_takes_a_pause_start_time_as_the_spec_gives_it(strict_raw):
    response = strict_raw.v2("POST", "/surveys", json=_paused_at("10:00:00.000Z"))
    assert response.status_code == 201, response.text
