"""The calls of a survey's transactions: a respondent's final status (v2), the list and one
record (v3), the open-ended answer check (v3) and the reconciliation adjustments (v2).

These are the calls that decide what is paid; the money rules around them (what is asked and
refused before a write) are the CLI's and `surveyctl.ops`'s, not the client's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from surveyctl.api import paths
from surveyctl.api.paging import Paging, page_count
from surveyctl.api.reading import json_any, single_record
from surveyctl.errors import ApiError

# The documented code of a survey of another buyer (public facts): a 403 that says so.
ANOTHER_BUYERS_SURVEY = 1020


class ReadForbidden(ApiError):
    """A transaction read answered 403 without saying the survey is another buyer's: on these
    two calls (spec 4.4, 4.5) the service refuses with 403 also an access-token it does not
    accept (spec 5.2 and 7 list 403 and not 401 for them), so the sentence says both."""

    def __init__(self, refusal: ApiError, key: str = "the key the environment's api_key_env names"):
        super().__init__(refusal.method, refusal.url, refusal.status, refusal.code, refusal.said)
        self.refusal = refusal
        self.message += (
            "; the service answers 403 on this call for a survey of another buyer and for an "
            f"access-token it does not accept: check the survey id and {key}"
        )

    def naming(self, environment: str, variable: str) -> ReadForbidden:
        """The same refusal, naming the variable the key came from (a name, never its value),
        where the command knows it."""
        return ReadForbidden(
            self.refusal, f"${variable}, the api_key_env of environment {environment!r}"
        )


def _forbidden_read(exc: ApiError) -> ApiError:
    """`exc`, or ReadForbidden when it is such a 403."""
    if exc.status == 403 and exc.code != ANOTHER_BUYERS_SURVEY:
        return ReadForbidden(exc)
    return exc


class TransactionCalls(Paging):
    """The transaction, text check and adjustment calls of the client."""

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

    def get_transactions_page(
        self,
        survey_id: int,
        *,
        page: int = 1,
        limit: int | None = None,
        status: list[int] | None = None,
        supplier_ids: list[int] | None = None,
    ) -> tuple[list[dict], int]:
        """One page of a survey's transactions and the number of pages (`page_count`)."""
        params: dict[str, Any] = {"page": page}
        if limit is not None:
            params["limit"] = limit
        if status:
            params["status"] = ",".join(str(s) for s in status)
        if supplier_ids:
            params["supplier_ids"] = ",".join(str(s) for s in supplier_ids)
        path = paths.transactions(survey_id)
        try:
            response = self.request("GET", path, params=params)
        except ApiError as exc:
            raise _forbidden_read(exc) from exc
        items = self._page_items("GET", path, response)
        return items, page_count(response, page, items, limit, f"GET {self.shown_url(path)}")

    def get_transaction(self, survey_id: int, transaction_id: str) -> dict:
        """One transaction record (the service may answer an array of one: it is unwrapped).
        An array of none, or any other shape, is one sentence: a caller reads its fields."""
        path = paths.transaction(survey_id, transaction_id)
        try:
            response = self.request("GET", path)
        except ApiError as exc:
            raise _forbidden_read(exc) from exc
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

    def adjust(self, transaction_ids: list[str], survey_id: int | None = None) -> dict:
        path = paths.adjustments() if survey_id is None else paths.survey_adjustments(survey_id)
        body = [{"transaction_id": t} for t in transaction_ids]
        # An array of one object is read as that object, as the service answers one
        # transaction (public facts): the summary and the adjustment's id are in it.
        return single_record(self._json("POST", path, body=body, expected=(200, 202)))
