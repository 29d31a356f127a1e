"""Rows of `surveyctl conformance` the client's correctness rests on, checked against the
sandbox (they hold) and against a deliberately wrong service (a loopback proxy in front of the
sandbox that alters one kind of answer: they differ)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from surveyctl.cli.main import cli

from ..reconcile.proxies import Proxy

KEY = "sandbox-buyer-1"
_LIST = re.compile(r"^/buyers/v2/surveys/?$")
_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")


class ListWithoutLocale(Proxy):
    """A survey list whose items lack `survey_localization` (GET of one survey still has it)."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and _LIST.match(request.path) and answer.ok:
            items = [
                {k: v for k, v in item.items() if k != "survey_localization"}
                for item in answer.json()
            ]
            return json.dumps(items).encode()
        return answer.content


class QuotasRemadeOnEveryRead(Proxy):
    """A service that gives every quota a new ps_quota_id (as one that re-creates the quotas
    of a PUT would): each GET of a survey shows fresh ids."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and _SURVEY.match(request.path) and answer.ok:
            body = answer.json()
            for quota in body.get("quotas") or []:
                quota["ps_quota_id"] = str(uuid.uuid4())
            return json.dumps(body).encode()
        return answer.content


@pytest.fixture
def verdicts(tmp_path, monkeypatch):
    """{row id: (verdict, seen)} of one run against `url`."""
    monkeypatch.chdir(tmp_path)

    def run(url: str) -> dict[str, tuple[str, str]]:
        config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_A_KEY"}}}
        Path("surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = ["--env", "local", "conformance", "--format", "json"]
        result = CliRunner().invoke(cli, command, env={"SURVEYCTL_A_KEY": KEY})
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)["rows"]
        return {row["id"]: (row["verdict"], row["seen"]) for row in rows}

    return run


def _through(proxy_class, upstream: str, run) -> dict[str, tuple[str, str]]:
    proxy = proxy_class(upstream)
    try:
        return run(proxy.url)
    finally:
        proxy.stop()


def test_the_list_carries_the_fields_surveyctl_recognises_a_survey_by(verdicts, sandbox):
    assert verdicts(sandbox.url)["list-identity"][0] == "holds"


def test_the_list_identity_row_holds_against_a_strict_sandbox(verdicts, strict_sandbox):
    assert verdicts(strict_sandbox.url)["list-identity"][0] == "holds"


def test_a_list_without_the_locale_differs_naming_the_field(verdicts, sandbox):
    verdict, seen = _through(ListWithoutLocale, sandbox.url, verdicts)["list-identity"]
    assert verdict == "differs"
    assert "survey_localization" in seen


def test_quota_ids_are_kept_across_a_put_and_a_quota_put(verdicts, sandbox):
    assert verdicts(sandbox.url)["quota-ids-kept"][0] == "holds"


def test_quota_ids_that_change_differ(verdicts, sandbox):
    verdict, _ = _through(QuotasRemadeOnEveryRead, sandbox.url, verdicts)["quota-ids-kept"]
    assert verdict == "differs"
