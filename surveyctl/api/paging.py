"""Paged lists: every page of a list call, read one after the other or one ahead.

The survey list, a survey's quotas, the attribute catalogue and a survey's transactions come
in pages. A page reader of the client (`get_surveys_page`, ...) fetches one page and says how
many there are (`page_count`: the service's `total_pages` header, or counted where it sends
none); `paged` and `iter_pages` read them all from page 1, and refuse a page that repeats the
one before. Kept apart from the calls of each resource, which only say how to fetch one page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import requests

from surveyctl.api import paths
from surveyctl.api.read_ahead import read_ahead
from surveyctl.api.reading import check_next_page, json_list, total_pages
from surveyctl.api.transport import Transport


class Paging(Transport):
    """Reads every page of a paged call; the list calls of the client build on it."""

    def _list_page(self, path: paths.Path, params: dict[str, Any]) -> tuple[list[dict], int]:
        """One page of a list and the number of pages (`page_count`)."""
        response = self.request("GET", path, params=params)
        items = self._page_items("GET", path, response)
        return items, page_count(response, params["page"], items, params["limit"])

    def _page_items(self, method: str, path: paths.Path, response: requests.Response) -> list[dict]:
        return json_list(response, method, self.shown_url(path))

    def paged(
        self, fetch_page, *, prefetch: bool = False, **kwargs: Any
    ) -> Iterator[tuple[list[dict], int]]:
        """Every page of a paged call, `fetch_page(page=N, **kwargs)`, from page 1, with the
        number of pages known so far (`page_count`). An empty page ends the read even if more
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


def page_count(response: requests.Response, page: int, items: list, limit: int | None) -> int:
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


def _listed(fetch_page: Callable) -> str:
    """What a page reader of the client lists, for a message: "the survey list"."""
    names = {
        "get_surveys_page": "the survey list",
        "_quotas_page": "the quota list",
        "get_attributes_page": "the attribute catalogue",
        "get_transactions_page": "the transactions",
    }
    return names.get(getattr(fetch_page, "__name__", ""), "a list")
