"""Sandbox-only routes under `/sandbox`: NOT part of the marketplace API.

They show what the real service keeps to itself, so that tests and users can watch it over
HTTP: `GET /sandbox/surveys/{id}/quotas` lists each quota's current_target, completes and
whether it is open. They take the buyer's access-token like the API, and show only the
buyer's own surveys (404 1006, 403 1020 otherwise).
"""

from __future__ import annotations

from flask import Blueprint

from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.routes.surveys import owned_survey

blueprint = Blueprint("sandbox_internals", __name__, url_prefix="/sandbox")


@blueprint.get("/surveys/<int:survey_id>/quotas")
def quota_internals(survey_id: int):
    survey = owned_survey(get_store(), survey_id)
    answer = [
        {
            "buyer_quota_id": q.buyer_quota_id,
            "ps_quota_id": q.ps_quota_id,
            "required_count": q.required_count,
            "current_target": q.current_target,
            "completes": q.completes,
            "open": q.open,
        }
        for q in survey.quotas
    ]
    return reply(answer, 200, "sandbox-quotas.response.json")
