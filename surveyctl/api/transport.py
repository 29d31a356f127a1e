"""Requests and answers: how the client speaks HTTP to one environment of the marketplace.

A `Transport` holds a requests session carrying the `access-token` header, with retries with
exponential backoff and jitter for 429/502/503/504 and connection errors on the idempotent
methods (GET, PUT, DELETE), honouring `Retry-After` (surveyctl.api.retry), and a throttle
shared by every thread that slows down on 429s and speeds up after (surveyctl.api.throttle).
Every retry is told to the `on_retry` callback before it waits (the client never prints), and
a service that cannot be reached ends in one sentence naming the target and the reason.

A POST (or a PATCH, whose `add` to a list is not idempotent either) is never retried after
it may have been processed: a create retried blindly can make a duplicate survey. It is retried
only where the service said it did not process it (429 Too Many Requests, 503 Service
Unavailable) or where the connection was never made; a 502/504, a reset or a read timeout
after sending is left to the caller (the applier's create journal).

This is the one place that sends a request and turns its answer (or its failure) into a
response or an error; the calls of each resource (surveyctl.api.surveys, groups,
transactions, attributes) build on it, and `surveyctl.api.client.ApiClient` is all of them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Self

import requests
from urllib3.exceptions import LocationValueError

from surveyctl.api import paths
from surveyctl.api.body import MAX_BODY, BodyTooLarge, BodyTooSlow, read_body
from surveyctl.api.reading import clip, error_message, json_any, json_object
from surveyctl.api.retry import (
    RetryNotice,
    WaitBudget,
    answer_cut_short,
    failure_reason,
    retry_policy,
    seconds_text,
    shown_path,
)
from surveyctl.api.secrets import redact, remember
from surveyctl.api.session import make_session
from surveyctl.api.throttle import Throttle
from surveyctl.errors import ApiError, ConnectionFailed

log = logging.getLogger("surveyctl.http")

RETRY_STATUSES = (429, 502, 503, 504)
POST_RETRY_STATUSES = (429, 503)
NOT_IDEMPOTENT = frozenset({"POST", "PATCH"})
# The answers of a DELETE, whose status the spec does not show (4.9, 4.11): 200 with or
# without a body, 202 (accepted, as the service answers an adjustment) and 204 all say that
# the resource goes.
DELETED = (200, 202, 204)


class Transport:
    """Sends the requests of one environment: `{host}/buyers/v2` and `{host}/buyers/v3`.

    `timeout`: seconds to wait for a connection and for each answer, per attempt, and also the
    most time spent on failed attempts and retry pauses over all requests (a `WaitBudget`), so
    that `--timeout` bounds a command's waiting on a service that does not answer. `target`
    names the service in the sentence of a failed connection ("environment 'staging' at
    https://…"; default: the host). `show_host=False` keeps the host out of every message (an
    embedded sandbox's port means nothing to its user). `on_retry` is told of every retry.
    """

    def __init__(
        self,
        host: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        pool_size: int = 10,
        target: str | None = None,
        show_host: bool = True,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ):
        self.host = host.rstrip("/")
        self.timeout = timeout
        remember(api_key)
        self.target = target or self.host
        self.show_host = show_host
        self.on_retry = on_retry
        self._attempts = threading.local()  # attempts of the request this thread is making
        self.budget = WaitBudget(timeout)
        # One throttle for every thread and both sessions: the service limits the key.
        self.throttle = Throttle(pool_size)
        policy = {
            "report": self._retrying,
            "timeout": timeout,
            "budget": self.budget,
            "throttle": self.throttle,
        }
        idempotent = retry_policy(
            retries, backoff, RETRY_STATUSES, {"GET", "PUT", "DELETE"}, read=retries, **policy
        )
        # POST and PATCH: only refusals the service states, and connections never made.
        post = retry_policy(
            retries, backoff, POST_RETRY_STATUSES, set(NOT_IDEMPOTENT), read=0, **policy
        )
        self._session = make_session(api_key, idempotent, pool_size, self.throttle)
        self._post_session = make_session(api_key, post, pool_size, self.throttle)
        # Counts requests by "METHOD kind" for benchmarks and tests of request economy.
        self.request_counts: dict[str, int] = {}
        self._counts_lock = threading.Lock()

    def url(self, path: paths.Path) -> str:
        return self.host + self._root_path(path)

    def shown_url(self, path: paths.Path) -> str:
        """The URL as messages show it: without the host when it is not to be shown."""
        return self.url(path) if self.show_host else self._root_path(path)

    @staticmethod
    def _root_path(path: paths.Path) -> str:
        if path.version == paths.SANDBOX:
            return f"/sandbox{path.path}"
        return f"/buyers/{path.version}{path.path}"

    def _retrying(self, notice: RetryNotice) -> None:
        self._attempts.made = notice.attempt
        if self.on_retry is not None:
            self.on_retry(notice)

    def close(self) -> None:
        self._session.close()
        self._post_session.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        # A connection left open keeps a served sandbox's worker busy when it is stopped.
        self.close()

    def request(
        self,
        method: str,
        path: paths.Path,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        expected: tuple[int, ...] = (200,),
    ) -> requests.Response:
        """Sends one request and returns the response, or raises ApiError/ConnectionFailed."""
        url = self.url(path)
        key = f"{method} {path.name}"
        with self._counts_lock:
            self.request_counts[key] = self.request_counts.get(key, 0) + 1
        if log.isEnabledFor(logging.DEBUG):
            # A body or query may quote the key too (a value pasted in the wrong place).
            log.debug("> %s", redact(f"{method} {url} params={params} body={clip(body)}"))
        self._attempts.made = 1
        self.budget.attempt_started()
        try:
            session = self._post_session if method in NOT_IDEMPOTENT else self._session
            response = session.request(
                method, url, json=body, params=params, timeout=self.timeout, stream=True
            )
            read_body(response, self.timeout)
        except BodyTooLarge:
            raise ConnectionFailed(
                f"{self.target} answered {method} {shown_path(url)} with more than "
                f"{MAX_BODY // 2**20} MiB, more than any answer of the API; surveyctl stopped "
                "reading it"
            ) from None
        except BodyTooSlow:
            raise ConnectionFailed(
                f"{self.target} answered {method} {shown_path(url)} with a body that was still "
                f"coming after {seconds_text(self.timeout)} (--timeout); surveyctl stopped "
                "reading it"
            ) from None
        except requests.RequestException as exc:
            raise self._unreachable(method, path, exc) from exc
        except LocationValueError:
            # The configured host was checked when surveyctl.yaml was read: the name urllib3
            # cannot parse is one it was sent to on the way, which it raises unwrapped.
            raise ConnectionFailed(
                f"cannot reach {self.target}: {method} {shown_path(url)} was sent to a host name "
                "that is not valid, that of the proxy of $HTTP_PROXY/$HTTPS_PROXY or of a "
                "redirect of the service"
            ) from None
        except UnicodeError:
            # http.client encodes header values as Latin-1 and says which character failed.
            raise ConnectionFailed(
                f"{method} {shown_path(url)} failed: a request header holds a character HTTP "
                "cannot carry"
            ) from None  # the codec's message quotes the character: part of the key
        if log.isEnabledFor(logging.DEBUG):
            log.debug("< %s %s %s", response.status_code, url, redact(clip(response.text)))
        if response.status_code not in expected:
            code, message = error_message(response)
            raise ApiError(
                method, self.shown_url(path), response.status_code, code, redact(message)
            )
        return response

    def _unreachable(
        self, method: str, path: paths.Path, exc: requests.RequestException
    ) -> ConnectionFailed:
        """One sentence: which service, why, which request, after how many attempts."""
        if isinstance(exc, requests.exceptions.InvalidHeader):
            # Refused before sending; requests' own message repeats the header's value (a key).
            return ConnectionFailed(
                f"{method} {shown_path(self.url(path))} failed: a request header holds a "
                "character HTTP cannot carry"
            )
        attempts = getattr(self._attempts, "made", 1)
        tried = f"{attempts} attempts" if attempts > 1 else "1 attempt"
        if self.budget.exhausted:
            tried += f" within the --timeout of {seconds_text(self.timeout)}"
        opening = "lost the answer of" if answer_cut_short(exc) else "cannot reach"
        return ConnectionFailed(
            f"{opening} {self.target}: {failure_reason(exc, self.timeout)} "
            f"({method} {shown_path(self.url(path))}, {tried})"
        )

    def _json(self, method: str, path: paths.Path, **kwargs: Any) -> Any:
        """The answer of a call whose body is JSON of any shape."""
        response = self.request(method, path, **kwargs)
        return json_any(response, method, self.shown_url(path))

    def _object(self, method: str, path: paths.Path, **kwargs: Any) -> dict:
        """The answer of a call whose body is one JSON object (a survey, a quota, a group):
        anything else is one sentence here, not a traceback where a caller reads a field."""
        response = self.request(method, path, **kwargs)
        return json_object(response, method, self.shown_url(path))


def may_have_been_processed(exc: ApiError | ConnectionFailed) -> bool:
    """Whether a POST that failed with `exc` may have been processed all the same: not when
    the service refused it (a 4xx, or 429/503, which say it was not taken); yes after another
    5xx, a reset or no answer, which come after the request may have been received."""
    if isinstance(exc, ApiError):
        return exc.status >= 500 and exc.status not in POST_RETRY_STATUSES
    return True
