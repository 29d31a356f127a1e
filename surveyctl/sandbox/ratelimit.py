"""The rate limit of the sandbox: a token bucket per access-token, as the service limits each
buyer (`sandbox serve --rate-limit R`).

Each key's bucket holds up to `burst` tokens (one second's worth by default) and refills at
`rate` tokens a second; a `/buyers` request takes one, and one that finds the bucket empty is
answered 429 (code 1027) with `Retry-After`, the whole seconds until a token is there, before
it touches any data. The specification shows no rate limit; the status, header and body follow
the injected 429 of `--fail-rate` (docs/api-assumptions.md, "Limits and faults").
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from surveyctl.sandbox.errors import RATE_LIMITED, ApiProblem


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimit:
    """Token buckets, one per key; `take(key)` raises the 429 when the key is over its rate."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not 0 < rate < math.inf:  # NaN fails both comparisons
            raise ValueError("the rate limit must be a finite number above 0 requests per second")
        self.rate = rate
        self.burst = max(1.0, burst if burst is not None else rate)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> None:
        """Takes one token of `key`'s bucket, or raises the 429 saying when to come back."""
        with self._lock:
            now = self._clock()
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return
            wait = (1 - bucket.tokens) / self.rate
        raise ApiProblem(
            429,
            RATE_LIMITED,
            f"too many requests: the limit is {self.rate:g} per second",
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )
