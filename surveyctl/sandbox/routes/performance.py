"""Survey performance of `/buyers/v2`: `GET /surveys/{id}/performance` (public facts).

The documentation gives the path and the errors (404 1006 "Survey not found", 403 1020 "You
don't have permission for this survey"); the body is the sandbox's: the goal and completes,
the sessions per outcome, the incidence rate of the public facts (completes / (completes +
buyer terminations + buyer drops + buyer over-quota), in percent) and the median LOI of the
completes, with the quota performance list.
"""

from __future__ import annotations

from flask import Blueprint

from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.routes.quotas import performance_items
from surveyctl.sandbox.routes.surveys import owned_survey

blueprint = Blueprint("performance", __name__, url_prefix="/buyers/v2")

IN_SURVEY, OVER_QUOTA, TERMINATE, DROP, QUALITY, COMPLETE, SECURITY = 16, 17, 18, 19, 20, 21, 30
ENTRANTS = (IN_SURVEY, OVER_QUOTA, TERMINATE, DROP, QUALITY, COMPLETE, SECURITY)


@blueprint.get("/surveys/<int:survey_id>/performance")
def survey_performance(survey_id: int):
    store = get_store()
    with store.read() as conn:
        survey = owned_survey(store, survey_id, conn)
        counts = store.status_counts(conn, survey_id)
        loi = store.median_complete_loi(conn, survey_id)
    goal = survey.body["completes_required"]
    answer = {
        "ps_survey_id": survey_id,
        "ps_survey_status": survey.status,
        "completes_goal": goal,
        "completes_fielded": survey.completes,
        "remaining": max(0, goal - survey.completes),
        "entrants": sum(counts.get(status, 0) for status in ENTRANTS),
        "completes": counts.get(COMPLETE, 0),
        "over_quota": counts.get(OVER_QUOTA, 0),
        "terminates": counts.get(TERMINATE, 0),
        "drops": counts.get(DROP, 0),
        "quality_terminations": counts.get(QUALITY, 0) + counts.get(SECURITY, 0),
        "in_survey": counts.get(IN_SURVEY, 0),
        "incidence_rate": incidence_rate(counts),
        "median_loi": loi,
        "quotas": performance_items(survey),
    }
    return reply(answer, 200, "survey-performance.response.json")


def incidence_rate(counts: dict[int, int]) -> float | None:
    """IR in percent with two decimals (public facts), or None before any counted outcome."""
    completes = counts.get(COMPLETE, 0)
    counted = completes + sum(counts.get(s, 0) for s in (TERMINATE, DROP, OVER_QUOTA))
    return round(100 * completes / counted, 2) if counted else None
