"""The requests session of a client: the access-token header, pooled connections, retries, and
the environment's proxy settings read once per host."""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from surveyctl import __version__


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


def make_session(api_key: str, retry: Retry, pool_size: int) -> requests.Session:
    """A session sending `api_key` as the access-token header, with `retry` and a pool of
    `pool_size` connections per host."""
    session = _Session()
    session.headers.update({"access-token": api_key, "User-Agent": f"surveyctl/{__version__}"})
    adapter = HTTPAdapter(max_retries=retry, pool_connections=pool_size, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
