"""Survey routes of `/buyers/v2`: create (4.1), overwrite (4.2), get, list, delete, status.

The list takes the documented filters: `status` (11, 22, 33 or 44, or several of them
comma-separated as the transactions list takes them; live by default),
`fromDate`/`toDate` (YYYYMMDD, Pacific time, on the creation date, both ends included),
`targeting` (1 default; 0 leaves out qualifications and quotas), and `page`/`limit` (from 1,
default 100, at most 1000, `total_pages` header as the other lists).
"""

from __future__ import annotations

import math
import sqlite3

from flask import Blueprint, request

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.accounts import current_buyer
from surveyctl.sandbox.bodies import request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import (
    RECONTACT_GROUPED,
    STATUS_MOVE,
    SURVEY_CLOSED,
    UNKNOWN_GROUP,
    bad_request,
    forbidden,
    survey_forbidden,
    survey_not_found,
)
from surveyctl.sandbox.query import choice, code_list, pacific_day, positive_int
from surveyctl.sandbox.store import Store, StoredSurvey
from surveyctl.sandbox.surveys import (
    RECONTACT,
    check_features,
    group_refs,
    render,
    status_of,
    stored_body,
    stored_quotas,
)
from surveyctl.sandbox.targeting import check_targeting

blueprint = Blueprint("surveys", __name__, url_prefix="/buyers/v2")

SURVEY = "survey.response.json"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def owned_survey(store: Store, survey_id: int, conn: sqlite3.Connection | None = None):
    """The survey if the calling buyer owns it; 404 (1006) when absent, 403 (1020) when
    another buyer's, with the documented messages."""
    survey = store.survey(survey_id, conn)
    if survey is None:
        raise survey_not_found()
    if survey.buyer_id != current_buyer():
        raise survey_forbidden()
    return survey


def rendered(store: Store, survey: StoredSurvey, conn: sqlite3.Connection | None = None) -> dict:
    groups = [store.group(ref, conn) for ref in survey.groups]
    return render(survey, [g for g in groups if g], request.host_url)


def _check_groups(store: Store, conn: sqlite3.Connection, body: dict) -> list[str]:
    refs = group_refs(body)
    if refs and body.get("incl_excl") == RECONTACT:
        raise bad_request(RECONTACT_GROUPED, "a recontact survey (incl_excl 1) cannot be grouped")
    for ref in refs:
        group = store.group(ref, conn)
        if group is None:
            raise bad_request(UNKNOWN_GROUP, f"exclusion group {ref!r} does not exist")
        if group.buyer_id != current_buyer():
            raise forbidden(f"exclusion group {ref!r}")
    return refs


@blueprint.post("/surveys")
def create_survey():
    body = request_body("survey-create.request.json")
    check_features(body, None)
    check_targeting(body)
    store = get_store()
    with store.write() as conn:
        refs = _check_groups(store, conn, body)
        survey_id = store.insert_survey(
            conn, current_buyer(), stored_body(body), stored_quotas(body)
        )
        store.set_memberships(conn, survey_id, refs)
        answer = rendered(store, store.survey(survey_id, conn), conn)
    return reply(answer, 201, SURVEY)


@blueprint.get("/surveys")
def list_surveys():
    statuses = code_list("status", lifecycle.STATUS_NAMES, default=lifecycle.LIVE)
    since, until = pacific_day("fromDate"), pacific_day("toDate", end=True)
    targeting = choice("targeting", (0, 1), default=1)
    page = positive_int("page", 1)
    limit = positive_int("limit", DEFAULT_LIMIT, MAX_LIMIT)
    store = get_store()
    with store.read() as conn:
        surveys, total = store.surveys_page(
            conn, current_buyer(), statuses, since, until, page, limit
        )
        answer = [rendered(store, survey, conn) for survey in surveys]
    if not targeting:
        for item in answer:
            del item["qualifications"], item["quotas"]
    pages = {"total_pages": str(max(1, math.ceil(total / limit)))}
    return reply(answer, 200, "surveys-list.response.json", pages)


@blueprint.get("/surveys/<int:survey_id>")
def get_survey(survey_id: int):
    store = get_store()
    with store.read() as conn:
        answer = rendered(store, owned_survey(store, survey_id, conn), conn)
    return reply(answer, 200, SURVEY)


@blueprint.put("/surveys/<int:survey_id>")
def update_survey(survey_id: int):
    body = request_body("survey-update.request.json")
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        answer = overwrite(store, conn, survey, body)
    answer["mcqb"] = []
    return reply(answer, 200, "survey-update.response.json")


def overwrite(store: Store, conn: sqlite3.Connection, survey: StoredSurvey, body: dict) -> dict:
    """Replaces the survey with `body` (a valid update body) under the rules of a PUT, and
    returns the survey as answered afterwards."""
    if survey.status == lifecycle.CLOSED:
        raise bad_request(SURVEY_CLOSED, f"survey {survey.survey_id} is closed and cannot change")
    check_features(body, survey)
    check_targeting(body)
    refs = _check_groups(store, conn, body)
    store.replace_survey(conn, survey, stored_body(body), stored_quotas(body))
    store.set_memberships(conn, survey.survey_id, refs)
    store.auto_pause(conn, survey.survey_id)
    return rendered(store, store.survey(survey.survey_id, conn), conn)


@blueprint.get("/surveys/<int:survey_id>/status")
def get_status(survey_id: int):
    """The survey's status and the few fields a monitor polls, without its targeting."""
    survey = owned_survey(get_store(), survey_id)
    return reply(status_of(survey), 200, "survey-status.response.json")


@blueprint.put("/surveys/<int:survey_id>/status")
def set_status(survey_id: int):
    wanted = request_body("survey-status.request.json")["ps_survey_status"]
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        if not lifecycle.move_allowed(survey.status, wanted):
            names = lifecycle.STATUS_NAMES
            raise bad_request(
                STATUS_MOVE,
                f"survey {survey_id} cannot move from {names[survey.status]} {survey.status} "
                f"to {names[wanted]} {wanted}",
            )
        store.set_status(conn, survey_id, wanted)
        store.auto_pause(conn, survey_id)
        answer = rendered(store, store.survey(survey_id, conn), conn)
    return reply(answer, 200, SURVEY)


@blueprint.delete("/surveys/<int:survey_id>")
def delete_survey(survey_id: int):
    store = get_store()
    with store.write() as conn:
        owned_survey(store, survey_id, conn)
        store.delete_survey(conn, survey_id)
    return reply(None, 204)
