"""Fault injection: latency on every response, and a share of /buyers requests refused.

A refused request is answered 503 or 429 (with Retry-After) before the request touches any
data, so a client that retries it cannot cause a double write. The draw comes from one seeded
random generator, so a run with the same seed and the same request order refuses the same
requests.
"""

from __future__ import annotations

import random
import threading
import time

from surveyctl.sandbox.errors import RATE_LIMITED, UNAVAILABLE, ApiProblem


class Faults:
    """Decides, per request, the delay and whether to refuse it."""

    def __init__(
        self,
        latency_ms: int = 0,
        fail_rate: float = 0.0,
        seed: int | None = None,
        retry_after: int = 1,
    ):
        if not 0.0 <= fail_rate <= 1.0:
            raise ValueError("fail_rate must be between 0 and 1")
        if latency_ms < 0:
            raise ValueError("latency_ms must not be negative")
        self.latency_ms = latency_ms
        self.fail_rate = fail_rate
        self.retry_after = retry_after
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def delay(self) -> None:
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)

    def maybe_refuse(self) -> None:
        """Raises a 503 or a 429 for `fail_rate` of the calls."""
        if not self.fail_rate:
            return
        with self._lock:
            refused = self._random.random() < self.fail_rate
            busy = self._random.random() < 0.5
        if not refused:
            return
        if busy:
            raise ApiProblem(
                429,
                RATE_LIMITED,
                "too many requests (injected fault)",
                headers={"Retry-After": str(self.retry_after)},
            )
        raise ApiProblem(503, UNAVAILABLE, "service unavailable (injected fault)")
