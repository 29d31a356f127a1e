"""The client reads what the documentation shows the service sending: numbers as text, extra
fields, a transaction as an array of one, 401 bodies with `msg`. Export, import and plan neither
fail nor show a diff because of them."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from surveyctl.api import ApiClient
from surveyctl.errors import ApiError
from surveyctl.reconcile.normalise import normalise_survey, update_body

from .conftest import SURVEY
from .documented import DocumentedShapes

BUYER_1 = "sandbox-buyer-1"
AGE_21_25 = {"qualification_code": 212, "range_sets": [{"from": 21, "to": 25, "units": 311}]}
SPEC = {**SURVEY, "offer_price": 10.0, "qualifications": [AGE_21_25]}


@pytest.fixture
def documented(tmp_path):
    server = DocumentedShapes(tmp_path / "documented.db")
    yield server
    server.stop()


@pytest.fixture
def client(documented):
    client = ApiClient(documented.url, BUYER_1, retries=0)
    yield client
    client.close()


@pytest.fixture
def documented_project(project, documented):
    """The CLI's project pointed at the documented-shapes sandbox."""
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  documented: {{host: '{documented.url}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: documented\n",
        encoding="utf-8",
    )
    (project / "manifests").mkdir()
    return project


def _write_manifest(project, spec: dict) -> None:
    manifest = {"kind": "Survey", "name": "tracker", "spec": spec}
    (project / "manifests" / "tracker.yaml").write_text(yaml.safe_dump(manifest), "utf-8")


def test_the_harness_answers_in_the_documented_shapes(client):
    survey = client.get_survey(client.create_survey(SPEC)["ps_survey_id"])
    assert survey["qualifications"][0]["range_sets"][0]["from"] == "21"
    assert survey["offer_price"] == 10 and isinstance(survey["offer_price"], int)
    assert "mod_on" in survey and "crtd_on" in survey


def test_a_plan_after_apply_shows_no_changes(documented_project, run_cli):
    _write_manifest(documented_project, SPEC)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    planned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert "No changes." in planned.stdout


def test_fields_kept_from_the_live_survey_go_back_as_numbers(documented_project, run_cli, client):
    untargeted = {k: v for k, v in SPEC.items() if k != "qualifications"}
    survey_id = client.create_survey(untargeted)["ps_survey_id"]
    run_cli("import", str(survey_id), "--name", "tracker", "--out", "manifests/tracker.yaml")
    spec = yaml.safe_load((documented_project / "manifests" / "tracker.yaml").read_text())["spec"]
    # Targeting added outside surveyctl is never managed here: its live values ("21") are kept.
    client.update_survey(survey_id, {**untargeted, "qualifications": [AGE_21_25]})
    _write_manifest(documented_project, {**spec, "survey_title": "Renamed"})
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    survey = client.get_survey(survey_id)
    assert survey["survey_title"] == "Renamed"
    assert survey["qualifications"][0]["range_sets"][0]["from"] == "21"  # kept, as numbers


def test_an_import_writes_numbers_and_plans_no_changes(documented_project, run_cli, client):
    survey_id = client.create_survey(SPEC)["ps_survey_id"]
    imported = run_cli("import", str(survey_id), "--name", "adopted",
                       "--out", "manifests/adopted.yaml")  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    spec = yaml.safe_load((documented_project / "manifests" / "adopted.yaml").read_text())["spec"]
    assert spec["qualifications"] == [AGE_21_25]
    assert "mod_on" not in spec
    planned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert planned.exit_code == 0, planned.stdout + planned.stderr


@pytest.fixture
def survey_with_sessions(client) -> int:
    survey_id = client.create_survey({**SURVEY, "offer_price": 10.0})["ps_survey_id"]
    client.set_survey_status(survey_id, 22)
    client.simulate_traffic(survey_id, {"respondents": 30, "seed": 5})
    return survey_id


def test_the_export_carries_the_numbers_as_the_service_wrote_them(
    documented_project, run_cli, survey_with_sessions
):
    result = run_cli("transactions", "list", str(survey_with_sessions), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 30
    completes = [r for r in rows if r["Respondent Status Code"] == "21"]
    assert completes and all(r["Respondent Buyer CPI"] == "10.00" for r in completes)
    assert any(r["Respondent LOI"] == "" for r in rows)
    assert all(" " in r["PS Entry DateTime"] and "T" not in r["PS Entry DateTime"] for r in rows)


def test_one_transaction_answered_as_an_array_of_one_is_one_record(
    documented_project, run_cli, client, survey_with_sessions
):
    transaction_id = client.get_transactions_page(survey_with_sessions)[0][0]["Transaction ID"]
    assert client.get_transaction(survey_with_sessions, transaction_id)["Transaction ID"] == (
        transaction_id
    )
    result = run_cli("transactions", "get", str(survey_with_sessions), transaction_id)
    assert json.loads(result.stdout)["Transaction ID"] == transaction_id


def test_a_401_body_with_msg_is_the_message_shown(documented):
    stranger = ApiClient(documented.url, "not-a-key", retries=0)
    with pytest.raises(ApiError) as refused:
        stranger.get_survey(10001)
    stranger.close()
    assert refused.value.status == 401
    assert str(refused.value).endswith("answered 401: Invalid access token")


def test_quota_counts_sent_as_text_are_read_as_numbers(client):
    from surveyctl.api.reading import with_numbers

    row = {"buyer_quota_id": "male", "completes_goal": "50", "completes_fielded": ""}
    assert with_numbers(row, ("completes_goal", "completes_fielded")) == {
        "buyer_quota_id": "male", "completes_goal": 50, "completes_fielded": None}  # fmt: skip


@pytest.mark.parametrize(
    ("live", "manifest"),
    [({"offer_price": "1.30"}, {"offer_price": 1.3}),
     ({"offer_price": 10}, {"offer_price": 10.0}),
     ({"expected_loi": ""}, {}),
     ({"qualifications": [{"qualification_code": "212", "range_sets": [
         {"from": "21", "to": "25", "units": "311"}]}]}, {"qualifications": [AGE_21_25]}),
     ({"survey_title": "T", "mod_on": 1, "crtd_on": 2}, {"survey_title": "T"}),
     ({"quotas": [{"buyer_quota_id": "a", "required_count": "5", "criteria": [],
                   "quota_title": "", "extra": 1}]},
      {"quotas": [{"buyer_quota_id": "a", "required_count": 5, "criteria": []}]})],
)  # fmt: skip
def test_documented_spellings_compare_equal_to_the_manifest(live, manifest):
    assert normalise_survey(live) == normalise_survey(manifest)


def test_condition_codes_and_titles_of_digits_stay_text():
    live = {"survey_title": "2026", "qualifications": [{"qualification_code": 211,
                                                          "condition_codes": ["111"]}]}  # fmt: skip
    body = update_body(live)
    assert body["survey_title"] == "2026"
    assert body["qualifications"][0]["condition_codes"] == ["111"]


NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n"
    "</html>\r\n"
)


def _failed_read_through_a_gateway(sandbox, status: int, kind: str, body: str):
    """The error and the gateway's URL of a survey read through a gateway in front of the
    marketplace that answers every request `status` with `body` of Content-Type `kind`."""
    from ..reconcile.proxies import Proxy

    class Gateway(Proxy):
        def reshape(self, request, answer, headers) -> bytes:
            answer.status_code = status
            headers["Content-Type"] = kind
            return body.encode()

    gateway = Gateway(sandbox.url)
    client = ApiClient(gateway.url, BUYER_1, retries=0)
    try:
        with pytest.raises(ApiError) as failed:
            client.get_survey(10001)
    finally:
        client.close()
        gateway.stop()
    return failed.value, gateway.url


def test_an_html_error_page_is_shown_as_one_line_of_its_title(sandbox):
    error, url = _failed_read_through_a_gateway(sandbox, 502, "text/html", NGINX_502)
    assert str(error) == f"GET {url}/buyers/v2/surveys/10001 answered 502: 502 Bad Gateway"


@pytest.mark.parametrize(
    ("body", "shown"),
    [('["no such survey"]', '["no such survey"]'), ('"gone"', "gone"), ("null", "null")],
)
def test_an_error_body_of_json_that_is_no_object_is_shown_as_the_service_wrote_it(
    sandbox, body, shown
):
    error, url = _failed_read_through_a_gateway(sandbox, 404, "application/json", body)
    assert error.status == 404
    assert str(error) == f"GET {url}/buyers/v2/surveys/10001 answered 404: {shown}"
