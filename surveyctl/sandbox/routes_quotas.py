"""Quota routes of `/buyers/v2`: update one quota (4.3) and quota performance (public facts)."""

from __future__ import annotations

from flask import Blueprint

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.app import get_store, request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.errors import SURVEY_CLOSED, bad_request, not_found
from surveyctl.sandbox.routes_surveys import owned_survey
from surveyctl.sandbox.targeting import check_criteria

blueprint = Blueprint("quotas", __name__, url_prefix="/buyers/v2")


@blueprint.put("/surveys/<int:survey_id>/quotas/<path:buyer_quota_id>")
def update_quota(survey_id: int, buyer_quota_id: str):
    """Sets required_count and criteria; query parameters (the spec's QBS) are not used."""
    body = request_body("quota-update.request.json")
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        quota = next((q for q in survey.quotas if q.buyer_quota_id == buyer_quota_id), None)
        if quota is None:
            raise not_found(f"quota {buyer_quota_id!r} of survey {survey_id}")
        if survey.status == lifecycle.CLOSED:
            raise bad_request(SURVEY_CLOSED, f"survey {survey_id} is closed and cannot change")
        check_criteria(survey.body["survey_localization"], body["criteria"])
        store.update_quota(conn, survey, quota, body)
        store.auto_pause(conn, survey_id)
    answer = {
        "buyer_quota_id": quota.buyer_quota_id,
        "ps_quota_id": quota.ps_quota_id,
        "required_count": body["required_count"],
        "criteria": body["criteria"],
    }
    return reply(answer, 200, "quota-update.response.json")


@blueprint.get("/surveys/<int:survey_id>/quotas/performance")
def quota_performance(survey_id: int):
    survey = owned_survey(get_store(), survey_id)
    answer = [
        {
            "ps_quota_id": q.ps_quota_id,
            "buyer_quota_id": q.buyer_quota_id,
            "completes_goal": q.required_count,
            "completes_fielded": q.completes,
        }
        for q in survey.quotas
    ]
    return reply(answer, 200, "quota-performance.response.json")
