"""The client finds the service's rate: fewer requests in flight and a slower pace after a
429, more and faster after a run of successes, every retry still announced."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from surveyctl.api import ApiClient
from surveyctl.api.throttle import Throttle

# Long enough for a thread that is let in to be seen in; short enough for one kept out.
LET_IN_S = 5.0
KEPT_OUT_S = 0.3


class Clock:
    """A clock the test moves; sleeping moves it too."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _throttle(max_in_flight: int = 8) -> tuple[Throttle, Clock]:
    clock = Clock()
    return Throttle(max_in_flight, clock=clock, sleep=clock.sleep), clock


def _succeed(throttle: Throttle, clock: Clock, count: int, spacing: float) -> None:
    for _ in range(count):
        clock.now += spacing
        throttle.succeeded()


class Requests:
    """Requests started in threads of their own, each waiting in `acquire` until let in, and
    let out (`release`) by the test; those still waiting are let in and out at the end."""

    def __init__(self, throttle: Throttle) -> None:
        self.throttle = throttle
        self.waiting: list[threading.Event] = []

    def start(self, seconds: float) -> bool:
        """Starts one request: whether it was let in within `seconds`."""
        admitted = threading.Event()

        def request() -> None:
            self.throttle.acquire()
            admitted.set()

        threading.Thread(target=request, daemon=True).start()
        if admitted.wait(seconds):
            return True
        self.waiting.append(admitted)
        return False

    def finish(self) -> None:
        """One request in flight is answered."""
        self.throttle.release()

    def close(self) -> None:
        for admitted in self.waiting:
            self.throttle.release()
            admitted.wait(LET_IN_S)


@pytest.fixture
def requests_of():
    started: list[Requests] = []

    def make(throttle: Throttle) -> Requests:
        started.append(Requests(throttle))
        return started[-1]

    yield make
    for requests in started:
        requests.close()


def test_no_more_requests_are_in_flight_than_allowed(requests_of):
    requests = requests_of(Throttle(2))
    assert requests.start(LET_IN_S) and requests.start(LET_IN_S)
    assert not requests.start(KEPT_OUT_S)  # the third waits for an answer
    requests.finish()
    assert requests.waiting[0].wait(LET_IN_S)  # and goes when one came


def test_requests_answered_make_room_for_as_many_again(requests_of):
    requests = requests_of(Throttle(2))
    for _ in range(2):
        assert requests.start(LET_IN_S)
    requests.finish()
    requests.finish()
    assert requests.start(LET_IN_S) and requests.start(LET_IN_S)
    assert not requests.start(KEPT_OUT_S)


def test_a_pool_of_one_sends_one_request_at_a_time(requests_of):
    requests = requests_of(Throttle(1))
    assert requests.start(LET_IN_S)
    assert not requests.start(KEPT_OUT_S)


def test_after_a_429_the_requests_in_flight_past_the_new_limit_wait(requests_of):
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 50, 0.02)
    throttle.refused()  # 4 in flight at most; the pace is far above what the test sends
    requests = requests_of(throttle)
    for _ in range(4):
        assert requests.start(LET_IN_S)
    assert not requests.start(KEPT_OUT_S)


def test_429s_round_after_round_bring_the_client_down_to_one_request_in_flight():
    throttle, clock = _throttle(8)
    for _ in range(5):
        throttle.refused()
        clock.now += 1.5
    assert throttle.in_flight_limit == 1


def test_a_run_of_as_many_successes_as_are_in_flight_allows_one_more():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 50, 0.02)
    throttle.refused()
    _succeed(throttle, clock, 4, 0.02)
    assert throttle.in_flight_limit == 4  # each success adds a fraction: 1 / the limit
    _succeed(throttle, clock, 1, 0.02)
    assert throttle.in_flight_limit == 5


def test_each_second_of_successes_raises_the_pace_by_a_twentieth_of_the_rate_first_found():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 100, 0.01)  # 100 answers in the last second
    throttle.refused()
    assert throttle.rate == pytest.approx(80)  # a fifth below what was granted
    _succeed(throttle, clock, 80, 1 / 80)  # one second at that pace
    assert throttle.rate == pytest.approx(85, abs=0.5)  # 100 / 20 more


def test_a_429_after_a_single_answer_paces_at_one_request_a_second():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 1, 0.02)
    throttle.refused()
    assert throttle.rate == 1.0


def test_a_429_is_told_with_the_new_limits_in_the_debug_log(caplog):
    throttle, clock = _throttle(8)
    caplog.set_level(logging.DEBUG, logger="surveyctl.http")
    throttle.refused()  # before any answer: no rate to keep
    _succeed(throttle, clock, 50, 0.04)
    throttle.refused()
    assert [r.getMessage() for r in caplog.records] == [
        "answered 429: 4 in flight at most, not paced",
        "answered 429: 4 in flight at most, 20.0 requests per second",
    ]


def test_a_429_halves_the_requests_in_flight_and_paces_below_what_was_granted():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 50, 0.02)  # 50 answers in the last second
    throttle.refused()
    assert throttle.in_flight_limit == 4
    assert throttle.rate is not None and 35 <= throttle.rate <= 45


def test_a_burst_of_429s_slows_the_client_once():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 50, 0.02)
    for _ in range(6):  # the answers to requests sent before it slowed down
        throttle.refused()
    assert throttle.in_flight_limit == 4
    rate = throttle.rate
    clock.now += 1.5
    throttle.refused()  # a later one slows it again
    assert throttle.rate < rate
    assert throttle.in_flight_limit == 2


def test_successes_raise_the_pace_and_the_requests_in_flight_again():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 50, 0.02)
    throttle.refused()
    slowed, in_flight = throttle.rate, throttle.in_flight_limit
    _succeed(throttle, clock, 200, 0.025)  # five seconds of successes
    assert throttle.rate > slowed + 5
    assert throttle.in_flight_limit == 8 > in_flight


def test_the_pace_spaces_requests_by_the_rate():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 20, 0.05)
    throttle.refused()
    started = clock.now
    for _ in range(11):
        throttle.acquire()
        throttle.release()
    assert clock.now - started == pytest.approx(10 / throttle.rate)


def test_a_service_that_never_answers_429_is_never_slowed():
    throttle, clock = _throttle(8)
    _succeed(throttle, clock, 500, 0.001)
    started = clock.now
    for _ in range(100):
        throttle.acquire()
        throttle.release()
    assert clock.now == started  # not one of 100 requests waited
    assert throttle.in_flight_limit == 8


def test_the_client_finds_the_rate_of_a_rate_limited_service(start_sandbox):
    sandbox = start_sandbox(rate_limit=20)
    notices = []
    client = ApiClient(
        sandbox.url, "sandbox-buyer-1", pool_size=8, backoff=0.05, on_retry=notices.append
    )
    answered: list[float] = []
    lock = threading.Lock()

    def read(_: int) -> None:
        client.list_surveys(11, targeting=False, limit=1)
        with lock:
            answered.append(time.monotonic())

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(read, range(70)))
    finally:
        client.close()
    refused = [n for n in notices if n.reason == "answered 429"]
    # Hammering with 8 threads would be refused hundreds of times in these 3 s.
    assert 1 <= len(refused) <= 12
    answered.sort()
    last_two_seconds = [t for t in answered if t >= answered[-1] - 2.0]
    assert len(last_two_seconds) <= 2 * 20 * 1.25  # at the service's rate, not above it
