"""The strict mode on request: `sandbox serve --strict` and the embedded sandbox with
`SURVEYCTL_SANDBOX_STRICT` refuse request fields the schemas do not list; without them the
same body is taken."""

from __future__ import annotations

import pytest
import requests

from surveyctl.config import load_config
from surveyctl.connection import open_client
from surveyctl.errors import ApiError

from .conftest import HEADERS, survey_body

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
