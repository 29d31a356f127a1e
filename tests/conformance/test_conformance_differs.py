"""`surveyctl conformance` against a service that contradicts an assumption, over real HTTP
through a loopback proxy in front of the sandbox: the report says "differs" for that check,
with what came back, and every other check says what it says against the sandbox itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from werkzeug.wrappers import Request

from surveyctl.cli.main import cli

from ..reconcile.proxies import Proxy

KEY = "sandbox-buyer-1"
_LIST = "/buyers/v2/surveys"
_ATTRIBUTES = "/buyers/v3/attributes"
_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")


class Contradicting(Proxy):
    """Passes everything through, but answers the requests `picks` chooses as `answer` says:
    `answer(request, body, headers)` returns (status, body), `headers` changed in place. With
    `reshapes_reads`, `picks` sees only the run's own reads the service answered 200 (not the
    probe of an invalid key, nor the 404 after the draft's delete)."""

    reshapes_reads = False

    def picks(self, request: Request) -> bool:
        raise NotImplementedError

    def answer(self, request: Request, body, headers: dict) -> tuple[int, object]:
        raise NotImplementedError

    def reshape(self, request, answer, headers) -> bytes:
        if self.reshapes_reads and not (
            request.method == "GET"
            and answer.status_code == 200
            and request.headers.get("access-token") == KEY
        ):
            return answer.content
        if not self.picks(request):
            return answer.content
        body = answer.json() if answer.content else None
        status, body = self.answer(request, body, headers)
        answer.status_code = status
        headers["Content-Type"] = "application/json"
        return json.dumps(body).encode()


def _run(url: str, folder: Path, monkeypatch) -> Result:
    """`surveyctl conformance --format json` in `folder` against `url`."""
    monkeypatch.chdir(folder)
    config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_D_KEY"}}}
    Path("surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    command = ["--env", "local", "--timeout", "3", "conformance", "--format", "json"]
    return CliRunner().invoke(cli, command, env={"SURVEYCTL_D_KEY": KEY})


@pytest.fixture
def run_through(sandbox, tmp_path, monkeypatch):
    """Runs `surveyctl conformance --format json` through `proxy_class` in front of the
    session sandbox; the report's rows by id."""

    def run(proxy_class: type[Proxy]) -> dict[str, dict]:
        proxy = proxy_class(sandbox.url)
        try:
            result = _run(proxy.url, tmp_path, monkeypatch)
        finally:
            proxy.stop()
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return {row["id"]: row for row in json.loads(result.stdout)["rows"]}

    return run


@pytest.fixture
def plain(sandbox, tmp_path, monkeypatch) -> dict[str, str]:
    """The verdicts of a run against the sandbox itself, by id."""
    folder = tmp_path / "plain"
    folder.mkdir()
    result = _run(sandbox.url, folder, monkeypatch)
    return {row["id"]: row["verdict"] for row in json.loads(result.stdout)["rows"]}


def _others(rows: dict[str, dict], *changed: str) -> dict[str, str]:
    return {name: row["verdict"] for name, row in rows.items() if name not in changed}


def _without(plain: dict[str, str], *changed: str) -> dict[str, str]:
    return {name: verdict for name, verdict in plain.items() if name not in changed}


class ListModOnAsText(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return request.path == _LIST

    def answer(self, request, body, headers):
        return 200, [dict(item, mod_on=str(item["mod_on"])) for item in body]


def test_a_list_writing_mod_on_as_text_holds_as_the_plan_reads_it(run_through, plain):
    rows = run_through(ListModOnAsText)
    assert rows["list-mod_on"]["verdict"] == "holds", rows["list-mod_on"]["seen"]
    assert _others(rows) == plain


class SurveyModOnAsText(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return bool(_SURVEY.match(request.path))

    def answer(self, request, body, headers):
        return 200, dict(body, mod_on=str(body["mod_on"]), crtd_on=str(body["crtd_on"]))


def test_a_survey_writing_mod_on_as_text_holds_for_both_mod_on_checks(run_through, plain):
    rows = run_through(SurveyModOnAsText)
    assert rows["get-mod_on"]["verdict"] == "holds", rows["get-mod_on"]["seen"]
    assert rows["mod_on-moves"]["verdict"] == "holds", rows["mod_on-moves"]["seen"]
    assert _others(rows) == plain
