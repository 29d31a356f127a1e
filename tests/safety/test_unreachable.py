"""An unreachable or failing service: every retry said on stderr, one closing sentence naming
the environment and host, a --timeout, and never the embedded sandbox's port."""

from __future__ import annotations

import functools
import re
import socket
import time

import pytest

from surveyctl.api import ApiClient
from surveyctl.errors import ApiError, ConnectionFailed

from .conftest import SURVEY_SPEC, configure

KEY = "sandbox-buyer-1"


@pytest.fixture
def dead_url() -> str:
    """A loopback port nothing listens on: every connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def quick_backoff(monkeypatch):
    """The CLI's client with a backoff of 10 ms instead of 0.5 s, so that five retries take
    no seconds; what is retried, and how often, is unchanged."""
    monkeypatch.setattr(
        "surveyctl.connection.ApiClient", functools.partial(ApiClient, backoff=0.01)
    )


def test_an_unreachable_service_says_each_retry_and_ends_in_one_sentence(
    project, dead_url, quick_backoff, run_cli
):
    configure(project, dead_url, name="staging")
    result = run_cli("status", "10001")
    assert result.exit_code == 1
    retries = [line for line in result.stderr.splitlines() if "retrying" in line]
    assert len(retries) == 5
    assert re.fullmatch(
        r"surveyctl: retrying GET /surveys/10001/status (at once|in [\d.]+ s) \(attempt 2 of 6\): "
        r"connection refused",
        retries[0],
    )
    assert retries[-1].endswith("(attempt 6 of 6): connection refused")
    # The host is on loopback, so the sentence goes on with what to start there.
    assert result.stderr.splitlines()[-1].startswith(
        f"Error: cannot reach environment 'staging' at {dead_url}: connection refused "
        "(GET /surveys/10001/status, 6 attempts); nothing listens at "
    )


def test_an_unreachable_service_shows_no_http_library_internals(
    project, dead_url, quick_backoff, run_cli
):
    configure(project, dead_url)
    result = run_cli("transactions", "get", "10001", "abc")
    assert result.exit_code == 1
    for internal in ("HTTPConnectionPool", "Max retries", "NewConnectionError", "urllib3"):
        assert internal not in result.stderr


def test_a_failing_service_says_which_answer_each_retry_follows(
    project, start_sandbox, quick_backoff, run_cli
):
    failing = start_sandbox(fail_rate=1.0, retry_after=0)
    configure(project, failing.url)
    result = run_cli("status", "10001")
    assert result.exit_code == 1
    retries = [line for line in result.stderr.splitlines() if "retrying GET" in line]
    assert len(retries) == 5
    assert all(re.search(r": answered (503|429)$", line) for line in retries)


def test_timeout_bounds_the_wait_for_an_answer_retries_included(
    project, start_sandbox, quick_backoff, run_cli
):
    slow = start_sandbox(latency_ms=1500)
    configure(project, slow.url)
    result = run_cli("--timeout", "0.2", "status", "10001")
    assert result.exit_code == 1
    assert "retrying" not in result.stderr  # the one attempt took the whole --timeout
    assert (
        f"cannot reach environment 'local' at {slow.url}: no answer within 0.2 s "
        "(GET /surveys/10001/status, 1 attempt within the --timeout of 0.2 s)"
    ) in result.stderr


def test_timeout_bounds_the_retries_of_an_unreachable_service(project, dead_url, run_cli):
    # The default backoff (0.5 s doubling) retries a refused connection for about 16 s.
    configure(project, dead_url, name="staging")
    started = time.monotonic()
    result = run_cli("--timeout", "1", "status", "10001")
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    assert elapsed < 4, elapsed
    assert "within the --timeout of 1 s)" in result.stderr.splitlines()[-1]


def test_timeout_can_come_from_the_environment(
    project, start_sandbox, quick_backoff, run_cli, monkeypatch
):
    slow = start_sandbox(latency_ms=1500)
    configure(project, slow.url)
    monkeypatch.setenv("SURVEYCTL_TIMEOUT", "0.3")
    result = run_cli("status", "10001")
    assert "no answer within 0.3 s" in result.stderr


@pytest.mark.parametrize("seconds", ["nan", "inf", "1e308", "0"])
def test_a_timeout_no_socket_can_take_is_a_usage_error_not_a_traceback(seconds, project, run_cli):
    result = run_cli("--timeout", seconds, "status", "10001")
    assert result.exit_code == 2
    assert "Invalid value for '--timeout'" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_a_nan_timeout_from_the_environment_is_refused_too(project, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_TIMEOUT", "nan")
    result = run_cli("status", "10001")
    assert result.exit_code == 2
    assert "'nan' is not a number" in result.stderr


def test_a_timeout_from_the_environment_that_is_no_number_names_the_variable(
    project, run_cli, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_TIMEOUT", "abc")
    result = run_cli("status", "10001")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for $SURVEYCTL_TIMEOUT: 'abc' is not a valid number."
    )


def test_a_create_is_not_retried_after_it_may_have_been_received(start_sandbox):
    slow = start_sandbox(latency_ms=1500)
    notices = []
    client = ApiClient(slow.url, KEY, timeout=0.2, backoff=0.01, on_retry=notices.append)
    with pytest.raises(ConnectionFailed) as failed:
        client.create_survey(dict(SURVEY_SPEC))
    assert notices == []
    assert str(failed.value) == (
        f"cannot reach {slow.url}: no answer within 0.2 s (POST /surveys, 1 attempt)"
    )


def test_a_create_is_retried_when_the_connection_was_never_made(dead_url):
    notices = []
    client = ApiClient(dead_url, KEY, retries=2, backoff=0.01, on_retry=notices.append)
    with pytest.raises(ConnectionFailed):
        client.create_survey(dict(SURVEY_SPEC))
    assert [str(n).split(" (")[1] for n in notices] == [
        "attempt 2 of 3): connection refused",
        "attempt 3 of 3): connection refused",
    ]
    assert all(n.request == "POST /surveys" for n in notices)


def test_the_embedded_sandbox_port_never_shows_in_an_error(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from surveyctl.cli.main import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    result = CliRunner().invoke(cli, ["status", "99999999"])
    assert result.exit_code == 1
    assert "no survey 99999999 in the marketplace of environment 'sandbox'" in result.stderr
    assert "127.0.0.1" not in result.output + result.stderr
    assert not re.search(r":\d{4,5}\b", result.stderr)


def test_an_embedded_sandbox_that_cannot_be_reached_is_named_without_its_port(dead_url):
    client = ApiClient(
        dead_url,
        KEY,
        retries=0,
        target="the embedded sandbox (environment 'sandbox')",
        show_host=False,
    )
    with pytest.raises(ConnectionFailed) as failed:
        client.get_survey(10001)
    port = dead_url.rsplit(":", 1)[1]
    assert str(failed.value) == (
        "cannot reach the embedded sandbox (environment 'sandbox'): connection refused "
        "(GET /surveys/10001, 1 attempt)"
    )
    assert port not in str(failed.value)


def test_an_answer_of_the_embedded_sandbox_names_the_path_only(sandbox):
    client = ApiClient(sandbox.url, KEY, retries=0, show_host=False)
    with pytest.raises(ApiError) as refused:
        client.get_survey(99999999)
    assert str(refused.value).startswith("GET /buyers/v2/surveys/99999999 answered 404")
