"""A service's pages are its word: one that ignores the `page` parameter (every page the
first) or announces a billion pages makes no reader go on for ever or fill the memory."""

from __future__ import annotations

import json
import threading

import pytest

from surveyctl.api import ApiClient
from surveyctl.api.account_surveys import MAX_ANNOUNCED_PAGES, account_surveys
from surveyctl.api.reading import RepeatedPage

from ..reconcile.proxies import Proxy

KEY = "sk-live-7f3c9a1e5b2d4c6e8a0b"


def _surveys(status: int, first: int = 20000) -> list[dict]:
    return [{"ps_survey_id": first + i, "ps_survey_status": status} for i in range(100)]


class CountedList:
    """A survey list that counts the pages read of it (from the identity check's threads)."""

    def __init__(self):
        self.reads = 0
        self._lock = threading.Lock()

    def get_surveys_page(self, *, page, status, targeting=True):
        with self._lock:
            self.reads += 1
        return self.page(page, status)


class SamePage(CountedList):
    """A survey list that answers every page with the same full page."""

    def page(self, page, status):
        return _surveys(status), 1


class SamePageAnnounced(CountedList):
    """A survey list that announces 3 pages and answers each with the same 5 surveys."""

    def page(self, page, status):
        return _surveys(status)[:5], 3


def test_the_identity_check_refuses_announced_pages_that_repeat_the_one_before():
    # Taken as read, each survey would be found three times: three twins of one survey.
    with pytest.raises(RepeatedPage, match="page 2 of the survey list with the items of page 1"):
        account_surveys(SamePageAnnounced())


class BillionPages(CountedList):
    """A survey list announcing 999,999,999 pages, each of one survey."""

    def page(self, page, status):
        return [{"ps_survey_id": page, "ps_survey_status": status}], 999_999_999


def test_the_identity_check_stops_at_a_page_that_repeats_the_one_before():
    listing = SamePage()
    with pytest.raises(RepeatedPage) as raised:
        account_surveys(listing)
    assert str(raised.value).startswith(
        "the service answered page 2 of the survey list with the items of page 1"
    )
    assert listing.reads <= 8


def test_the_identity_check_reads_a_bounded_number_of_the_pages_a_service_announces():
    listing = BillionPages()
    found, pages = account_surveys(listing, parallelism=50)
    assert pages == listing.reads == 4 * MAX_ANNOUNCED_PAGES
    assert len(found) == pages


class IgnoringPageProxy(Proxy):
    """A marketplace answering every page of the survey list with the same 100 surveys."""

    def reshape(self, request, answer, headers: dict) -> bytes:
        headers["Content-Type"] = "application/json"
        headers.pop("total_pages", None)
        answer.status_code = 200
        return json.dumps(_surveys(int(request.args.get("status", 22)))).encode()


def test_a_client_list_read_stops_at_a_page_that_repeats_the_one_before(sandbox):
    proxy = IgnoringPageProxy(sandbox.url)
    client = ApiClient(proxy.url, KEY, retries=0)
    try:
        with pytest.raises(RepeatedPage, match="page 2 of the survey list"):
            client.list_surveys(status=11)
    finally:
        client.close()
        proxy.stop()
