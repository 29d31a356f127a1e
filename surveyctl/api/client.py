"""HTTP client of the marketplace API (spec section 4).

One `ApiClient` per environment: a requests session carrying the `access-token` header,
retries with exponential backoff and jitter for 429/502/503/504 and connection errors on
the idempotent methods (GET, PUT, DELETE), honouring `Retry-After` (surveyctl.api.retry), and
a throttle shared by every thread that slows down on 429s and speeds up after
(surveyctl.api.throttle).
Every retry is told to the `on_retry` callback before it waits (the client never prints), and
a service that cannot be reached ends in one sentence naming the target and the reason.

A POST (or a PATCH, whose `add` to a list is not idempotent either) is never retried after
it may have been processed: a create retried blindly can make a duplicate survey. It is retried
only where the service said it did not process it (429 Too Many Requests, 503 Service
Unavailable) or where the connection was never made; a 502/504, a reset or a read timeout
after sending is left to the caller (the applier's create journal).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from typing import Any

import requests
from urllib3.exceptions import LocationValueError

from surveyctl.api import paths
from surveyctl.api.body import MAX_BODY, BodyTooLarge, BodyTooSlow, read_body
from surveyctl.api.read_ahead import read_ahead
from surveyctl.api.reading import (
    ATTRIBUTE_CODES,
    check_next_page,
    clip,
    error_message,
    json_any,
    json_if_any,
    json_list,
    json_object,
    single_record,
    survey_codes,
    total_pages,
    with_codes,
    with_numbers,
)
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
# Survey status codes (public facts): the survey list answers one status per call.
SURVEY_STATUSES = (11, 22, 33, 44)
SURVEYS_PAGE_SIZE = 100
QUOTA_COUNTS = ("completes_goal", "completes_fielded")


class ApiClient:
    """Calls the marketplace API of one environment: `{host}/buyers/v2` and `{host}/buyers/v3`.

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

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        # A connection left open keeps a served sandbox's worker busy when it is stopped.
        self.close()

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

    # -- surveys (v2) ----------------------------------------------------------------------

    # Every survey answer passes through `survey_codes`: its id and status as integers, also
    # when the service writes them as text (public facts: numbers may come as strings).

    def create_survey(self, body: dict) -> dict:
        return survey_codes(self._object("POST", paths.surveys(), body=body, expected=(201,)))

    def update_survey(self, survey_id: int, body: dict) -> dict:
        return survey_codes(self._object("PUT", paths.survey(survey_id), body=body))

    def get_survey(self, survey_id: int) -> dict:
        return survey_codes(self._object("GET", paths.survey(survey_id)))

    def patch_survey(self, survey_id: int, operations: list[dict]) -> dict:
        """A partial update: a JSON Patch list (RFC 6902), e.g. `[{"op": "replace", "path":
        "/completes_required", "value": 2000}]`; the survey as it is afterwards."""
        return survey_codes(self._object("PATCH", paths.survey(survey_id), body=operations))

    def survey_performance(self, survey_id: int) -> dict:
        """Fieldwork figures of a survey (404 code 1006, 403 code 1020 per public facts)."""
        return self._json("GET", paths.survey_performance(survey_id))

    def list_surveys(
        self,
        status: int | Iterable[int] | None = None,
        *,
        from_date: date | str | None = None,
        to_date: date | str | None = None,
        targeting: bool = True,
        limit: int = SURVEYS_PAGE_SIZE,
    ) -> list[dict]:
        """Every survey of the buyer matching the filters, all pages read.

        The service answers one `status` per call and only live surveys without it, so
        `status=None` asks for each status in turn (11, 22, 33, 44): every survey, whatever its
        status. `from_date`/`to_date` (a date or "YYYYMMDD", Pacific time) bound the creation
        date; `targeting=False` leaves out qualifications and quotas."""
        statuses = SURVEY_STATUSES if status is None else _statuses(status)
        surveys: list[dict] = []
        for one in statuses:
            for items in self.iter_pages(
                self.get_surveys_page,
                status=one,
                from_date=from_date,
                to_date=to_date,
                targeting=targeting,
                limit=limit,
            ):
                surveys.extend(items)
        return surveys

    def get_surveys_page(
        self,
        *,
        page: int = 1,
        status: int | None = None,
        from_date: date | str | None = None,
        to_date: date | str | None = None,
        targeting: bool = True,
        limit: int = SURVEYS_PAGE_SIZE,
    ) -> tuple[list[dict], int]:
        """One page of the survey list and the number of pages (`_page_count`)."""
        params: dict[str, Any] = {"page": page, "limit": limit}
        if status is not None:
            params["status"] = status
        if from_date is not None:
            params["fromDate"] = _yyyymmdd(from_date)
        if to_date is not None:
            params["toDate"] = _yyyymmdd(to_date)
        if not targeting:
            params["targeting"] = 0
        items, pages = self._list_page(paths.surveys(), params)
        return [survey_codes(item) for item in items], pages

    def delete_survey(self, survey_id: int) -> None:
        self.request("DELETE", paths.survey(survey_id), expected=(200, 204))

    def get_survey_status(self, survey_id: int) -> dict:
        """The survey's status without its targeting (public facts name the call); the sandbox
        adds title, goal, offer_price and mod_on (see docs/api-assumptions.md)."""
        return survey_codes(self._json("GET", paths.survey_status(survey_id)))

    def set_survey_status(self, survey_id: int, status: int) -> dict:
        """Moves the survey; the survey as it is afterwards. The spec names this call by method
        only: an answer that does not show `ps_survey_status` (204 or no body, `[]` as the
        transaction status call answers, a message) is not taken for a failed move, which it
        may not be, but confirmed by reading the survey."""
        path = paths.survey_status(survey_id)
        response = self.request(
            "PUT", path, body={"ps_survey_status": status}, expected=(200, 202, 204)
        )
        answer = json_if_any(response)
        if isinstance(answer, dict) and "ps_survey_status" in answer:
            return survey_codes(answer)
        return self.get_survey(survey_id)

    def update_quota(self, survey_id: int, buyer_quota_id: str, body: dict) -> dict:
        return self._object("PUT", paths.quota(survey_id, buyer_quota_id), body=body)

    def add_quota(self, survey_id: int, quota: dict) -> dict:
        """Adds one quota (a Quota of spec 2.4) to a survey; the quota with its ps_quota_id."""
        return self._object("POST", paths.quotas(survey_id), body=quota, expected=(200, 201))

    def patch_quota(self, survey_id: int, buyer_quota_id: str, operations: list[dict]) -> dict:
        """A partial quota update with a JSON Patch list (e.g. `/current_target`)."""
        return self._object("PATCH", paths.quota(survey_id, buyer_quota_id), body=operations)

    def delete_quota(self, survey_id: int, buyer_quota_id: str) -> None:
        self.request("DELETE", paths.quota(survey_id, buyer_quota_id), expected=(200, 204))

    def list_quotas(self, survey_id: int, limit: int = SURVEYS_PAGE_SIZE) -> list[dict]:
        """Every quota of the survey with its title and criteria, all pages read."""
        quotas: list[dict] = []
        for items in self.iter_pages(self._quotas_page, survey_id=survey_id, limit=limit):
            quotas.extend(items)
        return quotas

    def _quotas_page(self, *, survey_id: int, page: int, limit: int) -> tuple[list[dict], int]:
        return self._list_page(paths.quotas(survey_id), {"page": page, "limit": limit})

    def _list_page(self, path: paths.Path, params: dict[str, Any]) -> tuple[list[dict], int]:
        """One page of a list and the number of pages (`_page_count`)."""
        response = self.request("GET", path, params=params)
        items = self._page_items("GET", path, response)
        return items, _page_count(response, params["page"], items, params["limit"])

    def get_quota(self, survey_id: int, buyer_quota_id: str) -> dict:
        """One quota with its title, criteria and current_target."""
        return self._object("GET", paths.quota(survey_id, buyer_quota_id))

    def quota_performance(self, survey_id: int) -> list[dict]:
        """Completes per quota; counts sent as text are read as numbers."""
        rows = self._json("GET", paths.quota_performance(survey_id))
        return [with_numbers(row, QUOTA_COUNTS) for row in rows] if isinstance(rows, list) else rows

    def set_transaction_status(
        self,
        survey_id: int,
        transaction_id: str,
        status: int,
        quota_ids: Iterable[str] = (),
        *,
        sqlc: bool = False,
    ) -> None:
        """Records a respondent's final status (st 17, 18, 20, 21 or 30); with QLC a complete
        names its quotas. It wins over a later return link. Refusals raise ApiError with the
        call's own `ps_error_code` (1001-1005)."""
        params: dict[str, Any] = {"st": status}
        quota_ids = list(quota_ids)
        if quota_ids:
            params["quota_id"] = ",".join(quota_ids)
        if sqlc:
            params["sqlc"] = "true"
        self.request("POST", paths.transaction_status(survey_id, transaction_id), params=params)

    # -- exclusion groups (v2) -------------------------------------------------------------

    def create_group(self, body: dict) -> dict:
        return self._object("POST", paths.survey_groups(), body=body, expected=(201,))

    def update_group(self, ref: str, body: dict) -> Any:
        """The spec shows neither the body nor the status of this answer (4.9): any 2xx the
        service may give an update (200, 201, or 204 with no body) is the group updated; its
        JSON, when it sends some, else None. The applier records the body it sent."""
        path = paths.survey_group(ref)
        response = self.request("PUT", path, body=body, expected=(200, 201, 202, 204))
        return json_if_any(response)

    def get_group(self, ref: str) -> dict:
        return self._object("GET", paths.survey_group(ref))

    def delete_group(self, ref: str) -> None:
        self.request("DELETE", paths.survey_group(ref), expected=(200, 204))

    # -- catalogue, transactions, checks (v3) ----------------------------------------------

    def get_attributes_page(
        self, localization: str, classes: list[int] | None = None, page: int = 1
    ) -> tuple[list[dict], int]:
        """One page of the catalogue and the number of pages (`_page_count`)."""
        params: dict[str, Any] = {"localization": localization, "page": page}
        if classes:
            params["class"] = ",".join(str(c) for c in classes)
        path = paths.attributes()
        # A page past the last is only asked for when the service sent no `total_pages`; the
        # sandbox answers it 404 (an empty page elsewhere): either way the catalogue has ended.
        response = self.request(
            "GET", path, params=params, expected=(200, 404) if page > 1 else (200,)
        )
        if response.status_code == 404:
            return [], page - 1
        items = self._page_items("GET", path, response)
        pages = _page_count(response, page, items, None)
        return [with_codes(item, ATTRIBUTE_CODES) for item in items], pages

    def get_transactions_page(
        self,
        survey_id: int,
        *,
        page: int = 1,
        limit: int | None = None,
        status: list[int] | None = None,
        supplier_ids: list[int] | None = None,
    ) -> tuple[list[dict], int]:
        """One page of a survey's transactions and the number of pages (`_page_count`)."""
        params: dict[str, Any] = {"page": page}
        if limit is not None:
            params["limit"] = limit
        if status:
            params["status"] = ",".join(str(s) for s in status)
        if supplier_ids:
            params["supplier_ids"] = ",".join(str(s) for s in supplier_ids)
        path = paths.transactions(survey_id)
        response = self.request("GET", path, params=params)
        items = self._page_items("GET", path, response)
        return items, _page_count(response, page, items, limit)

    def _page_items(self, method: str, path: paths.Path, response: requests.Response) -> list[dict]:
        return json_list(response, method, self.shown_url(path))

    def paged(
        self, fetch_page, *, prefetch: bool = False, **kwargs: Any
    ) -> Iterator[tuple[list[dict], int]]:
        """Every page of a paged call, `fetch_page(page=N, **kwargs)`, from page 1, with the
        number of pages known so far (`_page_count`). An empty page ends the read even if more
        were announced: items can leave a filter while we page (a transaction reconciled
        meanwhile); a page that repeats the one before is RepeatedPage.

        `prefetch`: page N+1 is fetched in a background thread while the caller works on
        page N (two pages in memory at most)."""
        pages = self._pages(fetch_page, **kwargs)
        return read_ahead(pages) if prefetch else pages

    def _pages(self, fetch_page, **kwargs: Any) -> Iterator[tuple[list[dict], int]]:
        page, total, previous = 1, 1, None
        while page <= total:
            items, total = fetch_page(page=page, **kwargs)
            check_next_page(_listed(fetch_page), page, items, previous)
            yield items, total
            if not items:
                break
            page, previous = page + 1, items

    def iter_pages(self, fetch_page, **kwargs: Any) -> Iterator[list[dict]]:
        """The items of every page, as `paged` reads them."""
        for items, _total in self.paged(fetch_page, **kwargs):
            yield items

    def get_transaction(self, survey_id: int, transaction_id: str) -> dict:
        """One transaction record (the service may answer an array of one: it is unwrapped).
        An array of none, or any other shape, is one sentence: a caller reads its fields."""
        path = paths.transaction(survey_id, transaction_id)
        response = self.request("GET", path)
        record = single_record(json_any(response, "GET", self.shown_url(path)))
        if isinstance(record, dict):
            return record
        reason = (
            "no record of the transaction (an empty list)"
            if record == []
            else "the body is not a JSON object"
        )
        raise ApiError("GET", self.shown_url(path), response.status_code, None, reason)

    def text_check(self, transaction_id: str, questions: list[dict]) -> dict:
        body = {"transaction_id": transaction_id, "questions": questions}
        return self._object("POST", paths.text_check(), body=body)

    # -- reconciliation (v2) ---------------------------------------------------------------

    def adjust(self, transaction_ids: list[str], survey_id: int | None = None) -> dict:
        path = paths.adjustments() if survey_id is None else paths.survey_adjustments(survey_id)
        body = [{"transaction_id": t} for t in transaction_ids]
        # An array of one object is read as that object, as the service answers one
        # transaction (public facts): the summary and the adjustment's id are in it.
        return single_record(self._json("POST", path, body=body, expected=(200, 202)))

    # -- sandbox only (not part of the marketplace API) ------------------------------------

    def simulate_traffic(self, survey_id: int, body: dict) -> dict:
        """Sends simulated respondents at a survey of the sandbox; 404 elsewhere."""
        return self._object("POST", paths.sandbox_simulate(survey_id), body=body)


def _page_count(response: requests.Response, page: int, items: list, limit: int | None) -> int:
    """The pages of a paged call as far as page `page` shows: the `total_pages` header when the
    service sends a number there (the spec's lists do). Without one, one more page whenever
    this one is full (`limit` items), or, with no `limit` asked, whenever it is not empty: a
    missing header must not end a read at its first page."""
    announced = total_pages(response)
    if announced is not None:
        return announced
    if limit is None:
        return page + 1 if items else page
    return page + 1 if len(items) >= limit else page


def may_have_been_processed(exc: ApiError | ConnectionFailed) -> bool:
    """Whether a POST that failed with `exc` may have been processed all the same: not when
    the service refused it (a 4xx, or 429/503, which say it was not taken); yes after another
    5xx, a reset or no answer, which come after the request may have been received."""
    if isinstance(exc, ApiError):
        return exc.status >= 500 and exc.status not in POST_RETRY_STATUSES
    return True


def _listed(fetch_page: Callable) -> str:
    """What a page reader of this client lists, for a message: "the survey list"."""
    names = {
        "get_surveys_page": "the survey list",
        "_quotas_page": "the quota list",
        "get_attributes_page": "the attribute catalogue",
        "get_transactions_page": "the transactions",
    }
    return names.get(getattr(fetch_page, "__name__", ""), "a list")


def _statuses(status: int | Iterable[int]) -> tuple[int, ...]:
    return (status,) if isinstance(status, int) else tuple(dict.fromkeys(status))


def _yyyymmdd(value: date | str) -> str:
    return value.strftime("%Y%m%d") if isinstance(value, date) else value
