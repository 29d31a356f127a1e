"""Adjustment routes of `/buyers/v2`: POST /adjustments (4.10) and its per-survey form."""

from __future__ import annotations

from flask import Blueprint

from surveyctl.sandbox.accounts import current_buyer
from surveyctl.sandbox.adjustments import adjust
from surveyctl.sandbox.bodies import request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.routes.surveys import owned_survey

blueprint = Blueprint("adjustments", __name__, url_prefix="/buyers/v2")

REQUEST, RESPONSE = "adjustment.request.json", "adjustment.response.json"


@blueprint.post("/adjustments")
def adjust_transactions():
    ids = [item["transaction_id"] for item in request_body(REQUEST)]
    store = get_store()
    with store.write() as conn:
        answer = adjust(store, conn, current_buyer(), ids)
    return reply(answer, 202, RESPONSE)


@blueprint.post("/adjustments/surveys/<int:survey_id>")
def adjust_survey_transactions(survey_id: int):
    ids = [item["transaction_id"] for item in request_body(REQUEST)]
    store = get_store()
    with store.write() as conn:
        owned_survey(store, survey_id, conn)
        answer = adjust(store, conn, current_buyer(), ids, survey_id)
    return reply(answer, 202, RESPONSE)
