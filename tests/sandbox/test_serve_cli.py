"""`surveyctl sandbox serve`: prints where it listens and the tokens, persists its data."""

from __future__ import annotations

import math
import signal

import pytest
import requests
from click.testing import CliRunner

from surveyctl.cli.main import cli
from surveyctl.sandbox.ratelimit import RateLimit

from .conftest import HEADERS


def test_serve_prints_both_roots_and_the_access_tokens(served):
    banner = "".join(served("--key", "team=5").banner)
    assert "/buyers/v2" in banner and "/buyers/v3" in banner
    assert "sandbox-buyer-1" in banner and "sandbox-buyer-2" in banner
    assert "team" in banner and "buyer 5" in banner


def test_serve_answers_the_api_and_stops_cleanly_on_ctrl_c(served):
    server = served()
    response = requests.get(server.url + "/buyers/v2/surveys", headers=HEADERS, timeout=10)
    assert response.status_code == 200
    assert server.stop() == 0


def test_serve_stops_cleanly_on_sigterm_as_a_container_is_stopped(served):
    # `docker stop` sends SIGTERM: the server stops and closes its database, exit 0.
    server = served()
    assert server.stop(signal.SIGTERM) == 0


def test_data_persists_in_the_db_file_across_restarts(served, make_body):
    first = served()
    created = requests.post(
        first.url + "/buyers/v2/surveys", json=make_body(), headers=HEADERS, timeout=10
    )
    survey_id = created.json()["ps_survey_id"]
    first.stop()
    second = served()
    again = requests.get(f"{second.url}/buyers/v2/surveys/{survey_id}", headers=HEADERS, timeout=10)
    assert again.status_code == 200
    link = "test_ps_survey_entry_link"  # names the host, whose port changed
    assert {k: v for k, v in again.json().items() if k != link} == {
        k: v for k, v in created.json().items() if k != link
    }


def test_serve_on_an_ipv6_address_prints_roots_a_client_can_use(served):
    server = served("--host", "::1")
    assert server.url.startswith("http://[::1]:")
    response = requests.get(server.url + "/buyers/v2/surveys", headers=HEADERS, timeout=10)
    assert response.status_code == 200
    assert server.stop() == 0


def _usage_error_of_serve(tmp_path, *options: str) -> str:
    """What `sandbox serve OPTIONS` says when it refuses them as a usage error (exit 2)."""
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--db", str(tmp_path / "s.db"), *options])
    assert result.exit_code == 2
    return result.stderr


def test_an_empty_host_is_a_usage_error_not_a_traceback(tmp_path):
    refused = _usage_error_of_serve(tmp_path, "--host", "")
    assert "Invalid value for '--host': an empty host: give an address, or 0.0.0.0" in refused


def test_a_latency_beyond_a_day_is_a_usage_error_not_a_500_on_every_request(tmp_path):
    refused = _usage_error_of_serve(tmp_path, "--latency-ms", "86400001")
    assert "'--latency-ms': 86400001 is not in the range 0<=x<=86400000" in refused


def test_a_rate_limit_below_a_request_a_day_is_a_usage_error_not_a_huge_retry_after(tmp_path):
    refused = _usage_error_of_serve(tmp_path, "--rate-limit", "1e-300")
    assert "'--rate-limit': 1e-300 is below a request a day: give 0 for no limit" in refused


@pytest.mark.parametrize("value", ["inf", "Infinity", "1e999"])
def test_an_infinite_rate_limit_is_a_usage_error_not_a_limit_that_limits_nothing(tmp_path, value):
    refused = _usage_error_of_serve(tmp_path, "--rate-limit", value)
    assert "'--rate-limit': inf is not a rate: give requests per second (at least 0.0000116)" in (
        refused
    )


def test_a_rate_limit_of_nan_is_a_usage_error(tmp_path):
    refused = _usage_error_of_serve(tmp_path, "--rate-limit", "nan")
    assert "'--rate-limit': 'nan' is not a number" in refused


@pytest.mark.parametrize("rate", [math.inf, math.nan, 0.0])
def test_a_sandbox_rate_limit_that_is_not_a_finite_rate_is_refused(rate):
    with pytest.raises(ValueError, match="must be a finite number above 0"):
        RateLimit(rate)


def test_a_rate_limit_of_a_request_a_day_is_taken():
    from surveyctl.cli.sandbox import _rate_limit

    assert _rate_limit(None, None, 0.0000116) == 0.0000116
    assert _rate_limit(None, None, 0) == 0


def test_a_malformed_key_option_is_one_clear_error(tmp_path):
    result = CliRunner().invoke(
        cli, ["sandbox", "serve", "--db", str(tmp_path / "s.db"), "--key", "no-buyer"]
    )
    assert result.exit_code == 1
    assert "TOKEN=BUYER_ID" in result.output
    assert "Traceback" not in result.output


def test_serve_has_help():
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--help"])
    assert result.exit_code == 0
    assert "--fail-rate" in result.output and "--latency-ms" in result.output
    assert "--threads" in result.output


def test_serve_with_few_threads_answers_the_api(served):
    server = served("--threads", "2")
    session = requests.Session()
    statuses = [
        session.get(server.url + "/buyers/v2/surveys", headers=HEADERS, timeout=10).status_code
        for _ in range(5)
    ]
    assert statuses == [200] * 5
    assert server.stop() == 0


def test_a_db_whose_folder_cannot_be_made_is_one_clear_error(tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file where the folder would be\n")
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--db", str(blocker / "s.db")])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {blocker / 's.db'}: cannot make the folder of the sandbox data: "
        f"{blocker}: File exists\n"
    )


def test_a_db_in_a_new_folder_has_its_folder_made(served, tmp_path):
    server = served("--db", str(tmp_path / "new" / "deeper" / "s.db"))
    assert (tmp_path / "new" / "deeper" / "s.db").exists()
    assert server.stop() == 0
