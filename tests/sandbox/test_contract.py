"""The contract: request bodies and, with check_responses, every response meet schemas/api/."""

from __future__ import annotations

import json

import pytest
import requests
from flask import Blueprint
from jsonschema import Draft202012Validator

from surveyctl.sandbox import app as sandbox_app
from surveyctl.sandbox import contract
from surveyctl.sandbox.server import SandboxOptions, start
from surveyctl.schemafiles import schemas_dir

SCHEMAS = sorted(p.name for p in (schemas_dir() / "api").glob("*.json"))


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_is_valid_draft_2020_12_and_its_refs_resolve(name):
    schema = json.loads((schemas_dir() / "api" / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    contract.validator(name).is_valid({})  # resolving a bad $ref raises here


def test_a_request_error_names_the_field_by_its_json_path(raw, make_body):
    body = make_body()
    body["quotas"][0]["criteria"][0]["qualification_code"] = "211"
    response = raw.v2("POST", "/surveys", json=body)
    assert response.status_code == 400
    assert "quotas[0].criteria[0].qualification_code" in response.json()["ps_api_response_message"]


def test_a_created_survey_meets_the_response_schema(raw):
    assert contract.violation("survey.response.json", raw.create()) is None


def test_a_response_that_breaks_its_schema_becomes_a_500_naming_the_violation(
    tmp_path, monkeypatch
):
    broken = Blueprint("broken", __name__, url_prefix="/buyers/v2")

    @broken.get("/broken")
    def _broken():
        return contract.reply({"buyer_quota_id": "x"}, 200, "quota-update.response.json")

    monkeypatch.setattr(sandbox_app, "BLUEPRINTS", [*sandbox_app.BLUEPRINTS, broken])
    running = start(SandboxOptions(db_path=tmp_path / "s.db", check_responses=True))
    try:
        response = requests.get(
            running.url + "/buyers/v2/broken",
            headers={"access-token": "sandbox-buyer-1"},
            timeout=10,
        )
    finally:
        running.stop()
    assert response.status_code == 500
    message = response.json()["ps_api_response_message"]
    assert "quota-update.response.json" in message
    assert "ps_quota_id" in message


def test_an_unknown_path_answers_404_with_the_error_body(raw):
    response = raw.v2("GET", "/no/such/thing")
    assert response.status_code == 404
    assert response.json()["ps_api_response_code"] == 1003
