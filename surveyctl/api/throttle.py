"""Finding the service's rate instead of hammering it: an adaptive limiter shared by every
thread of one client (the worker threads of a plan or an apply).

It limits two things, each by additive increase and multiplicative decrease (AIMD):
- **requests in flight**: halved by a 429 Too Many Requests, one more after each run of as
  many successes as are allowed in flight, up to the connection pool's size;
- **requests per second**: none at first; the first 429 sets the pace to a little below what
  the service granted in the last second (its successes), each further 429 lowers it by a
  fifth, and every second of successes raises it by a twentieth of what the service granted
  then (at least 2 requests per second).

Only one 429 a second lowers them: the answers to a burst sent before the client slowed down
say nothing new. A request that gets a 429 keeps its place in flight while it waits for its
retry (Retry-After, honoured by the retry policy), and the retry waits for its turn in the
pace like any request. A service that never answers 429 is never slowed.
"""

from __future__ import annotations

import collections
import logging
import math
import threading
import time
from collections.abc import Callable

log = logging.getLogger("surveyctl.http")

DECREASE = 0.8  # the pace kept after a 429
LIMIT_DECREASE = 0.5  # the requests in flight kept after a 429
INCREASE_SHARE = 0.05  # of the rate first found, gained per second of successes
ROUND_S = 1.0  # at most one decrease in this long
WINDOW_S = 1.0  # successes counted to find the rate
MIN_RATE = 1.0  # requests per second, the slowest pace
# Requests per second gained per second at least: a 429 early in a run, before a second of
# successes was seen, finds a rate far too low, and the pace must not crawl back from it.
MIN_INCREASE = 2.0


class Throttle:
    """The limiter of one client; `acquire`/`release` around each request, `pace` before
    each attempt, and `refused`/`succeeded` with each answer."""

    def __init__(
        self,
        max_in_flight: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.max_in_flight = max(1, max_in_flight)
        self.limit = float(self.max_in_flight)  # requests allowed in flight
        self.rate: float | None = None  # requests per second; None: not paced
        self._increase = 0.0  # requests per second gained per second of successes
        self._in_flight = 0
        self._condition = threading.Condition()
        self._clock = clock
        self._sleep = sleep
        self._next_slot = 0.0
        self._last_decrease = -math.inf
        self._successes: collections.deque[float] = collections.deque()

    @property
    def in_flight_limit(self) -> int:
        return max(1, int(self.limit))

    def acquire(self) -> None:
        """Waits for a place in flight, then for the request's turn in the pace."""
        with self._condition:
            while self._in_flight >= self.in_flight_limit:
                self._condition.wait()
            self._in_flight += 1
        self.pace()

    def release(self) -> None:
        with self._condition:
            self._in_flight -= 1
            self._condition.notify()

    def pace(self) -> None:
        """Waits for this attempt's turn when the requests are paced."""
        with self._condition:
            if self.rate is None:
                return
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self.rate
        if slot > now:
            self._sleep(slot - now)

    def refused(self) -> None:
        """A 429: fewer requests in flight and a slower pace, once a round."""
        with self._condition:
            now = self._clock()
            if now - self._last_decrease < ROUND_S:
                return
            self._last_decrease = now
            self.limit = max(1.0, self.limit * LIMIT_DECREASE)
            if self.rate is not None:
                self.rate = max(MIN_RATE, self.rate * DECREASE)
            else:
                granted = self._granted(now)
                if granted:  # a service that grants nothing tells no rate to keep
                    self.rate = max(MIN_RATE, granted * DECREASE)
                    self._increase = max(MIN_INCREASE, granted * INCREASE_SHARE)
                    self._next_slot = now
            log.debug(
                "answered 429: %d in flight at most, %s",
                self.in_flight_limit,
                f"{self.rate:.1f} requests per second" if self.rate else "not paced",
            )

    def succeeded(self) -> None:
        """An answer other than a 429 or a 5xx: a little more in flight and a faster pace."""
        with self._condition:
            now = self._clock()
            self._successes.append(now)
            while self._successes and self._successes[0] < now - WINDOW_S:
                self._successes.popleft()
            if self.limit < self.max_in_flight:
                self.limit = min(float(self.max_in_flight), self.limit + 1.0 / self.limit)
                self._condition.notify()
            if self.rate is not None:
                self.rate += self._increase / self.rate

    def _granted(self, now: float) -> float:
        """Successes a second lately: what the service let through (a burst that emptied its
        bucket within the window is counted over the whole window, as the rate is)."""
        while self._successes and self._successes[0] < now - WINDOW_S:
            self._successes.popleft()
        return len(self._successes) / WINDOW_S
