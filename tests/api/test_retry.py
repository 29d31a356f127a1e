"""The retry policy of the client, against the real urllib3: which failures are retried and
how often, how long a retry waits (Retry-After, the backoff, its jitter and its bound, the
--timeout's wait budget), what each retry's notice says, a 429 telling the throttle, and the
words a failure is put in (`failure_reason`, `seconds_text`, `shown_path`)."""

from __future__ import annotations

import errno
import itertools
import socket
import time
from http.client import IncompleteRead, RemoteDisconnected

import pytest
import urllib3.util.retry
from urllib3.exceptions import (
    HTTPError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
)
from urllib3.response import HTTPResponse

from surveyctl.api import ApiClient
from surveyctl.api.retry import (
    RetryNotice,
    WaitBudget,
    _causes,
    answer_cut_short,
    failure_reason,
    retry_policy,
    seconds_text,
    shown_path,
)
from surveyctl.api.throttle import Throttle
from surveyctl.errors import ApiError

URL = "/buyers/v2/surveys/10001"
STATUSES = (429, 502, 503, 504)  # the client's, for GET, PUT and DELETE
IDEMPOTENT = {"GET", "PUT", "DELETE"}


def _policy(retries=5, backoff=0.0, statuses=STATUSES, methods=IDEMPOTENT, **options):
    """A policy as the client makes one, and the notices it gives."""
    notices: list[RetryNotice] = []
    policy = retry_policy(
        retries, backoff, statuses, set(methods), read=retries, report=notices.append, **options
    )
    return policy, notices


def _answer(status: int, **headers: str) -> HTTPResponse:
    return HTTPResponse(status=status, headers=headers)


def _refused() -> NewConnectionError:
    """The error urllib3 raises for a refused connection: the socket's error as its cause."""
    error = NewConnectionError(None, "Failed to establish a new connection: [Errno 111]")
    error.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    return error


def _read_timeout() -> ReadTimeoutError:
    return ReadTimeoutError(None, URL, "Read timed out. (read timeout=30)")


# -- Retry-After ---------------------------------------------------------------------------


def test_a_429_with_retry_after_is_announced_with_the_wait_it_asks():
    policy, notices = _policy()
    policy.increment("GET", URL, response=_answer(429, **{"Retry-After": "7"}))
    assert [str(notice) for notice in notices] == [
        "retrying GET /surveys/10001 in 7 s (attempt 2 of 6): answered 429"
    ]


def test_a_429_with_retry_after_is_waited_for_as_long_as_it_says(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(urllib3.util.retry.time, "sleep", slept.append)
    policy, _ = _policy()
    refusal = _answer(429, **{"Retry-After": "7"})
    policy.increment("GET", URL, response=refusal).sleep(refusal)
    assert slept == [7]


def test_a_retry_after_longer_than_the_time_left_ends_the_retries():
    budget = WaitBudget(5)
    policy, notices = _policy(budget=budget)
    with pytest.raises(MaxRetryError):
        policy.increment("GET", URL, response=_answer(429, **{"Retry-After": "7"}))
    assert notices == []
    assert budget.exhausted


# -- what is retried, how often ----------------------------------------------------------


def test_the_retries_allowed_are_counted_together_whatever_failed():
    policy, notices = _policy(retries=2)
    policy = policy.increment("GET", URL, error=_refused())
    policy = policy.increment("GET", URL, response=_answer(503))
    with pytest.raises(MaxRetryError):
        policy.increment("GET", URL, error=_refused())
    assert [notice.attempt for notice in notices] == [2, 3]


def test_a_policy_out_of_retries_ends_in_urllib3s_error_for_the_request():
    policy, _ = _policy(retries=0)
    with pytest.raises(MaxRetryError) as ended:
        policy.increment("GET", URL, error=_refused())
    assert ended.value.url == URL
    assert failure_reason(ended.value) == "connection refused"


def test_a_failed_tls_handshake_is_not_retried():
    policy, notices = _policy()
    with pytest.raises(MaxRetryError):
        policy.increment("GET", URL, error=SSLError("certificate verify failed"))
    assert notices == []


def test_a_post_is_not_retried_on_a_status_by_the_policy_of_idempotent_methods():
    policy, _ = _policy()
    assert policy.is_retry("GET", 503)
    assert not policy.is_retry("POST", 503)


def test_a_post_refused_with_429_is_retried_by_the_policy_for_posts():
    policy, _ = _policy(statuses=(429, 503), methods={"POST", "PATCH"})
    assert policy.is_retry("POST", 429)
    assert policy.is_retry("PATCH", 503)


# -- the backoff -----------------------------------------------------------------------


def _delay_after(failures: int, backoff: float) -> float:
    policy, _ = _policy(backoff=backoff)
    for _ in range(failures):
        policy = policy.increment("GET", URL, error=_refused())
    return policy.planned_delay(None)


def test_the_pause_before_a_retry_is_never_longer_than_30_s():
    assert _delay_after(3, backoff=10) == 30  # 10 s doubled twice is 40 s


def test_pauses_are_spread_by_a_jitter_as_large_as_the_backoff():
    delays = [_delay_after(2, backoff=1) for _ in range(20)]
    assert all(2 <= delay <= 3 for delay in delays)
    assert len(set(delays)) > 1


# -- notices ---------------------------------------------------------------------------


def test_a_read_timeout_is_announced_with_the_requests_timeout_at_every_retry():
    policy, notices = _policy(timeout=30)
    policy.increment("GET", URL, error=_read_timeout()).increment("GET", URL, error=_read_timeout())
    assert [notice.reason for notice in notices] == ["no answer within 30 s"] * 2


def test_a_retry_without_a_pause_is_announced_as_at_once():
    notice = RetryNotice("GET /surveys/10001", 2, 6, 0.0, "connection refused")
    assert str(notice) == "retrying GET /surveys/10001 at once (attempt 2 of 6): connection refused"


def test_a_pause_of_a_tenth_of_a_second_or_more_is_announced_with_its_length():
    def when(delay: float) -> str:
        return str(RetryNotice("GET /surveys/10001", 3, 6, delay, "answered 503"))

    assert when(0.05) == "retrying GET /surveys/10001 in 0.1 s (attempt 3 of 6): answered 503"
    assert when(0.5) == "retrying GET /surveys/10001 in 0.5 s (attempt 3 of 6): answered 503"


# -- the throttle ------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_every_429_of_a_retried_request_slows_the_client_down():
    clock = _Clock()
    throttle = Throttle(8, clock=clock)
    policy, _ = _policy(throttle=throttle)
    policy = policy.increment("GET", URL, response=_answer(429))
    assert throttle.in_flight_limit == 4
    clock.now += 5  # past the round in which one 429 counts
    policy.increment("GET", URL, response=_answer(429))
    assert throttle.in_flight_limit == 2


def test_a_429_to_a_policy_without_a_throttle_is_retried(monkeypatch):
    monkeypatch.setattr(urllib3.util.retry.time, "sleep", lambda seconds: None)
    policy, notices = _policy()
    refusal = _answer(429)
    policy.increment("GET", URL, response=refusal).sleep(refusal)
    assert [notice.reason for notice in notices] == ["answered 429"]


# -- the wait budget (--timeout) ---------------------------------------------------------


def test_the_wait_budget_allows_pauses_up_to_its_seconds_and_no_more():
    budget = WaitBudget(1)
    assert budget.allows(0.5)
    assert budget.allows(0.5)
    assert not budget.exhausted
    assert not budget.allows(0.1)
    assert budget.exhausted


def test_a_failed_attempt_that_outlasts_the_timeout_ends_with_its_failure():
    budget = WaitBudget(0.01)
    policy, notices = _policy(budget=budget)
    budget.attempt_started()
    time.sleep(0.03)
    with pytest.raises(MaxRetryError) as ended:
        policy.increment("GET", URL, error=_refused())
    assert notices == []
    assert ended.value.url == URL
    assert failure_reason(ended.value) == "connection refused"


def test_a_refusal_past_the_timeout_is_answered_as_the_service_answered(start_sandbox):
    sandbox = start_sandbox(fail_rate=1.0, retry_after=0, seed=5)
    notices: list[RetryNotice] = []
    # The first retry comes at once; the second would wait 1 s or more, past the timeout.
    with ApiClient(
        sandbox.url, "sandbox-buyer-1", timeout=0.5, backoff=0.5, on_retry=notices.append
    ) as client:
        with pytest.raises(ApiError) as answered:
            client.get_survey(10001)
    assert answered.value.status in (429, 503)
    assert len(notices) == 1


# -- failures in words -----------------------------------------------------------------


def test_a_host_name_that_does_not_resolve_is_said_so():
    unresolved = NameResolutionError(
        "api.example.invalid", None, socket.gaierror(socket.EAI_NONAME, "Name does not resolve")
    )
    error = MaxRetryError(None, URL, unresolved)
    assert failure_reason(error) == "the host name does not resolve"


def test_a_failed_tls_handshake_is_said_so():
    assert failure_reason(SSLError("certificate verify failed")) == "the TLS handshake failed"


def test_a_connection_closed_without_an_answer_is_said_so():
    closed = RemoteDisconnected("Remote end closed connection without response")
    assert failure_reason(closed) == "the connection was closed before an answer"
    aborted = ProtocolError("Connection aborted.", closed)
    assert failure_reason(aborted) == "the connection was closed before an answer"


def test_an_answer_whose_connection_closed_in_the_middle_of_its_body_is_said_so():
    cut = ProtocolError("Connection broken: IncompleteRead", IncompleteRead(b"{", 40))
    assert failure_reason(cut) == "the connection was closed in the middle of the answer"


def test_only_an_answer_cut_off_in_its_body_is_said_to_have_reached_the_service():
    cut = ProtocolError("Connection broken: IncompleteRead", IncompleteRead(b"{", 40))
    assert answer_cut_short(cut) is True
    assert answer_cut_short(ProtocolError("Connection aborted.", _refused())) is False
    assert answer_cut_short(None) is False


def test_a_reset_that_aborted_the_connection_is_said_to_be_a_reset():
    reset = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    assert failure_reason(ProtocolError("Connection aborted.", reset)) == "connection reset"


def test_a_reset_a_protocol_error_was_raised_from_is_said_to_be_a_reset():
    try:
        raise ProtocolError("Connection aborted.") from ConnectionResetError(
            errno.ECONNRESET, "Connection reset by peer"
        )
    except ProtocolError as aborted:
        assert failure_reason(aborted) == "connection reset"


def test_a_failure_without_words_of_its_own_is_said_to_have_failed():
    assert failure_reason(HTTPError("something else")) == "the request failed"


def test_a_failure_through_a_proxy_says_so():
    error = ProxyError("Unable to connect to proxy", _refused())
    assert failure_reason(error) == (
        "connection refused (through the proxy of HTTP_PROXY/HTTPS_PROXY)"
    )


def test_a_timeout_of_no_known_length_is_said_to_be_the_timeout():
    assert failure_reason(_read_timeout()) == "no answer within the timeout"


def test_a_chain_of_errors_that_loops_is_followed_once():
    first, second = ConnectionError("first"), OSError("second")
    first.__cause__, second.__cause__ = second, first
    assert list(itertools.islice(_causes(first), 10)) == [first, second]


def test_ten_seconds_and_more_are_said_in_whole_seconds():
    assert seconds_text(10.4) == "10 s"
    assert seconds_text(9.5) == "9.5 s"


def test_a_path_under_the_v3_root_is_shown_without_it():
    shown = shown_path("http://127.0.0.1:43117/buyers/v3/surveys/10001/quotas?page=2")
    assert shown == "/surveys/10001/quotas"
