"""`surveyctl conformance` when the service misbehaves on the way, over real HTTP through a
loopback proxy in front of the sandbox: an answer that is no answer (429, 502) is not a
difference of the account, and a service lost mid-run says what it leaves on the account."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from werkzeug.wrappers import Request, Response

from surveyctl.cli.main import cli
from surveyctl.conformance.writes import INVALID_KEY
from surveyctl.sandbox.process import served

from ..reconcile.proxies import Proxy
from .conftest import drafts_left

KEY = "sandbox-buyer-1"
JOURNAL = Path(".surveyctl") / "conformance" / "local.json"


class FirstInvalidKeyThrottled(Proxy):
    """Answers the first request made with the run's invalid key 429 (Retry-After 0), as a
    service or its gateway under load does; everything else passes through."""

    def __init__(self, upstream: str):
        super().__init__(upstream)
        self.throttled = threading.Event()

    def _app(self, environ, start_response):
        request = Request(environ)
        if request.headers.get("access-token") == INVALID_KEY and not self.throttled.is_set():
            self.throttled.set()
            body = {"ps_api_response_code": 1027, "ps_api_response_message": "slow down"}
            answer = Response(json.dumps(body), 429, {"Retry-After": "0"})
            answer.content_type = "application/json"
            return answer(environ, start_response)
        return super()._app(environ, start_response)


class LostAfterPuts(Proxy):
    """Passes requests through until the `puts`-th PUT, which is never answered: from then
    on the gateway answers 502 to everything (`gone=False`) or the proxy stops listening
    (`gone=True`: connections refused, as a stopped sandbox)."""

    def __init__(self, upstream: str, puts: int, *, gone: bool):
        super().__init__(upstream)
        self.left = puts
        self.gone = gone
        self.lost = threading.Event()

    def _app(self, environ, start_response):
        if Request(environ).method == "PUT":
            self.left -= 1
            if self.left <= 0 and not self.lost.is_set():
                self.lost.set()
                if self.gone:
                    threading.Thread(target=self.server.shutdown, daemon=True).start()
        if self.lost.is_set():
            return Response("bad gateway", 502)(environ, start_response)
        return super()._app(environ, start_response)


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """Runs `surveyctl --env local conformance ARGS` in tmp_path against `url`."""
    monkeypatch.chdir(tmp_path)

    def run(url: str, *args: str) -> Result:
        config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_F_KEY"}}}
        Path("surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = ["--env", "local", "--timeout", "3", "conformance", *args]
        return CliRunner().invoke(cli, command, env={"SURVEYCTL_F_KEY": KEY})

    return run


def _drafts(url: str) -> list[int]:
    return [s["ps_survey_id"] for s in drafts_left(url)]


def _journalled_draft() -> int:
    return json.loads(JOURNAL.read_text(encoding="utf-8"))["ps_survey_id"]


def test_a_429_on_the_invalid_key_probe_is_retried_not_a_difference(invoke, sandbox):
    proxy = FirstInvalidKeyThrottled(sandbox.url)
    try:
        result = invoke(proxy.url, "--format", "json")
    finally:
        proxy.stop()
    assert result.exit_code == 0, result.output
    assert proxy.throttled.is_set()
    rows = {row["id"]: row for row in json.loads(result.stdout)["rows"]}
    assert rows["invalid-key-401"]["verdict"] == "holds", rows["invalid-key-401"]["seen"]


def test_the_retry_of_the_invalid_key_probe_is_said_on_stderr(invoke, sandbox):
    proxy = FirstInvalidKeyThrottled(sandbox.url)
    try:
        result = invoke(proxy.url, "--format", "json")
    finally:
        proxy.stop()
    assert proxy.throttled.is_set()
    assert "surveyctl: retrying GET /surveys at once (attempt 2 of 6): answered 429" in (
        result.stderr.splitlines()
    )


def test_answers_of_a_failing_gateway_are_not_checked_rather_than_differences(invoke, tmp_path):
    with served(tmp_path / "s.db") as sandbox:
        proxy = LostAfterPuts(sandbox.url, 3, gone=False)
        try:
            result = invoke(proxy.url, "--format", "json")
        finally:
            proxy.stop()
        report = json.loads(result.stdout)
        verdicts = {row["id"]: row["verdict"] for row in report["rows"]}
        assert "differs" not in {verdicts[r] for r in ("survey-status", "quota-list", "patch")}
        assert verdicts["survey-status"] == "not checked"
        assert _drafts(sandbox.url) == [_journalled_draft()]


def test_a_draft_the_run_cannot_remove_fails_the_run_naming_it_and_its_record(invoke, tmp_path):
    with served(tmp_path / "s.db") as sandbox:
        proxy = LostAfterPuts(sandbox.url, 3, gone=False)
        try:
            result = invoke(proxy.url)
        finally:
            proxy.stop()
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith("Error: the run's draft could not be removed (DELETE ")
    assert f"the draft {_journalled_draft()} is left on the account" in message
    assert str(JOURNAL) in message
    assert "the next `surveyctl conformance` removes it" in message
    assert "The draft" not in result.stdout  # no "was DELETE ... answered 502" line


def test_a_service_lost_mid_run_says_what_stopped_it_and_which_draft_is_left(invoke, tmp_path):
    with served(tmp_path / "s.db") as sandbox:
        proxy = LostAfterPuts(sandbox.url, 3, gone=True)
        try:
            result = invoke(proxy.url, "--format", "json")
        finally:
            proxy.server.server_close()
            proxy.session.close()
        assert result.exit_code == 1
        message = result.stderr.strip().splitlines()[-1]
        assert message.startswith("Error: cannot reach environment 'local'")
        assert "(PUT /surveys/" in message  # what stopped it, not the cleanup
        assert f"the draft {_journalled_draft()} is left on the account" in message
        assert "the next `surveyctl conformance` removes it" in message


def test_the_next_run_removes_the_draft_a_lost_service_left(invoke, tmp_path):
    with served(tmp_path / "s.db") as sandbox:
        proxy = LostAfterPuts(sandbox.url, 3, gone=False)
        try:
            invoke(proxy.url)
        finally:
            proxy.stop()
        left = _journalled_draft()
        again = invoke(sandbox.url, "--format", "json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["leftover_draft"]["ps_survey_id"] == left
        assert _drafts(sandbox.url) == []
        assert not JOURNAL.exists()
