"""The account's survey list read once per plan.

Two parts of a plan read the whole list: the list reads (kinds/survey_listing.py), to spare
the GET of each unchanged survey, and the identity check (identity.py), to look for the survey
of each create before it is made. With a create in the plan both ran, and the list was read
twice (28 requests instead of 14 for 1,000 surveys), each request counting against the
service's rate limit. `ListedOnce` wraps the plan's marketplace so that each page of the list
(by its page, status and filters) is asked for once: a second reader, even one asking while
the first request is still in flight, gets the same answer, or the same error. It lives as
long as one plan: apply writes, and reads after its writes, through a marketplace of its own.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from surveyctl.reconcile.marketplace import Marketplace


class ListedOnce:
    """A marketplace whose survey-list pages (`get_surveys_page`) are each read once."""

    def __init__(self, inner: Marketplace):
        self._inner = inner
        self._pages: dict[tuple, Future] = {}
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_surveys_page(self, **query: Any) -> tuple[list[dict], int]:
        key = tuple(sorted(query.items()))
        with self._lock:
            answer = self._pages.get(key)
            first = answer is None
            if first:
                answer = self._pages[key] = Future()
        if first:
            try:
                answer.set_result(self._inner.get_surveys_page(**query))
            except BaseException as exc:  # the waiting readers get it too, then it is raised
                answer.set_exception(exc)
        return answer.result()


def listed_once(inner: Marketplace) -> Marketplace:
    """`inner`, each page of its survey list read once (see ListedOnce)."""
    return ListedOnce(inner)  # type: ignore[return-value]
