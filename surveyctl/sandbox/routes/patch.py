"""Partial updates of `/buyers/v2` with a JSON Patch list (public facts; spec 4.11 by name).

- `PATCH /surveys/{id}`: the patch applies to the survey as GET answers it; only fields of the
  update body (2.2) may change, and the result goes through every rule of a PUT (4.2). 200
  with the survey.
- `PATCH /surveys/{id}/quotas/{buyer_quota_id}`: the patch applies to the quota as the survey
  shows it plus its `current_target`; the identity (buyer_quota_id, ps_quota_id) cannot
  change, and current_target stays at or below required_count (spec 8). 200 with the quota.

A body that is not a patch list is a 400 (1004); a patch that cannot be applied, or that
touches a field the buyer cannot set, is a 409 (1028): the patch conflicts with the resource
as it is (RFC 5789 2.2).
"""

from __future__ import annotations

from dataclasses import replace

from flask import Blueprint

from surveyctl.sandbox import contract, lifecycle, patching
from surveyctl.sandbox.bodies import request_body
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import INVALID_BODY, SURVEY_CLOSED, bad_request, not_found
from surveyctl.sandbox.routes.surveys import SURVEY, overwrite, owned_survey, rendered
from surveyctl.sandbox.store import current_target
from surveyctl.sandbox.surveys import render_quota
from surveyctl.sandbox.targeting import check_criteria

blueprint = Blueprint("patches", __name__, url_prefix="/buyers/v2")

PATCH = "json-patch.request.json"
UPDATE_FIELDS = contract.fields("survey_body")
QUOTA_FIELDS = contract.fields("quota_request")
QUOTA_SETTABLE = (*QUOTA_FIELDS, "current_target")
QUOTA_IDENTITY = ("buyer_quota_id", "ps_quota_id")


@blueprint.patch("/surveys/<int:survey_id>")
def patch_survey(survey_id: int):
    operations = request_body(PATCH)
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        current = rendered(store, survey, conn)
        patched = patching.apply(current, operations)
        changed = patching.changed_fields(current, patched)
        patching.refuse_fixed(changed, UPDATE_FIELDS, "survey")
        body = contract.check_request(
            "survey-update.request.json", _fields(patched, UPDATE_FIELDS, changed)
        )
        answer = overwrite(store, conn, survey, body)
    return reply(answer, 200, SURVEY)


@blueprint.patch("/surveys/<int:survey_id>/quotas/<quota:buyer_quota_id>")
def patch_quota(survey_id: int, buyer_quota_id: str):
    operations = request_body(PATCH)
    store = get_store()
    with store.write() as conn:
        survey = owned_survey(store, survey_id, conn)
        quota = next((q for q in survey.quotas if q.buyer_quota_id == buyer_quota_id), None)
        if quota is None:
            raise not_found(f"quota {buyer_quota_id!r} of survey {survey_id}")
        if survey.status == lifecycle.CLOSED:
            raise bad_request(SURVEY_CLOSED, f"survey {survey_id} is closed and cannot change")
        current = {**render_quota(quota), "current_target": quota.current_target}
        patched = patching.apply(current, operations)
        changed = patching.changed_fields(current, patched)
        patching.refuse_fixed(changed, set(QUOTA_SETTABLE) - set(QUOTA_IDENTITY), "quota")
        body = {**_fields(patched, QUOTA_FIELDS, changed), "buyer_quota_id": buyer_quota_id}
        body.pop("ps_quota_id", None)
        body = contract.check_request("quota-create.request.json", body)
        target = _target(patched, changed, body["required_count"], survey.body)
        check_criteria(survey.body["survey_localization"], body["criteria"])
        store.set_quota(conn, survey_id, buyer_quota_id, body, target)
        store.auto_pause(conn, survey_id)
        updated = replace(quota, required_count=body["required_count"], body=body)
        answer = {**render_quota(updated), "current_target": target}
    return reply(answer, 200, "quota.response.json")


def _target(patched: dict, changed: set[str], required: int, survey_body: dict) -> int:
    """current_target as the patch sets it, else as a PUT of required_count would."""
    if "current_target" not in changed:
        return current_target(required, survey_body["completes_required"])
    target = patched.get("current_target")
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= required:
        raise bad_request(
            INVALID_BODY,
            f"current_target must be an integer from 0 to required_count ({required})",
        )
    return target


def _fields(patched: dict, names: tuple[str, ...], changed: set[str]) -> dict:
    """The named fields of a patched document exactly as the patch left them, nulls and nested
    fields included, so that the schema of the matching PUT judges them (`null` where a PUT
    refuses it, a stray `quotas[0].foo` in --strict). What is left out is what GET shows
    besides those fields (ps_survey_status, current_target...), which `refuse_fixed` has
    already seen unchanged or the route reads itself, and a null the patch left as it was:
    GET's way of showing a field unset, which a PUT leaves out."""
    return {
        name: patched[name]
        for name in names
        if name in patched and (patched[name] is not None or name in changed)
    }
