"""The requests session of a client: the access-token header, pooled connections, retries, the
client's throttle, and the environment's proxy settings read once per host."""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from surveyctl import __version__
from surveyctl.api.throttle import Throttle

TOKEN_HEADER = "access-token"  # spec 5


class _Session(requests.Session):
    """A requests session that reads the proxy and CA-bundle settings of the environment once
    per host instead of on every request, where requests scans every environment variable
    twice (a third of the CPU of a GET). The settings are read at the first request to a host,
    so HTTP_PROXY, HTTPS_PROXY, NO_PROXY and REQUESTS_CA_BUNDLE are honoured as before."""

    def __init__(self) -> None:
        super().__init__()
        self._environment: dict[tuple, dict[str, Any]] = {}
        self._environment_lock = threading.Lock()

    def merge_environment_settings(self, url, proxies, stream, verify, cert):
        if proxies:  # proxies given with the request itself: nothing to reuse
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc, stream, verify, cert)
        with self._environment_lock:
            settings = self._environment.get(key)
            if settings is None:
                settings = super().merge_environment_settings(url, {}, stream, verify, cert)
                self._environment[key] = settings
        # A copy, as requests returns a new dict on each call.
        return {**settings, "proxies": dict(settings["proxies"])}

    def get_redirect_target(self, resp):
        """Where a redirect leads, its body left unread: requests reads it whole before it
        follows the redirect, without bound, so a 302 whose body never ends held the command
        for ever (the answer at the end is read within bounds, surveyctl.api.body)."""
        target = super().get_redirect_target(resp)
        if target is not None and resp._content is False:
            resp.close()  # the connection goes with the body: the next request opens another
            resp._content, resp._content_consumed = b"", True
        return target

    def rebuild_auth(self, prepared_request, response):
        """On a redirect, requests drops an Authorization header bound for another host but
        keeps every other header: the access-token goes only to the host it was set for."""
        if self.should_strip_auth(response.request.url, prepared_request.url):
            prepared_request.headers.pop(TOKEN_HEADER, None)
        super().rebuild_auth(prepared_request, response)


class _ThrottledAdapter(HTTPAdapter):
    """Sends each request (with its retries) inside the throttle: a place in flight and a turn
    in the pace before it, a success told after it (the retry policy tells the 429s)."""

    def __init__(self, throttle: Throttle, **kwargs: Any):
        super().__init__(**kwargs)
        self.throttle = throttle

    def send(self, request, **kwargs):
        self.throttle.acquire()
        try:
            response = super().send(request, **kwargs)
        finally:
            self.throttle.release()
        if response.status_code != 429 and response.status_code < 500:
            self.throttle.succeeded()
        return response


def make_session(
    api_key: str, retry: Retry, pool_size: int, throttle: Throttle | None = None
) -> requests.Session:
    """A session sending `api_key` as the access-token header, with `retry`, a pool of
    `pool_size` connections per host and, when given, `throttle` around every request."""
    session = _Session()
    session.headers.update({TOKEN_HEADER: api_key, "User-Agent": f"surveyctl/{__version__}"})
    pool = {"max_retries": retry, "pool_connections": pool_size, "pool_maxsize": pool_size}
    adapter = _ThrottledAdapter(throttle, **pool) if throttle else HTTPAdapter(**pool)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
