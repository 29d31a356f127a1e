"""Quota routes of `/buyers/v2`: update one quota (4.3), quota performance (public facts), add
and delete a quota (spec 4.11 by name; shapes: sandbox decisions).

- `POST /surveys/{id}/quotas` takes one Quota as in a survey body (2.4) and answers 201 with it,
  its new ps_quota_id and current_target; a buyer_quota_id the survey has already is a 400.
- `DELETE /surveys/{id}/quotas/{buyer_quota_id}` answers 204; a quota that QBP prices, or the
  last quota of a survey with QLC on, cannot be deleted (400).
- `GET /surveys/{id}/quotas` lists the survey's quotas as the survey shows them plus
  current_target, paged like the other lists (`page`, `limit`, `total_pages` header); other
  query parameters (a public monitor sends `UI=1&QBS=1`) are ignored. `GET
  /surveys/{id}/quotas/{buyer_quota_id}` answers one (public facts name both calls).
"""

from __future__ import annotations

import math

from flask import Blueprint

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.bodies import request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import (
    DUPLICATE_QUOTA,
    QBP_UNKNOWN_QUOTA,
    QLC_NEEDS_QUOTAS,
    SURVEY_CLOSED,
    bad_request,
    not_found,
)
from surveyctl.sandbox.query import positive_int
from surveyctl.sandbox.routes.surveys import DEFAULT_LIMIT, MAX_LIMIT, owned_survey
from surveyctl.sandbox.store import StoredQuota, StoredSurvey, current_target
from surveyctl.sandbox.surveys import (
    check_quota_id,
    normalised_qbp,
    normalised_qlc,
    render_quota,
)
from surveyctl.sandbox.targeting import check_criteria

blueprint = Blueprint("quotas", __name__, url_prefix="/buyers/v2")


@blueprint.put("/surveys/<int:survey_id>/quotas/<quota:buyer_quota_id>")
def update_quota(survey_id: int, buyer_quota_id: str):
    """Sets required_count and criteria; query parameters (the spec's QBS) are not used."""
    body = request_body("quota-update.request.json")
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        quota = _quota(survey, buyer_quota_id)
        _refuse_closed(survey)
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


@blueprint.get("/surveys/<int:survey_id>/quotas")
def list_quotas(survey_id: int):
    page = positive_int("page", 1)
    limit = positive_int("limit", DEFAULT_LIMIT, MAX_LIMIT)
    quotas = owned_survey(get_store(), survey_id).quotas
    shown = [_shown(q) for q in quotas[(page - 1) * limit : page * limit]]
    pages = {"total_pages": str(max(1, math.ceil(len(quotas) / limit)))}
    return reply(shown, 200, "quotas-list.response.json", pages)


@blueprint.get("/surveys/<int:survey_id>/quotas/<quota:buyer_quota_id>")
def get_quota(survey_id: int, buyer_quota_id: str):
    survey = owned_survey(get_store(), survey_id)
    return reply(_shown(_quota(survey, buyer_quota_id)), 200, "quota.response.json")


def _shown(quota: StoredQuota) -> dict:
    return {**render_quota(quota), "current_target": quota.current_target}


@blueprint.get("/surveys/<int:survey_id>/quotas/performance")
def quota_performance(survey_id: int):
    survey = owned_survey(get_store(), survey_id)
    return reply(performance_items(survey), 200, "quota-performance.response.json")


def performance_items(survey: StoredSurvey) -> list[dict]:
    """Completes per quota: {ps_quota_id, buyer_quota_id, completes_goal, completes_fielded}."""
    return [
        {
            "ps_quota_id": q.ps_quota_id,
            "buyer_quota_id": q.buyer_quota_id,
            "completes_goal": q.required_count,
            "completes_fielded": q.completes,
        }
        for q in survey.quotas
    ]


@blueprint.post("/surveys/<int:survey_id>/quotas")
def add_quota(survey_id: int):
    body = request_body("quota-create.request.json")
    body.pop("ps_quota_id", None)  # the service assigns it
    check_quota_id(body["buyer_quota_id"])
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        _refuse_closed(survey)
        if any(q.buyer_quota_id == body["buyer_quota_id"] for q in survey.quotas):
            raise bad_request(
                DUPLICATE_QUOTA, f"buyer_quota_id {body['buyer_quota_id']!r} is used twice"
            )
        check_criteria(survey.body["survey_localization"], body["criteria"])
        completes_required = survey.body["completes_required"]
        ps_quota_id = store.add_quota(conn, survey_id, body, completes_required)
        store.auto_pause(conn, survey_id)
    target = current_target(body["required_count"], completes_required)
    added = StoredQuota(
        body["buyer_quota_id"], ps_quota_id, body["required_count"], target, 0, body
    )
    return reply({**render_quota(added), "current_target": target}, 201, "quota.response.json")


@blueprint.delete("/surveys/<int:survey_id>/quotas/<quota:buyer_quota_id>")
def delete_quota(survey_id: int, buyer_quota_id: str):
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        _quota(survey, buyer_quota_id)
        _refuse_closed(survey)
        if buyer_quota_id in (normalised_qbp(survey.body.get("qbp")).get("quota_ids") or []):
            raise bad_request(
                QBP_UNKNOWN_QUOTA,
                f"quota {buyer_quota_id!r} is priced by QBP (qbp.quota_ids): remove it there first",
            )
        if normalised_qlc(survey.body.get("qlc"))["enable"] and len(survey.quotas) == 1:
            raise bad_request(
                QLC_NEEDS_QUOTAS,
                "QLC needs at least one buyer quota: turn QLC off before deleting the last quota",
            )
        store.delete_quota(conn, survey_id, buyer_quota_id)
        store.auto_pause(conn, survey_id)
    return reply(None, 204)


def _quota(survey: StoredSurvey, buyer_quota_id: str) -> StoredQuota:
    quota = next((q for q in survey.quotas if q.buyer_quota_id == buyer_quota_id), None)
    if quota is None:
        raise not_found(f"quota {buyer_quota_id!r} of survey {survey.survey_id}")
    return quota


def _refuse_closed(survey: StoredSurvey) -> None:
    if survey.status == lifecycle.CLOSED:
        raise bad_request(SURVEY_CLOSED, f"survey {survey.survey_id} is closed and cannot change")
