"""The API key never reaches a person's screen, whatever its shape and whatever fails."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from werkzeug.wrappers import Request

from surveyctl.api import ApiClient
from surveyctl.errors import ConnectionFailed, SurveyctlError

from ..loopback import LoopbackServer
from ..reconcile.proxies import Proxy
from .conftest import point_project_at, survey_manifest

SECRET = "sk-live-7f3c9a1e5b2d4c6e8a0b"

# A key pasted with a line break, a leading space, a Windows line end, a tab, a typographic
# character outside Latin-1, and one inside Latin-1 but outside ASCII.
BAD_SHAPES = {
    "trailing line break": SECRET + "\n",
    "leading space": " " + SECRET,
    "windows line end": SECRET + "\r\n",
    "inner tab": SECRET[:7] + "\t" + SECRET[7:],
    "non-latin-1 character": SECRET + "\u20ac",
    "latin-1 character": SECRET + "\u00e9",
}


@pytest.fixture
def secret_project(project, manifests, sandbox, monkeypatch):
    point_project_at(project, sandbox.url, "SURVEYCTL_SECRET_KEY")
    manifests.write(survey_manifest("tracker"))
    return project


def _shown(result) -> str:
    return result.stdout + result.stderr


@pytest.mark.parametrize("shape", sorted(BAD_SHAPES))
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_a_badly_shaped_key_is_refused_by_name_without_showing_it(
    secret_project, run_cli, monkeypatch, shape, debug
):
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", BAD_SHAPES[shape])
    args = ["--debug"] if debug else []
    for command in (["plan", "manifests"], ["surveys", "list"]):
        result = run_cli(*args, *command)
        assert result.exit_code == 1, _shown(result)
        assert "the API key in $SURVEYCTL_SECRET_KEY" in result.stderr
        assert SECRET[:12] not in _shown(result)
        assert "Traceback" not in result.stderr or debug


def test_the_shape_error_says_what_is_wrong_in_one_sentence(secret_project, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET + "\n")
    result = run_cli("surveys", "list")
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        "Error: environment 'local': the API key in $SURVEYCTL_SECRET_KEY contains a line "
        "break; set the variable to the key alone"
    )


def test_a_key_too_short_to_redact_safely_is_refused(secret_project, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", "key")
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: environment 'local': the API key in $SURVEYCTL_SECRET_KEY is shorter than 8 "
        "characters, too short to be an API key; set the variable to the key alone"
    )


def test_ordinary_words_stay_when_a_key_is_redacted(sandbox):
    from surveyctl.api.secrets import redact

    ApiClient(sandbox.url, "key", retries=0).close()  # too short to be registered
    ApiClient(sandbox.url, SECRET, retries=0).close()
    assert redact(f"The merge keys (<<) and {SECRET}") == "The merge keys (<<) and [redacted]"


@pytest.mark.parametrize("shape", sorted(BAD_SHAPES))
def test_the_client_never_repeats_a_badly_shaped_key_in_its_errors(sandbox, shape):
    client = ApiClient(sandbox.url, BAD_SHAPES[shape], retries=0)
    try:
        with pytest.raises(SurveyctlError) as failed:
            client.get_survey(10001)
    finally:
        client.close()
    assert SECRET[:12] not in str(failed.value)
    if isinstance(failed.value, ConnectionFailed):  # refused before sending: says why
        assert "[redacted]" in str(failed.value) or "cannot carry" in str(failed.value)


class EchoingProxy(Proxy):
    """A marketplace that repeats the access-token it was sent in its 401 message, as a
    careless service might."""

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        if answer.status_code != 401:
            return answer.content
        token = request.headers.get("access-token", "")
        return json.dumps(
            {"ps_api_response_code": 1001, "ps_api_response_message": f"unknown token {token}"}
        ).encode()


@pytest.fixture
def echoing(sandbox):
    proxy = EchoingProxy(sandbox.url)
    yield proxy
    proxy.stop()


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_a_key_the_service_repeats_in_an_error_is_redacted(
    secret_project, echoing, run_cli, monkeypatch, debug
):
    point_project_at(secret_project, echoing.url, "SURVEYCTL_SECRET_KEY")
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET)
    result = run_cli(*(["--debug"] if debug else []), "surveys", "list")
    assert result.exit_code == 1
    assert "answered 401" in result.stderr
    assert "unknown token [redacted]" in result.stderr
    assert SECRET not in _shown(result)


def test_a_bug_shows_its_traceback_without_the_key(secret_project, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET)

    def broken(self, status=None):
        raise RuntimeError(f"internal state holds {SECRET}")

    monkeypatch.setattr(ApiClient, "list_surveys", broken)
    result = run_cli("surveys", "list")
    assert result.exit_code == 1
    assert "Traceback" in result.stderr
    assert "internal state holds [redacted]" in result.stderr
    assert "unexpected RuntimeError (a bug in surveyctl" in result.stderr
    assert SECRET not in _shown(result)


# A key of the base64 alphabet, with characters JSON encoders commonly escape: `/` (PHP's
# json_encode writes `\/`) and `<`, `>`, `&` (Go's encoding/json writes `\u003c` and so on).
ESCAPABLE_SECRET = "sk/live+7f3c9a1e<5b2d>4c6e&8a0b="


class JsonEscapingEchoProxy(Proxy):
    """A marketplace that repeats the access-token in its 401 body, JSON-escaped as PHP and Go
    services write it."""

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        if answer.status_code != 401:
            return answer.content
        token = request.headers.get("access-token", "")
        body = json.dumps({"ps_api_response_message": f"unknown token {token}"})
        return (
            body.replace("/", "\\/")
            .replace("<", "\\u003c")
            .replace(">", "\\u003E")
            .replace("&", "\\u0026")
            .encode()
        )


@pytest.fixture
def escaping_echo(sandbox):
    proxy = JsonEscapingEchoProxy(sandbox.url)
    yield proxy
    proxy.stop()


def test_a_key_the_service_repeats_json_escaped_stays_out_of_the_debug_output(
    secret_project, escaping_echo, run_cli, monkeypatch
):
    point_project_at(secret_project, escaping_echo.url, "SURVEYCTL_SECRET_KEY")
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", ESCAPABLE_SECRET)
    result = run_cli("--debug", "surveys", "list")
    assert result.exit_code == 1
    assert "unknown token [redacted]" in result.stderr  # the error line and the debug line
    assert "1e\\u003c5b2d" not in _shown(result)  # the middle of the key, as it was escaped
    assert "7f3c9a1e" not in _shown(result)


class PaddingEchoProxy(Proxy):
    """A marketplace whose every answer is a 500 repeating the access-token after `padding`
    characters, in the plain text a gateway might send: where an error message or the `--debug`
    log cuts a long body short."""

    padding = 0

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        answer.status_code = 500
        headers["Content-Type"] = "text/plain"
        token = request.headers.get("access-token", "")
        return ("z" * self.padding + token + " was refused").encode()


@pytest.fixture
def padding_echo(sandbox):
    proxy = PaddingEchoProxy(sandbox.url)
    yield proxy
    proxy.stop()


@pytest.mark.parametrize(
    ("padding", "debug"), [(295, False), (1993, True)], ids=["error message", "debug log"]
)
def test_a_key_the_service_repeats_where_a_long_body_is_cut_leaves_no_characters_of_it(
    secret_project, padding_echo, run_cli, monkeypatch, padding, debug
):
    # The error message quotes 300 characters of a body, the debug log 2,000: the key starts
    # a few characters before the cut.
    padding_echo.padding = padding
    point_project_at(secret_project, padding_echo.url, "SURVEYCTL_SECRET_KEY")
    monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET)
    result = run_cli(*(["--debug"] if debug else []), "status", "10001")
    assert result.exit_code == 1
    assert "answered 500" in result.stderr
    assert SECRET[:5] not in _shown(result)


class KeyCatcher(LoopbackServer):
    """Another host (127.0.0.2) that notes the access-token of every request it gets."""

    def __init__(self):
        self.tokens: list[str | None] = []
        super().__init__(self._app, host="127.0.0.2")

    def _app(self, environ, start_response):
        self.tokens.append(environ.get("HTTP_ACCESS_TOKEN"))
        start_response("401 Unauthorized", [("Content-Type", "application/json")])
        return [b'{"msg": "who are you"}']


class RedirectingProxy(Proxy):
    """A marketplace whose every answer redirects (302) to `elsewhere`."""

    elsewhere = ""

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        answer.status_code = 302
        headers["Location"] = f"{self.elsewhere}{request.path}"
        return b""


@pytest.fixture
def catcher():
    host = KeyCatcher()
    yield host
    host.stop()


def test_a_redirect_to_another_host_does_not_take_the_key_along(sandbox, catcher):
    proxy = RedirectingProxy(sandbox.url)
    proxy.elsewhere = catcher.url
    client = ApiClient(proxy.url, SECRET, retries=0)
    try:
        with pytest.raises(SurveyctlError, match="answered 401"):
            client.get_survey(10001)
    finally:
        client.close()
        proxy.stop()
    assert catcher.tokens == [None]  # the other host was asked, without the key


class KeyInLocationProxy(Proxy):
    """A marketplace whose every answer redirects (302) to a host that is down, with the
    access-token it was sent in the query of the Location."""

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        answer.status_code = 302
        token = request.headers.get("access-token", "")
        headers["Location"] = f"http://127.0.0.2:9{request.path}?token={token}"
        return b""


def test_a_key_a_redirect_puts_in_the_url_stays_out_of_the_debug_log_of_retries(
    secret_project, run_cli, monkeypatch, sandbox
):
    # urllib3 logs each retry with the URL it retries: the one the redirect gave.
    proxy = KeyInLocationProxy(sandbox.url)
    try:
        point_project_at(secret_project, proxy.url, "SURVEYCTL_SECRET_KEY")
        monkeypatch.setenv("SURVEYCTL_SECRET_KEY", SECRET)
        result = run_cli("--debug", "--timeout", "2", "status", "10001")
    finally:
        proxy.stop()
    assert result.exit_code == 1
    assert "Retrying" in result.stderr
    assert "?token=[redacted]" in result.stderr
    assert SECRET not in _shown(result)


class _BadLocation(BaseHTTPRequestHandler):
    """Answers every GET with a redirect (302) to a host name that is not valid."""

    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", "http://../buyers/v2/surveys")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_a_redirect_to_a_host_name_that_is_not_valid_is_one_sentence():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BadLocation)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = ApiClient(f"http://127.0.0.1:{server.server_port}", SECRET, retries=0)
    try:
        with pytest.raises(ConnectionFailed) as failed:
            client.get_survey(10001)
    finally:
        client.close()
        server.shutdown()
        server.server_close()
    assert "GET /surveys/10001 was sent to a host name that is not valid" in str(failed.value)
