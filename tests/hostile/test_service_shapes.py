"""A service that answers JSON of another shape than the call's (a list for a survey, a page
listing numbers, an object for a page) is one sentence naming the call, exit 1: never a
traceback from the code that reads a field of the answer."""

from __future__ import annotations

import pytest
from werkzeug.wrappers import Request

from ..reconcile.proxies import Proxy
from .conftest import point_project_at

KEY = "sk-live-7f3c9a1e5b2d4c6e8a0b"


class ShapeProxy(Proxy):
    """A marketplace whose every answer is 200 with `body`."""

    body = b"null"

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        answer.status_code = 200
        headers["Content-Type"] = "application/json"
        return self.body


@pytest.fixture
def shaped(project, sandbox, monkeypatch):
    proxy = ShapeProxy(sandbox.url)
    point_project_at(project, proxy.url, "SURVEYCTL_SHAPE_KEY")
    monkeypatch.setenv("SURVEYCTL_SHAPE_KEY", KEY)
    yield proxy
    proxy.stop()


def _error(result) -> str:
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("body", [b"[1, 2]", b'"live"', b"null", b"[{}]"])
def test_a_survey_answered_as_anything_but_an_object_is_one_sentence(shaped, run_cli, body):
    shaped.body = body
    error = _error(run_cli("status", "10001"))
    assert error.endswith("/surveys/10001 answered 200: the body is not a JSON object")


@pytest.mark.parametrize(
    "command",
    [("surveys", "list"), ("transactions", "list", "10001")],
    ids=["surveys", "transactions"],
)
def test_a_page_listing_anything_but_objects_is_one_sentence(shaped, run_cli, command):
    shaped.body = b"[1, 2]"
    assert _error(run_cli(*command)).endswith(
        "answered 200: the body is not a list of JSON objects"
    )


def test_a_page_answered_as_an_object_is_one_sentence(shaped, run_cli):
    shaped.body = b'{"transactions": []}'
    error = _error(run_cli("transactions", "list", "10001"))
    assert error.endswith("/surveys/10001/transactions answered 200: the body is not a list")
