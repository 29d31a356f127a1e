"""The calls of surveys and their quotas (spec 4, v2): create, read, update, move, delete.

Every survey answer passes through `survey_codes`: its id and status as integers, also when
the service writes them as text (public facts: numbers may come as strings). The survey list
answers one status per call, so the whole list is one call per status, each read page by page
(surveyctl.api.paging). Quotas are read and written one by one here; the full-overwrite PUT of
a survey carries them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from surveyctl.api import paths
from surveyctl.api.paging import Paging
from surveyctl.api.reading import json_if_any, survey_codes, with_numbers
from surveyctl.api.transport import DELETED

# Survey status codes (public facts): the survey list answers one status per call.
SURVEY_STATUSES = (11, 22, 33, 44)
SURVEYS_PAGE_SIZE = 100
QUOTA_COUNTS = ("completes_goal", "completes_fielded")


class SurveyCalls(Paging):
    """The survey and quota calls of the client."""

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
        """One page of the survey list and the number of pages (`page_count`)."""
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
        self.request("DELETE", paths.survey(survey_id), expected=DELETED)

    def get_survey_status(self, survey_id: int) -> dict:
        """The survey's status without its targeting (public facts name the call); the sandbox
        adds title, goal, offer_price, project_last_complete_date and mod_on (see
        docs/api-assumptions.md)."""
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
        self.request("DELETE", paths.quota(survey_id, buyer_quota_id), expected=DELETED)

    def list_quotas(self, survey_id: int, limit: int = SURVEYS_PAGE_SIZE) -> list[dict]:
        """Every quota of the survey with its title and criteria, all pages read."""
        quotas: list[dict] = []
        for items in self.iter_pages(self._quotas_page, survey_id=survey_id, limit=limit):
            quotas.extend(items)
        return quotas

    def _quotas_page(self, *, survey_id: int, page: int, limit: int) -> tuple[list[dict], int]:
        return self._list_page(paths.quotas(survey_id), {"page": page, "limit": limit})

    def get_quota(self, survey_id: int, buyer_quota_id: str) -> dict:
        """One quota with its title, criteria and current_target."""
        return self._object("GET", paths.quota(survey_id, buyer_quota_id))

    def quota_performance(self, survey_id: int) -> list[dict]:
        """Completes per quota; counts sent as text are read as numbers."""
        rows = self._json("GET", paths.quota_performance(survey_id))
        return [with_numbers(row, QUOTA_COUNTS) for row in rows] if isinstance(rows, list) else rows


def _statuses(status: int | Iterable[int]) -> tuple[int, ...]:
    return (status,) if isinstance(status, int) else tuple(dict.fromkeys(status))


def _yyyymmdd(value: date | str) -> str:
    return value.strftime("%Y%m%d") if isinstance(value, date) else value
