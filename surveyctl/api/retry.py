"""Retries of the API client: the policy, a notice of every retry, and failures in words.

The policy is urllib3's `Retry` (backoff with jitter, Retry-After honoured); `ReportingRetry`
adds a notice before each retry, so a person waiting on an unreachable or failing service
sees why: `retrying GET /surveys/10001 in 2 s (attempt 3 of 6): connection refused`. The
client passes notices to a callback and never prints. A `WaitBudget` bounds the time one
client spends on failed attempts and the pauses between retries, over all its requests
(`--timeout`): a retry that would end past it is not made. With a `Throttle`, a 429 also slows
the client down, and a retry waits for its turn in the throttle's pace.
"""

from __future__ import annotations

import errno
import http.client
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from requests.exceptions import TooManyRedirects
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    ResponseError,
    SSLError,
)
from urllib3.util.retry import Retry

if TYPE_CHECKING:
    from surveyctl.api.throttle import Throttle

# Words for the socket errors a person meets when a service cannot be reached.
_ERRNO_WORDS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ETIMEDOUT: "connection timed out",
}


@dataclass(frozen=True)
class RetryNotice:
    """A retry about to happen: which request, after how long, which attempt, and why."""

    request: str  # "GET /surveys/10001": method and path under the API root
    attempt: int  # the attempt about to be made: 2 for the first retry
    attempts: int  # the most attempts the policy makes
    delay: float  # seconds before it
    reason: str  # "connection refused", "answered 503"

    def __str__(self) -> str:
        when = f"in {seconds_text(self.delay)}" if self.delay >= 0.05 else "at once"
        return (
            f"retrying {self.request} {when} (attempt {self.attempt} of {self.attempts}): "
            f"{self.reason}"
        )


class WaitBudget:
    """The seconds a client may spend waiting on a service that does not answer or fails: the
    failed attempts and the pauses before retries, summed over every request and thread.
    Answered requests cost nothing, so a long plan or `status --watch` is not cut short."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.spent = 0.0
        self.exhausted = False
        self._lock = threading.Lock()
        self._started = threading.local()

    def attempt_started(self) -> None:
        """Called when this thread sends a request: the failure clock of its attempt starts."""
        self._started.at = time.monotonic()

    def allows(self, delay: float) -> bool:
        """Whether a retry after `delay` seconds still ends within the budget; the failed
        attempt that led to it is counted either way."""
        now = time.monotonic()
        failed_for = max(0.0, now - getattr(self._started, "at", now))
        with self._lock:
            self.spent += failed_for
            allowed = self.spent + delay <= self.seconds
            if allowed:
                self.spent += delay
            else:
                self.exhausted = True
        self._started.at = now + delay
        return allowed


class ReportingRetry(Retry):
    """urllib3's Retry, telling `report` of every retry before it waits.

    The backoff of an instance is drawn once (it has jitter), so the delay reported is the
    delay slept.
    """

    def __init__(
        self,
        *args,
        report: Callable[[RetryNotice], None] | None = None,
        attempts: int = 1,
        timeout: float | None = None,
        budget: WaitBudget | None = None,
        throttle: Throttle | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.report = report
        self.attempts = attempts
        self.timeout = timeout
        self.budget = budget
        self.throttle = throttle
        self._backoff: float | None = None

    def new(self, **kw) -> ReportingRetry:
        kw.setdefault("report", self.report)
        kw.setdefault("attempts", self.attempts)
        kw.setdefault("timeout", self.timeout)
        kw.setdefault("budget", self.budget)
        kw.setdefault("throttle", self.throttle)
        return super().new(**kw)

    def get_backoff_time(self) -> float:
        if self._backoff is None:
            self._backoff = super().get_backoff_time()
        return self._backoff

    def increment(self, method=None, url=None, response=None, error=None, *args, **kwargs):
        if self.throttle is not None and response is not None and response.status == 429:
            self.throttle.refused()  # also for the last attempt, which is not retried
        retry = super().increment(method, url, response, error, *args, **kwargs)
        if self.budget is not None and not self.budget.allows(retry.planned_delay(response)):
            # Out of time: end as an exhausted policy does (a status is then returned as is).
            reason = error or ResponseError(
                ResponseError.SPECIFIC_ERROR.format(status_code=getattr(response, "status", 0))
            )
            raise MaxRetryError(kwargs.get("_pool"), url, reason)
        if self.report is not None:
            reason = f"answered {response.status}" if error is None and response else None
            self.report(
                RetryNotice(
                    request=f"{method} {shown_path(url or '')}",
                    attempt=len(retry.history) + 1,
                    attempts=self.attempts,
                    delay=retry.planned_delay(response),
                    reason=reason or failure_reason(error, self.timeout),
                )
            )
        if response is not None:
            # urllib3 reads the whole body of an attempt it retries before the retry, without
            # bound: a 503 whose body never ends would hold the command for ever. Closed, the
            # connection leaves it nothing to read; the retry opens a new one.
            response.close()
        return retry

    def sleep(self, response=None) -> None:
        super().sleep(response)  # Retry-After, or the backoff
        if self.throttle is not None:
            self.throttle.pace()

    def planned_delay(self, response) -> float:
        """What `sleep(response)` will wait: Retry-After when the service sent one, else the
        backoff."""
        if self.respect_retry_after_header and response is not None:
            retry_after = self.get_retry_after(response)
            if retry_after:
                return retry_after
        return self.get_backoff_time()


def retry_policy(
    retries: int,
    backoff: float,
    statuses: tuple[int, ...],
    methods: set[str],
    read: int,
    report: Callable[[RetryNotice], None] | None = None,
    timeout: float | None = None,
    budget: WaitBudget | None = None,
    throttle: Throttle | None = None,
) -> ReportingRetry:
    """Backoff with jitter for `methods` on `statuses`, honouring Retry-After; `read` retries
    after the request may have been received (only safe for idempotent methods)."""
    return ReportingRetry(
        total=retries,
        connect=retries,
        read=read,
        status=retries,
        other=0,
        backoff_factor=backoff,
        backoff_jitter=backoff,
        backoff_max=30,
        status_forcelist=statuses,
        allowed_methods=frozenset(methods),
        respect_retry_after_header=True,
        raise_on_status=False,
        report=report,
        attempts=retries + 1,
        timeout=timeout,
        budget=budget,
        throttle=throttle,
    )


def failure_reason(error: BaseException | None, timeout: float | None = None) -> str:
    """A few words on why a request got no answer: `connection refused`, `no answer within
    30 s` (`timeout`: the request's); never a urllib3 representation."""
    within = f"within {seconds_text(timeout)}" if timeout else "within the timeout"
    causes = list(_causes(error))
    through = (
        " (through the proxy of HTTP_PROXY/HTTPS_PROXY)"
        if any(isinstance(cause, ProxyError) for cause in causes)
        else ""
    )
    return _reason(causes, within) + through


def answer_cut_short(error: BaseException | None) -> bool:
    """Whether the service answered and the connection closed in the middle of the body: it
    was reached, so "cannot reach" would send the user to look at the network."""
    return any(isinstance(cause, http.client.IncompleteRead) for cause in _causes(error))


def _reason(causes: list[BaseException], within: str) -> str:
    for cause in causes:
        if isinstance(cause, TooManyRedirects):
            return "it redirected the request more than 30 times"
        if isinstance(cause, NameResolutionError):
            return "the host name does not resolve"
        if isinstance(cause, NewConnectionError):
            continue  # the socket error it wraps says more
        if isinstance(cause, ConnectTimeoutError):
            return f"no connection {within}"
        if isinstance(cause, ReadTimeoutError):
            return f"no answer {within}"
        if isinstance(cause, SSLError):
            return "the TLS handshake failed"
        if isinstance(cause, OSError) and cause.errno in _ERRNO_WORDS:
            return _ERRNO_WORDS[cause.errno]
        if isinstance(cause, TimeoutError):
            return f"no answer {within}"
        if isinstance(cause, http.client.IncompleteRead):
            # The status and part of the body came, then the connection closed (urllib3's
            # IncompleteRead is one too): it was reached, and its answer was lost on the way.
            return "the connection was closed in the middle of the answer"
        if isinstance(cause, ConnectionError | ProtocolError) and not _wraps_more(cause):
            return "the connection was closed before an answer"
    return "the request failed"


def shown_path(url: str) -> str:
    """The path of `url` under the API root (`/surveys/10001`), without host or query: what
    a person needs to know which request it was, and no port of an embedded sandbox."""
    path = urlsplit(url).path or url
    for root in ("/buyers/v2", "/buyers/v3"):
        if path.startswith(root + "/"):
            return path[len(root) :]
    return path


def _causes(error: BaseException | None):
    """`error` and everything it wraps: MaxRetryError's reason, requests' wrapped exception,
    __cause__ and __context__, outermost first."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, MaxRetryError):
            pending.append(current.reason)
        pending.extend(arg for arg in current.args if isinstance(arg, BaseException))
        pending.extend([current.__cause__, current.__context__])


def _wraps_more(error: BaseException) -> bool:
    return any(isinstance(arg, BaseException) for arg in error.args) or bool(
        error.__cause__ or error.__context__
    )


def seconds_text(delay: float) -> str:
    """`2 s`, `0.5 s`, `30 s`: a duration as messages show it."""
    if delay >= 10:
        return f"{delay:.0f} s"
    return f"{delay:.1f}".rstrip("0").rstrip(".") + " s"
