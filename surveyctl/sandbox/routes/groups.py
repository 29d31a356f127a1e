"""Exclusion group routes of `/buyers/v2` (4.8, 4.9; body 2.9).

POST creates (201), PUT overwrites name, period and members (200), GET reads (200), DELETE
removes the group (204). The ref is unique across all buyers; recontact surveys cannot join.
"""

from __future__ import annotations

import sqlite3

from flask import Blueprint

from surveyctl.sandbox.accounts import current_buyer
from surveyctl.sandbox.bodies import request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import (
    GROUP_EXISTS,
    INVALID_BODY,
    RECONTACT_GROUPED,
    bad_request,
    conflict,
    forbidden,
    not_found,
)
from surveyctl.sandbox.routes.surveys import owned_survey
from surveyctl.sandbox.store import Store, StoredGroup
from surveyctl.sandbox.surveys import RECONTACT

blueprint = Blueprint("groups", __name__, url_prefix="/buyers/v2")

REQUEST = "survey-group.request.json"
CREATE_REQUEST = "survey-group-create.request.json"  # the same with buyer_surveygroup_ref
RESPONSE = "survey-group.response.json"


def _render(group: StoredGroup) -> dict:
    return {
        "buyer_surveygroup_ref": group.ref,
        "name": group.name,
        "surveys_in_group": group.surveys,
        "exclusion_period": group.exclusion_period,
    }


def _check_members(store: Store, conn: sqlite3.Connection, survey_ids: list[int]) -> None:
    for survey_id in survey_ids:
        survey = owned_survey(store, survey_id, conn)
        if survey.body.get("incl_excl") == RECONTACT:
            raise bad_request(
                RECONTACT_GROUPED,
                f"survey {survey_id} is a recontact survey (incl_excl 1) and cannot be grouped",
            )


def _owned_group(store: Store, ref: str, conn: sqlite3.Connection | None = None) -> StoredGroup:
    group = store.group(ref, conn)
    if group is None:
        raise not_found(f"exclusion group {ref!r}")
    if group.buyer_id != current_buyer():
        raise forbidden(f"exclusion group {ref!r}")
    return group


@blueprint.post("/surveygroups")
def create_group():
    body = request_body(CREATE_REQUEST)
    ref = body["buyer_surveygroup_ref"]
    store = get_store()
    with store.write() as conn:
        if store.group(ref, conn) is not None:
            # Spec 4.8 and 7 list 400 and 404 for this call: a taken ref is a 400, not a 409.
            raise bad_request(GROUP_EXISTS, f"buyer_surveygroup_ref {ref!r} is already taken")
        _check_members(store, conn, body["surveys_in_group"])
        group = StoredGroup(
            ref, current_buyer(), body["name"], body["exclusion_period"], body["surveys_in_group"]
        )
        store.save_group(conn, group)
        answer = _render(store.group(ref, conn))
    return reply(answer, 201, RESPONSE)


@blueprint.put("/surveygroups/<path:ref>")
def update_group(ref: str):
    body = request_body(REQUEST)
    if body.get("buyer_surveygroup_ref", ref) != ref:
        raise conflict(
            INVALID_BODY, "buyer_surveygroup_ref of the body differs from the one of the path"
        )
    store = get_store()
    with store.write() as conn:
        group = _owned_group(store, ref, conn)
        _check_members(store, conn, body["surveys_in_group"])
        group.name, group.exclusion_period = body["name"], body["exclusion_period"]
        group.surveys = body["surveys_in_group"]
        store.save_group(conn, group)
        answer = _render(store.group(ref, conn))
    return reply(answer, 200, RESPONSE)


@blueprint.get("/surveygroups/<path:ref>")
def get_group(ref: str):
    return reply(_render(_owned_group(get_store(), ref)), 200, RESPONSE)


@blueprint.delete("/surveygroups/<path:ref>")
def delete_group(ref: str):
    store = get_store()
    with store.write() as conn:
        _owned_group(store, ref, conn)
        store.delete_group(conn, ref)
    return reply(None, 204)
