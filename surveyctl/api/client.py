"""HTTP client of the marketplace API (spec section 4).

One `ApiClient` per environment: a requests session carrying the `access-token` header,
retries with exponential backoff and jitter for 429/502/503/504 and connection errors on
the idempotent methods (GET, PUT, DELETE), honouring `Retry-After`.

A POST is never retried after it may have been processed: a create retried blindly can make a
duplicate survey. It is retried only where the service said it did not process it (429 Too
Many Requests, 503 Service Unavailable) or where the connection was never made; a 502/504,
a reset or a read timeout after sending is left to the caller (the applier's create journal).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from surveyctl import __version__
from surveyctl.api import paths
from surveyctl.errors import ApiError, ConnectionFailed

log = logging.getLogger("surveyctl.http")

RETRY_STATUSES = (429, 502, 503, 504)
POST_RETRY_STATUSES = (429, 503)
_LOG_BODY_LIMIT = 2000


def _retry_policy(
    retries: int, backoff: float, statuses: tuple[int, ...], methods: set[str], read: int
) -> Retry:
    """Backoff with jitter for `methods` on `statuses`, honouring Retry-After; `read` retries
    after the request may have been received (only safe for idempotent methods)."""
    return Retry(
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
    )


# Every API key a client of this process was made with: `redact` removes them from any text
# that may reach a person (error messages, --debug tracebacks and logs).
_SECRETS: set[str] = set()
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` without any API key a client of this process holds, in any of the spellings an
    error message may use (as is, stripped, or escaped as Python shows str and bytes values:
    requests' InvalidHeader repeats the header value that way)."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        for form in _spellings(secret):
            text = text.replace(form, REDACTED)
    return text


def _spellings(secret: str) -> list[str]:
    forms = {
        secret,
        secret.strip(),
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "backslashreplace"))[2:-1],
    }
    return sorted((form for form in forms if form), key=len, reverse=True)


def _session(api_key: str, retry: Retry, pool_size: int) -> requests.Session:
    session = requests.Session()
    session.headers.update({"access-token": api_key, "User-Agent": f"surveyctl/{__version__}"})
    adapter = HTTPAdapter(max_retries=retry, pool_connections=pool_size, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _error_message(response: requests.Response) -> tuple[int | None, str]:
    """The service's error code and message; 401 bodies may say `msg` instead (public facts)."""
    try:
        body = response.json()
    except ValueError:
        return None, (response.text or response.reason or "").strip()[:300]
    if not isinstance(body, dict):
        return None, str(body)[:300]
    code = body.get("ps_api_response_code")
    message = body.get("ps_api_response_message") or body.get("msg") or response.reason
    return (code if isinstance(code, int) else None), str(message)


class ApiClient:
    """Calls the marketplace API of one environment: `{host}/buyers/v2` and `{host}/buyers/v3`."""

    def __init__(
        self,
        host: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        pool_size: int = 10,
    ):
        self.host = host.rstrip("/")
        self.timeout = timeout
        _SECRETS.add(api_key)
        idempotent = _retry_policy(
            retries, backoff, RETRY_STATUSES, {"GET", "PUT", "DELETE"}, read=retries
        )
        # POST: only refusals the service states, and connections never made.
        post = _retry_policy(retries, backoff, POST_RETRY_STATUSES, {"POST"}, read=0)
        self._session = _session(api_key, idempotent, pool_size)
        self._post_session = _session(api_key, post, pool_size)
        # Counts requests by "METHOD kind" for benchmarks and tests of request economy.
        self.request_counts: dict[str, int] = {}
        self._counts_lock = threading.Lock()

    def url(self, path: paths.Path) -> str:
        if path.version == paths.SANDBOX:
            return f"{self.host}/sandbox{path.path}"
        return f"{self.host}/buyers/{path.version}{path.path}"

    def close(self) -> None:
        self._session.close()
        self._post_session.close()

    # -- transport -------------------------------------------------------------------------

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
            log.debug("> %s %s params=%s body=%s", method, url, params, _clip(body))
        try:
            session = self._post_session if method == "POST" else self._session
            response = session.request(method, url, json=body, params=params, timeout=self.timeout)
        except requests.RequestException as exc:
            detail = redact(f"{type(exc).__name__}: {exc}")
            raise ConnectionFailed(f"{method} {url} failed: {detail}") from exc
        except UnicodeError:
            # http.client encodes header values as Latin-1 and says which character failed.
            raise ConnectionFailed(
                f"{method} {url} failed: a request header holds a character HTTP cannot carry"
            ) from None  # the codec's message quotes the character: part of the key
        if log.isEnabledFor(logging.DEBUG):
            log.debug("< %s %s %s", response.status_code, url, redact(_clip(response.text)))
        if response.status_code not in expected:
            code, message = _error_message(response)
            raise ApiError(method, url, response.status_code, code, redact(message))
        return response

    def _json(self, method: str, path: paths.Path, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise ApiError(
                method, self.url(path), response.status_code, None, "the body is not JSON"
            ) from exc

    # -- surveys (v2) ----------------------------------------------------------------------

    def create_survey(self, body: dict) -> dict:
        return self._json("POST", paths.surveys(), body=body, expected=(201,))

    def update_survey(self, survey_id: int, body: dict) -> dict:
        return self._json("PUT", paths.survey(survey_id), body=body)

    def get_survey(self, survey_id: int) -> dict:
        return self._json("GET", paths.survey(survey_id))

    def list_surveys(self, status: list[int] | None = None) -> list[dict]:
        """The buyer's surveys, every page; `status` asks only for those status codes (the
        service lists live surveys when it is not given, public facts)."""
        surveys: list[dict] = []
        for items in self.iter_pages(self._surveys_page, status=status):
            surveys.extend(items)
        return surveys

    def _surveys_page(self, *, page: int, status: list[int] | None) -> tuple[list[dict], int]:
        params: dict[str, Any] = {"page": page}
        if status:
            params["status"] = ",".join(str(s) for s in status)
        response = self.request("GET", paths.surveys(), params=params)
        return response.json(), _total_pages(response)

    def delete_survey(self, survey_id: int) -> None:
        self.request("DELETE", paths.survey(survey_id), expected=(200, 204))

    def set_survey_status(self, survey_id: int, status: int) -> dict:
        return self._json("PUT", paths.survey_status(survey_id), body={"ps_survey_status": status})

    def update_quota(self, survey_id: int, buyer_quota_id: str, body: dict) -> dict:
        return self._json("PUT", paths.quota(survey_id, buyer_quota_id), body=body)

    def quota_performance(self, survey_id: int) -> list[dict]:
        return self._json("GET", paths.quota_performance(survey_id))

    # -- exclusion groups (v2) -------------------------------------------------------------

    def create_group(self, body: dict) -> dict:
        return self._json("POST", paths.survey_groups(), body=body, expected=(201,))

    def update_group(self, ref: str, body: dict) -> dict:
        return self._json("PUT", paths.survey_group(ref), body=body)

    def get_group(self, ref: str) -> dict:
        return self._json("GET", paths.survey_group(ref))

    def delete_group(self, ref: str) -> None:
        self.request("DELETE", paths.survey_group(ref), expected=(200, 204))

    # -- catalogue, transactions, checks (v3) ----------------------------------------------

    def get_attributes_page(
        self, localization: str, classes: list[int] | None = None, page: int = 1
    ) -> tuple[list[dict], int]:
        """One page of the catalogue and the `total_pages` header."""
        params: dict[str, Any] = {"localization": localization, "page": page}
        if classes:
            params["class"] = ",".join(str(c) for c in classes)
        response = self.request("GET", paths.attributes(), params=params)
        return response.json(), _total_pages(response)

    def get_transactions_page(
        self,
        survey_id: int,
        *,
        page: int = 1,
        limit: int | None = None,
        status: list[int] | None = None,
        supplier_ids: list[int] | None = None,
    ) -> tuple[list[dict], int]:
        """One page of a survey's transactions and the `total_pages` header."""
        params: dict[str, Any] = {"page": page}
        if limit is not None:
            params["limit"] = limit
        if status:
            params["status"] = ",".join(str(s) for s in status)
        if supplier_ids:
            params["supplier_ids"] = ",".join(str(s) for s in supplier_ids)
        response = self.request("GET", paths.transactions(survey_id), params=params)
        return response.json(), _total_pages(response)

    def paged(self, fetch_page, **kwargs: Any) -> Iterator[tuple[list[dict], int]]:
        """Every page of a paged call, `fetch_page(page=N, **kwargs)`, from page 1, with the
        `total_pages` announced. An empty page ends the read even if more were announced:
        items can leave a filter while we page (a transaction reconciled meanwhile)."""
        page, total = 1, 1
        while page <= total:
            items, total = fetch_page(page=page, **kwargs)
            yield items, total
            if not items:
                break
            page += 1

    def iter_pages(self, fetch_page, **kwargs: Any) -> Iterator[list[dict]]:
        """The items of every page, as `paged` reads them."""
        for items, _total in self.paged(fetch_page, **kwargs):
            yield items

    def get_transaction(self, survey_id: int, transaction_id: str) -> dict:
        return self._json("GET", paths.transaction(survey_id, transaction_id))

    def text_check(self, transaction_id: str, questions: list[dict]) -> dict:
        body = {"transaction_id": transaction_id, "questions": questions}
        return self._json("POST", paths.text_check(), body=body)

    # -- reconciliation (v2) ---------------------------------------------------------------

    def adjust(self, transaction_ids: list[str], survey_id: int | None = None) -> dict:
        path = paths.adjustments() if survey_id is None else paths.survey_adjustments(survey_id)
        body = [{"transaction_id": t} for t in transaction_ids]
        return self._json("POST", path, body=body, expected=(200, 202))

    # -- sandbox only (not part of the marketplace API) ------------------------------------

    def simulate_traffic(self, survey_id: int, body: dict) -> dict:
        """Sends simulated respondents at a survey of the sandbox; 404 elsewhere."""
        return self._json("POST", paths.sandbox_simulate(survey_id), body=body)


def _total_pages(response: requests.Response) -> int:
    try:
        return max(1, int(response.headers.get("total_pages", "1")))
    except ValueError:
        return 1


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= _LOG_BODY_LIMIT else text[:_LOG_BODY_LIMIT] + "..."
