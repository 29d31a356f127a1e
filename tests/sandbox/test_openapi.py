"""The OpenAPI 3.1 description of the Buyer API, generated from schemas/api and served at
`/openapi.json` (schemathesis runs against it in test_schemathesis.py)."""

from __future__ import annotations

import json
import re

import requests
from click.testing import CliRunner
from openapi_spec_validator import validate

from surveyctl.cli.main import cli
from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.openapi import COMPONENTS, JSON_VALUE, openapi_document
from surveyctl.sandbox.store import Store
from surveyctl.schemafiles import load_schema, schemas_dir


def _served(sandbox) -> dict:
    response = requests.get(sandbox.url + "/openapi.json", timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    return response.json()


def test_the_served_description_is_valid_openapi_3_1(sandbox):
    document = _served(sandbox)
    assert document["openapi"] == "3.1.0"
    validate(document)


def test_the_served_description_names_the_sandbox_as_its_server(sandbox):
    assert _served(sandbox)["servers"][0]["url"] == sandbox.url


def test_it_needs_no_access_token_and_the_api_still_does(sandbox):
    assert requests.get(sandbox.url + "/openapi.json", timeout=10).status_code == 200
    assert requests.get(sandbox.url + "/buyers/v2/surveys", timeout=10).status_code == 401


def test_every_route_of_the_buyer_api_is_described_and_nothing_more(tmp_path):
    store = Store(tmp_path / "routes.db")
    rules = list(create_app(store).url_map.iter_rules())
    store.close()
    described = {
        (method.upper(), path)
        for path, operations in openapi_document()["paths"].items()
        for method in operations
    }
    served = set()
    for rule in rules:
        if rule.rule.startswith("/buyers/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            served |= {(m, path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert described == served


def test_every_schema_file_is_one_component_and_none_is_copied():
    components = openapi_document()["components"]["schemas"]
    files = sorted(p.name for p in (schemas_dir() / "api").glob("*.json"))
    assert sorted(components) == sorted(
        [JSON_VALUE, *(name.removesuffix(".json") for name in files)]
    )
    for name in files:
        original = load_schema(f"api/{name}")
        component = components[name.removesuffix(".json")]
        assert set(component) - {"additionalProperties"} == set(original) - {
            "$schema",
            "additionalProperties",
        }


def test_references_between_files_point_into_the_document():
    text = json.dumps(openapi_document())
    refs = re.findall(r'"\$ref": "([^"]+)"', text)
    assert refs and all(ref.startswith(COMPONENTS) for ref in refs)
    assert "common.json" not in text


def test_the_transaction_status_call_describes_its_own_error_body():
    operation = openapi_document()["paths"][
        "/buyers/v2/surveys/{survey_id}/transactions/{transaction_id}/status"
    ]["post"]
    schema = operation["responses"]["400"]["content"]["application/json"]["schema"]
    assert {"$ref": COMPONENTS + "transaction-status.error"} in schema["anyOf"]


def test_surveyctl_sandbox_openapi_prints_the_description():
    result = CliRunner().invoke(cli, ["sandbox", "openapi"])
    assert result.exit_code == 0
    printed = json.loads(result.output)
    assert printed == openapi_document()
    validate(printed)


def test_the_transaction_reads_are_described_refusing_a_bad_key_with_403_not_401():
    paths = openapi_document()["paths"]
    for path in (
        "/buyers/v3/surveys/{survey_id}/transactions",
        "/buyers/v3/surveys/{survey_id}/transactions/{transaction_id}",
    ):
        responses = paths[path]["get"]["responses"]
        assert "401" not in responses
        assert "access-token" in responses["403"]["description"]
