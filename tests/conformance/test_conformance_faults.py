"""`surveyctl conformance` when the service misbehaves on the way, over real HTTP through a
loopback proxy in front of the sandbox: an answer that is no answer (429, 502) is not a
difference of the account, and a service lost mid-run says what it leaves on the account."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from werkzeug.wrappers import Request, Response

from surveyctl.api import ApiClient
from surveyctl.cli.main import cli
from surveyctl.conformance.writes import INVALID_KEY
from surveyctl.sandbox.process import served

from ..reconcile.proxies import Proxy
from .conftest import drafts_left

KEY = "sandbox-buyer-1"
JOURNAL = Path(".surveyctl") / "conformance" / "local.json"
_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")


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


class DeleteRefused(Proxy):
    """A service that refuses to delete surveys (403, as for a key without that right) and
    keeps every request it was sent (`sent`: "METHOD /path")."""

    def __init__(self, upstream: str):
        super().__init__(upstream)
        self.sent: list[str] = []

    def _app(self, environ, start_response):
        request = Request(environ)
        self.sent.append(f"{request.method} {request.path}")
        if request.method == "DELETE" and _SURVEY.match(request.path):
            body = {"ps_api_response_code": 1002, "ps_api_response_message": "refused (test)"}
            answer = Response(json.dumps(body), 403)
            answer.content_type = "application/json"
            return answer(environ, start_response)
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
    assert "the next `surveyctl --env local conformance` removes it" in message
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
        assert "the next `surveyctl --env local conformance` removes it" in message


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


@pytest.fixture
def refused(invoke, tmp_path):
    """One run through DeleteRefused in front of a sandbox of its own: (the proxy, the result,
    the sandbox's url), the sandbox serving until the test ends."""
    with served(tmp_path / "s.db") as sandbox:
        proxy = DeleteRefused(sandbox.url)
        try:
            yield proxy, invoke(proxy.url, "--format", "json"), sandbox.url
        finally:
            proxy.stop()


def test_a_refused_delete_leaves_the_draft_a_draft_never_closed_or_launched(refused):
    proxy, _, url = refused
    [left] = _drafts(url)
    with ApiClient(url, KEY, retries=0) as client:
        assert client.get_survey(left)["ps_survey_status"] == 11
    assert not [sent for sent in proxy.sent if sent.endswith("/status") and "PUT" in sent]


def test_a_refused_delete_fails_the_run_naming_the_draft_its_cost_and_how_to_remove_it(refused):
    _, result, url = refused
    [left] = _drafts(url)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(
        f"Error: the service refused to delete the run's draft (DELETE {_host(result)}"
    )
    assert f"the draft {left} is left on the account" in message
    assert "it was never launched, so it draws no traffic and costs nothing" in message
    assert f"Delete survey {left} where the account's surveys are managed, then delete" in message
    assert str(JOURNAL) in message
    assert "conformance` removes it" not in message


def test_a_refused_delete_is_the_delete_rows_difference(refused):
    _, result, _ = refused
    row = next(row for row in json.loads(result.stdout)["rows"] if row["id"] == "delete")
    assert row["verdict"] == "differs"
    assert row["seen"].endswith("answered 403 (code 1002): refused (test)")


def test_a_refused_delete_keeps_the_journal_naming_the_draft(refused):
    _, _, url = refused
    assert _drafts(url) == [_journalled_draft()]


def test_the_next_run_stops_before_any_check_while_the_delete_is_refused(refused, invoke):
    proxy, _, url = refused
    [left] = _drafts(url)
    again = invoke(proxy.url, "--format", "json")
    assert again.exit_code == 1
    message = again.stderr.strip().splitlines()[-1]
    assert message.startswith(f"Error: the draft {left} of an earlier conformance run cannot be")
    assert "nothing was checked" in message
    assert "draws no traffic and costs nothing" in message
    assert again.stdout == ""
    assert _drafts(url) == [left]  # no second draft


def _host(result: Result) -> str:
    """The proxy's address, as the run's first line on stderr names it."""
    return re.search(r"\((http://[^)]+)\)", result.stderr).group(1)


class KeyInPageHeader(Proxy):
    """A service that repeats the access-token it was sent as the `total_pages` header of
    every answer, as a careless gateway echoing request headers might."""

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        headers["total_pages"] = request.headers.get("access-token", "")
        return answer.content


def test_a_key_the_service_repeats_in_what_a_check_saw_is_redacted_in_the_report(invoke, sandbox):
    proxy = KeyInPageHeader(sandbox.url)
    try:
        result = invoke(proxy.url, "--format", "json", "--output", "report.json")
    finally:
        proxy.stop()
    report = Path("report.json").read_text(encoding="utf-8")
    assert "total_pages '[redacted]'" in report
    assert KEY not in report
    assert KEY not in result.stdout + result.stderr


class KeyInTextAnswer(Proxy):
    """Answers every call with a text body that repeats the key across the 200th character."""

    def reshape(self, request, answer, headers) -> bytes:
        headers["Content-Type"] = "text/plain"
        return ("x" * 190 + KEY + " and more").encode()


def test_a_text_answer_a_check_sees_is_cut_without_leaving_part_of_the_key(sandbox):
    from surveyctl.api import paths
    from surveyctl.conformance.probe import Probe

    proxy = KeyInTextAnswer(sandbox.url)
    client = ApiClient(proxy.url, KEY, retries=0)
    try:
        answer = Probe(client, "en_US").call("GET", paths.surveys())
    finally:
        client.close()
        proxy.stop()
    assert answer.body == "x" * 190 + "[redacted]"
    assert KEY[:5] not in answer.body
