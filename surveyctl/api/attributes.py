"""The call of the attribute catalogue (v3): the qualifications a survey of one locale can
target, with their answer codes, one page at a time.

`surveyctl.catalog` reads every page and caches them per environment and locale; this is only
the call and the reading of its codes.
"""

from __future__ import annotations

from typing import Any

from surveyctl.api import paths
from surveyctl.api.paging import Paging, page_count
from surveyctl.api.reading import ATTRIBUTE_CODES, with_codes


class AttributeCalls(Paging):
    """The attribute catalogue call of the client."""

    def get_attributes_page(
        self, localization: str, classes: list[int] | None = None, page: int = 1
    ) -> tuple[list[dict], int]:
        """One page of the catalogue and the number of pages (`page_count`)."""
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
        pages = page_count(response, page, items, None, f"GET {self.shown_url(path)}")
        return [with_codes(item, ATTRIBUTE_CODES) for item in items], pages
