"""Every survey of the account, read fast: all four statuses, every page, without targeting.

A read of the API alone, so that the reconciler and the operations share it without one
depending on the other: the identity check reads the whole survey list before a create (a
survey not in state may be the manifest's), list-mode reads read it to see which managed
surveys changed (`reconcile/kinds/survey_listing.py`), and the fieldwork view of many surveys
takes their status and goal from it (`ops/fieldwork.py`). The service answers one status per
call and a hundred surveys per page, so 10,000 surveys are a hundred requests: the first page
of each status is read at once, the pages it announces side by side, and each page is checked
against the one before it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from surveyctl.api.reading import check_next_page, check_within_most
from surveyctl.api.surveys import SURVEYS_PAGE_SIZE
from surveyctl.statuses import SURVEY_STATUSES


class Lister(Protocol):
    """What the survey rule needs of the marketplace client: the list, page by page."""

    def list_surveys(
        self, status: list[int] | None = None, *, targeting: bool = True
    ) -> list[dict]: ...


# The most pages of one status read side by side as the list's total_pages announces them
# (100,000 surveys); pages past them are read one by one while full.
MAX_ANNOUNCED_PAGES = 1000


def account_surveys(client: Lister, parallelism: int = 10) -> tuple[list[dict], int]:
    """Every survey of the account (all statuses, all pages, without targeting) and the
    number of pages read. The first page of each status is read at once (four in parallel);
    the pages it announces (`total_pages`) are then read `parallelism` at a time rather than
    one after the other (10,000 surveys are a hundred pages). Where a status's last page is
    full, the pages after it are read on until one is not (a list without `total_pages`)."""
    statuses = sorted(SURVEY_STATUSES.values())

    def page(key: tuple[int, int]) -> list[dict]:
        status, number = key
        items, _total = client.get_surveys_page(page=number, status=status, targeting=False)
        return items

    def totals(status: int) -> tuple[list[dict], int]:
        return client.get_surveys_page(page=1, status=status, targeting=False)

    with ThreadPoolExecutor(max_workers=len(statuses)) as pool:
        firsts = dict(zip(statuses, pool.map(totals, statuses), strict=True))
    # The announced pages are read side by side up to a bound (the header is the service's
    # word: 999999999 pages would be a list of a billion reads); full pages past it are read
    # on one by one, below, as a list without the header is.
    rest = [
        (s, n)
        for s, (items, total) in firsts.items()
        if items
        for n in range(2, min(total, MAX_ANNOUNCED_PAGES) + 1)
    ]
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        pages = dict(zip(rest, pool.map(page, rest), strict=True))
    pages.update({(status, 1): items for status, (items, _) in firsts.items()})
    for status in statuses:
        number = max(n for s, n in pages if s == status)
        for read in range(2, number + 1):  # the announced pages, read side by side above
            check_next_page(
                "the survey list", read, pages[(status, read)], pages[(status, read - 1)]
            )
        while len(pages[(status, number)]) >= SURVEYS_PAGE_SIZE:
            number += 1
            check_within_most("the survey list", number, "full still")  # new surveys for ever
            pages[(status, number)] = page((status, number))
            check_next_page(
                "the survey list", number, pages[(status, number)], pages[(status, number - 1)]
            )
    found = [item for items in pages.values() for item in items if isinstance(item, dict)]
    return found, len(pages)
