"""The client finds the service's rate: fewer requests in flight and a slower pace after a
429, more and faster after a run of successes, every retry still announced."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from surveyctl.api import ApiClient
from surveyctl.api.throttle import Throttle


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
    assert clock.now - started >= 10 / throttle.rate * 0.95


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
