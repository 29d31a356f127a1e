"""Paged lists: every page of a list call, read one after the other or one ahead.

The survey list, a survey's quotas, the attribute catalogue and a survey's transactions come
in pages. A page reader of the client (`get_surveys_page`, ...) fetches one page and says how
many there are (`page_count`: the service's `total_pages` header, or counted where it sends
none); `paged` and `iter_pages` read them all from page 1. Kept apart from the calls of each
resource, which only say how to fetch one page.

A list answer is the service's word, not a fact: a read takes at most `reading.MAX_PAGES`
pages, hands on each item once (by its id), and ends with one sentence naming the call and
what was wrong (UntrustedPage, RepeatedPage) rather than read on for ever or hand on a list
doubled or cut short: a `total_pages` that is no page count, a page of more items than its
`limit`, a page that repeats the one before or holds only items read already, an empty page
before the last one announced, pages announced past that most.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import requests

from surveyctl.api import paths
from surveyctl.api.read_ahead import read_ahead
from surveyctl.api.reading import (
    UntrustedPage,
    check_next_page,
    check_within_most,
    json_list,
    total_pages,
)
from surveyctl.api.transport import Transport


class Paging(Transport):
    """Reads every page of a paged call; the list calls of the client build on it."""

    def _list_page(self, path: paths.Path, params: dict[str, Any]) -> tuple[list[dict], int]:
        """One page of a list and the number of pages (`page_count`)."""
        response = self.request("GET", path, params=params)
        items = self._page_items("GET", path, response)
        where = f"GET {self.shown_url(path)}"
        return items, page_count(response, params["page"], items, params["limit"], where)

    def _page_items(self, method: str, path: paths.Path, response: requests.Response) -> list[dict]:
        return json_list(response, method, self.shown_url(path))

    def paged(
        self, fetch_page, *, prefetch: bool = False, **kwargs: Any
    ) -> Iterator[tuple[list[dict], int]]:
        """Every page of a paged call, `fetch_page(page=N, **kwargs)`, from page 1, with the
        number of pages known so far (`page_count`), each item once (an item whose id an
        earlier page held is left out). An empty page ends the read where no more pages are
        announced: items can leave a filter while we page (a transaction reconciled
        meanwhile). See the module for what ends it with an error.

        `prefetch`: page N+1 is fetched in a background thread while the caller works on
        page N (two pages in memory at most)."""
        pages = self._pages(fetch_page, **kwargs)
        return read_ahead(pages) if prefetch else pages

    def _pages(self, fetch_page, **kwargs: Any) -> Iterator[tuple[list[dict], int]]:
        listed = _LISTS.get(getattr(fetch_page, "__name__", ""))
        what = listed.what if listed else "a list"
        where = f"GET {self.shown_url(listed.path(kwargs))}" if listed else what
        ids = _Ids(listed.key, listed.recent_only) if listed else _Ids(None)
        page, total, previous = 1, 1, None
        while page <= total:
            check_within_most(where, page, "announcing more pages still")
            items, total = fetch_page(page=page, **kwargs)
            check_next_page(what, page, items, previous)
            if not items and total > page:
                raise UntrustedPage(where, page, f"empty, announcing {total} pages (total_pages)")
            fresh = ids.new(items)
            if fresh is None or (items and not fresh):
                raise UntrustedPage(
                    where, page, f"with only items of the pages before it (each {ids.key} read)"
                )
            yield fresh or [], total
            if not items:
                break
            page, previous = page + 1, items

    def iter_pages(self, fetch_page, **kwargs: Any) -> Iterator[list[dict]]:
        """The items of every page, as `paged` reads them."""
        for items, _total in self.paged(fetch_page, **kwargs):
            yield items


def page_count(
    response: requests.Response, page: int, items: list, limit: int | None, where: str
) -> int:
    """The pages of a paged call as far as page `page` shows: the `total_pages` header when the
    service sends one (the spec's lists do). Without one, one more page whenever this one is
    full (`limit` items), or, with no `limit` asked, whenever it is not empty: a missing
    header must not end a read at its first page. UntrustedPage for a header that is no page
    count, and for more items than `limit`: a service that ignores it pages otherwise than
    asked, so the pages after this one would not follow on from it. `where` names the call
    (`GET /buyers/v2/surveys`) for the message."""
    if limit is not None and len(items) > limit:
        raise UntrustedPage(
            where, page, f"with {len(items)} items, more than the {limit} its limit asked for"
        )
    announced = total_pages(response, where, page)
    if announced is not None:
        return announced
    if limit is None:
        return page + 1 if items else page
    return page + 1 if len(items) >= limit else page


class _Ids:
    """The ids of the items a read has handed on, to hand on each item once. Items without a
    hashable id are handed on as they come (nothing tells two of them apart).

    With `recent_only` only the page before is remembered, so memory stays flat however long
    the list (a survey's transactions): a list read while it grows shows an item again on the
    next page, not pages later. Each page's set of ids is remembered as one number, so a page
    that is a page read before still ends the read."""

    def __init__(self, key: str | None, recent_only: bool = False):
        self.key = key
        self._recent_only = recent_only
        self._seen: set = set()
        self._pages: set[int] = set()

    def new(self, items: list[dict]) -> list[dict] | None:
        """The items not handed on before; None when the page is one read before."""
        if self.key is None:
            return items
        ids = [_id(item, self.key) for item in items]
        named = frozenset(value for value in ids if value is not None)
        if named:
            if hash(named) in self._pages:
                return None
            self._pages.add(hash(named))
        before = self._seen
        handed = set() if self._recent_only else before
        fresh = []
        for item, value in zip(items, ids, strict=True):
            if value is None:
                fresh.append(item)
            elif value not in before and value not in handed:
                handed.add(value)
                fresh.append(item)
        self._seen = handed
        return fresh


def _id(item: dict, key: str) -> str | int | None:
    value = item.get(key)
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


class _List:
    """A list call as messages name it, and the field that tells its items apart (None: the
    catalogue, where one question may be on several pages (spec 4.6) and `catalog` keeps the
    first)."""

    def __init__(
        self,
        what: str,
        path: Callable[[dict], paths.Path],
        key: str | None,
        recent_only: bool = False,
    ):
        self.what = what
        self.path = path
        self.key = key
        self.recent_only = recent_only  # see _Ids


_LISTS = {
    "get_surveys_page": _List("the survey list", lambda _: paths.surveys(), "ps_survey_id"),
    "_quotas_page": _List(
        "the quota list", lambda kw: paths.quotas(kw["survey_id"]), "buyer_quota_id"
    ),
    "get_attributes_page": _List("the attribute catalogue", lambda _: paths.attributes(), None),
    "get_transactions_page": _List(
        "the transactions",
        lambda kw: paths.transactions(kw["survey_id"]),
        "Transaction ID",
        recent_only=True,
    ),
}
