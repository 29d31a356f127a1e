"""The buyer's transaction status call of `/buyers/v2` (public facts; spec 4.11 by name):

`POST /surveys/{id}/transactions/{transaction_id}/status?st=21&quota_id=a,b` records the final
status of a respondent session and answers 200 with `[]`. It is allowed while the respondent
is in the buyer's survey (16) or dropped (19; a session past the LOI threshold is still 16);
the status set this way wins over a later return link. `st` is one of 17, 18, 20, 21, 30; with
QLC on, a complete names its quotas in `quota_id` (buyer_quota_id values, or
buyer_quota_supplier_id values with `sqlc=true`).

Refusals of the call itself are 400 with its own body `{"ps_error_code", "ps_error_message"}`:
1001 incorrect status code, 1002 insufficient parameters, 1003 the transaction already has a
final status, 1004 transaction not found, 1005 invalid or missing QLC codes. The survey is
checked like everywhere else first (404 1006, 403 1020 with `ps_api_response_*`).
"""

from __future__ import annotations

from flask import Blueprint, request

from surveyctl.sandbox import returns
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.routes.surveys import owned_survey
from surveyctl.sandbox.store import Store, StoredSurvey
from surveyctl.sandbox.surveys import normalised_qlc

blueprint = Blueprint("transaction_status", __name__, url_prefix="/buyers/v2")

INCORRECT_STATUS, MISSING_PARAMETER, ALREADY_FINAL, NO_TRANSACTION, BAD_QLC = range(1001, 1006)
DROPPED = 19
OPEN_STATUSES = (returns.IN_BUYER_SURVEY, DROPPED)
ERROR_SCHEMA = "transaction-status.error.json"


class StatusRefused(Exception):
    """A transaction status call refused with the call's own error body."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@blueprint.errorhandler(StatusRefused)
def _refused(refused: StatusRefused):
    body = {"ps_error_code": refused.code, "ps_error_message": refused.message}
    return reply(body, 400, ERROR_SCHEMA)


@blueprint.post("/surveys/<int:survey_id>/transactions/<path:transaction_id>/status")
def set_transaction_status(survey_id: int, transaction_id: str):
    store = get_store()
    survey = owned_survey(store, survey_id)
    status = _status()
    record = store.transaction(transaction_id)
    if record is None or record["Survey ID"] != survey_id:
        raise StatusRefused(NO_TRANSACTION, f"transaction {transaction_id!r} not found")
    if record["Respondent Status Code"] not in OPEN_STATUSES:
        raise StatusRefused(
            ALREADY_FINAL,
            f"transaction {transaction_id!r} already has the final status "
            f"{record['Respondent Status Code']}",
        )
    quotas = _quotas(store, survey, transaction_id) if status == returns.COMPLETE else []
    try:
        returns.finish(
            store,
            transaction_id,
            status,
            quotas,
            open_statuses=OPEN_STATUSES,
            note=returns.API_STATUS_NOTE,
        )
    except returns.ReturnRefused as refused:  # ended meanwhile, by a return link
        raise StatusRefused(ALREADY_FINAL, refused.message) from None
    return reply([], 200, "transaction-status.response.json")


def _status() -> int:
    raw = request.args.get("st")
    if raw is None or raw.strip() == "":
        raise StatusRefused(MISSING_PARAMETER, "insufficient parameters: st is required")
    text = raw.strip()
    if not (text.isascii() and text.isdigit() and int(text) in returns.RETURN_STATUSES):
        allowed = ", ".join(str(s) for s in returns.RETURN_STATUSES)
        raise StatusRefused(INCORRECT_STATUS, f"incorrect status code {raw!r}: use {allowed}")
    return int(text)


def _quotas(store: Store, survey: StoredSurvey, transaction_id: str) -> list[str]:
    """The quotas a complete counts in: those named in quota_id (QLC), else the screening's."""
    named = returns.quota_names(request.args.get("quota_id", ""))  # decoded, as a return link
    qlc = normalised_qlc(survey.body.get("qlc"))["enable"]
    if qlc and not named:
        raise StatusRefused(BAD_QLC, "missing QLC codes: quota_id must name the quotas")
    if not named:
        return returns.session_quotas(store, survey, transaction_id)
    try:
        chosen = returns.quotas_named(survey, named, request.args.get("sqlc", "") == "true")
    except returns.ReturnRefused as refused:
        raise StatusRefused(BAD_QLC, f"invalid QLC codes: {refused.message}") from None
    return chosen if qlc else returns.session_quotas(store, survey, transaction_id)
