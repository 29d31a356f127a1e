"""Surveys: the rules a create or overwrite body must meet, and the survey response (2.5).

The store keeps the body exactly as sent (without its quotas, which live in their own rows);
the response is built from it with every field of spec 2.5 present, defaults filled in. A PUT
overwrites the body, so a field it leaves out goes back to its default.
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.converters import RESERVED_QUOTA_SEGMENTS
from surveyctl.sandbox.errors import (
    DUPLICATE_QUOTA,
    INVALID_BODY,
    QBP_NOT_DRAFT,
    QBP_UNKNOWN_QUOTA,
    QLC_FROZEN,
    QLC_NEEDS_MULTIPLE_QUOTAS,
    QLC_NEEDS_QUOTAS,
    QLC_OPTION_WITHOUT_QLC,
    bad_request,
)
from surveyctl.sandbox.store import StoredGroup, StoredQuota, StoredSurvey
from surveyctl.sandbox.store.surveys import epoch_ms

RECONTACT = 1  # incl_excl value of a recontact survey (spec 2.1)
TEST_SUPPLIER_ID = 1  # supplier of the test entry link (sandbox decision)
_QLC_OPTIONS = ("enable", "count_by_quota", "compensate_by_quota")
# The service's own words for 1014 (public facts), as for 1006, 1007 and 1020.
QLC_NEEDS_QUOTAS_MESSAGE = (
    "QLC can only be turned on if there are quotas. Please set QLC to false, or add quotas in "
    "order to launch this survey."
)
MAX_CLICKS = 2**63 - 1

# Fields of the update body (2.2) that the response of 2.5 does not list; the sandbox echoes
# them as stored (null when unset) so that a reader sees what the service keeps.
ECHOED_FIELDS = (
    "survey_pause_threshold",
    "schedule_pause",
    "feasibility_exclusions",
    "global_flexibility",
    "mc_unique_id",
    "template_id",
    "external_project_id",
)


def normalised_qlc(qlc: dict | None) -> dict:
    """The qlc object with every option present (spec 2.7 rule 4: always in the response)."""
    qlc = qlc or {}
    multiple = qlc.get("multiple_quotas") or {}
    return {
        "enable": bool(qlc.get("enable", False)),
        "multiple_quotas": {name: bool(multiple.get(name, False)) for name in _QLC_OPTIONS},
    }


def normalised_qbp(qbp: dict | None) -> dict:
    qbp = dict(qbp or {})
    qbp["enable"] = bool(qbp.get("enable", False))
    return qbp


def group_refs(body: dict) -> list[str]:
    """The exclusion groups a body asks the survey to belong to (single ref first)."""
    refs = [body["buyer_surveygroup_ref"]] if body.get("buyer_surveygroup_ref") else []
    return list(dict.fromkeys(refs + list(body.get("buyer_surveygroup_refs") or [])))


def check_quota_id(buyer_quota_id: str, where: str = "buyer_quota_id") -> None:
    """400 (1004) for a buyer_quota_id that its own path could never name.

    `.../quotas/performance` is the quota performance call (public facts), so a quota of that
    id could be created but never read, updated or deleted: refused when it is written, with
    the reason, rather than taken and lost (sandbox decision)."""
    if buyer_quota_id in RESERVED_QUOTA_SEGMENTS:
        raise bad_request(
            INVALID_BODY,
            f"{where} {buyer_quota_id!r} cannot name a quota: /surveys/{{id}}/quotas/"
            f"{buyer_quota_id} is the quota performance call, so the quota could never be "
            "read, updated or deleted; choose another buyer_quota_id",
        )


def check_features(body: dict, existing: StoredSurvey | None) -> None:
    """Quota identity, QLC (2.7) and QBP (2.6) rules of a create (`existing` None) or PUT."""
    quota_ids = [quota["buyer_quota_id"] for quota in body.get("quotas") or []]
    for n, quota_id in enumerate(quota_ids):
        check_quota_id(quota_id, f"quotas[{n}].buyer_quota_id")
    duplicates = sorted({q for q in quota_ids if quota_ids.count(q) > 1})
    if duplicates:
        raise bad_request(DUPLICATE_QUOTA, f"buyer_quota_id {duplicates[0]!r} is used twice")
    qlc = normalised_qlc(body.get("qlc"))
    options = qlc["multiple_quotas"]
    if qlc["enable"] and not quota_ids:
        raise bad_request(QLC_NEEDS_QUOTAS, QLC_NEEDS_QUOTAS_MESSAGE)
    if qlc["enable"] and not options["enable"]:
        raise bad_request(
            QLC_NEEDS_MULTIPLE_QUOTAS, "qlc.multiple_quotas.enable must be true when qlc is on"
        )
    if not qlc["enable"] and any(options.values()):
        on = next(name for name, value in options.items() if value)
        raise bad_request(
            QLC_OPTION_WITHOUT_QLC, f"qlc.multiple_quotas.{on} cannot be true while qlc is off"
        )
    if existing and existing.has_been_live and normalised_qlc(existing.body.get("qlc")) != qlc:
        raise bad_request(QLC_FROZEN, "QLC cannot be changed after the survey has been live")
    qbp = normalised_qbp(body.get("qbp"))
    if qbp.get("enable") and not quota_ids:
        raise bad_request(QBP_NOT_DRAFT, "QBP can be enabled with quotas only.")  # public facts
    unknown = [q for q in qbp.get("quota_ids") or [] if q not in quota_ids]
    if unknown:
        raise bad_request(
            QBP_UNKNOWN_QUOTA, f"qbp.quota_ids names {unknown[0]!r}, which is not a quota"
        )
    if (
        existing
        and existing.status != lifecycle.DRAFT
        and normalised_qbp(existing.body.get("qbp")) != qbp
    ):
        raise bad_request(QBP_NOT_DRAFT, "QBP changes are allowed in draft surveys only.")


def stored_body(body: dict) -> dict:
    """What the store keeps of a body: everything but the quotas."""
    return {key: value for key, value in body.items() if key != "quotas"}


def stored_quotas(body: dict) -> list[dict]:
    """The quotas as the store keeps them; a ps_quota_id sent by the client is not kept."""
    return [
        {key: value for key, value in quota.items() if key != "ps_quota_id"}
        for quota in body.get("quotas") or []
    ]


def estimated_clicks(completes_required: float, expected_ir: float) -> int:
    """ceil(completes_required x 100 / expected_ir), capped at 2^63 - 1: a tiny incidence
    rate would otherwise overflow to infinity."""
    clicks = completes_required * 100 / expected_ir
    return MAX_CLICKS if not math.isfinite(clicks) or clicks >= MAX_CLICKS else math.ceil(clicks)


def render_quota(quota: StoredQuota) -> dict:
    rendered = {
        "buyer_quota_id": quota.buyer_quota_id,
        "ps_quota_id": quota.ps_quota_id,
        "quota_title": quota.body.get("quota_title", ""),
        "required_count": quota.required_count,
        "criteria": quota.body.get("criteria", []),
    }
    for optional in ("buyer_quota_supplier_id", "group_key"):
        if optional in quota.body:
            rendered[optional] = quota.body[optional]
    return rendered


def entry_link(host_url: str, survey_id: int) -> str:
    """The test entry link: a startsurvey URL on the sandbox host (public facts)."""
    query = urlencode(
        {"survey_id": survey_id, "ps_redirect_test": 1, "supplier_id": TEST_SUPPLIER_ID}
    )
    return f"{host_url.rstrip('/')}/sandbox/startsurvey?{query}"


def render(survey: StoredSurvey, groups: list[StoredGroup], host_url: str) -> dict:
    """The survey response body of spec 2.5 (create 201, get, overwrite 200)."""
    body = survey.body
    quotas = survey.quotas
    quota_total = sum(q.required_count for q in quotas)
    refs = [g.ref for g in groups]
    single = body.get("buyer_surveygroup_ref")
    response = {
        "qbp": normalised_qbp(body.get("qbp")),
        "qlc": normalised_qlc(body.get("qlc")),
        "soft_launch": {"enable": bool(quotas) and quota_total < body["completes_required"]},
        "unique_links": {"enable": False},
        "click_balancing": body.get("click_balancing", 0),
        "estimated_clicks": estimated_clicks(body["completes_required"], body["expected_ir"]),
        "survey_external_id": "",
        "ps_survey_status": survey.status,
        "offer_price": body.get("offer_price"),
        "incl_excl": body.get("incl_excl", 0),
        "quota_throttling": body.get("quota_throttling", False),
        "url_transform": False,
        "subscriber_emails": body.get("subscriber_emails", []),
        "survey_title": body["survey_title"],
        "survey_category_code": body["survey_category_code"],
        "completes_required": body["completes_required"],
        "field_time": body["field_time"],
        "buyer_message": body.get("buyer_message"),
        "is_modular_survey": False,
        "live_url": body["live_url"],
        "test_url": body.get("test_url"),
        "billing_id": body.get("billing_id") or f"PS{survey.survey_id}",
        "expected_loi": body["expected_loi"],
        "expected_ir": body["expected_ir"],
        "ps_survey_id": survey.survey_id,
        "buyer_surveygroup_ref": single if single in refs else None,
        "buyer_surveygroup_refs": refs,
        "test_ps_survey_entry_link": entry_link(host_url, survey.survey_id),
        "survey_localization": body["survey_localization"],
        "uniqueLinks": False,
        "quotas": [render_quota(q) for q in quotas],
        "qualifications": body.get("qualifications", []),
        "is_feot_enabled": body.get("is_feot_enabled", False),
        "feot": body.get("feot", {}),
        "survey_grouping": [
            {"buyer_surveygroup_ref": g.ref, "name": g.name, "exclusion_period": g.exclusion_period}
            for g in groups
        ],
        "blend_id": body.get("blend_id"),
        "schedule_launch": {
            "enable": False,
            "info": dict.fromkeys(("date", "hours", "minutes", "timezone", "dateTimeInISO")),
        },
        "price_reco": False,
        "project_creation_date": survey.created,
        "project_last_complete_date": survey.last_complete,
        "is_dq_enable": body.get("is_dq_enable", False),
        "mc_count": 0,
        "tc_count": 0,
        "basic_token": {"enable": False, "value": None},
        "is_core_price_rate_card_enable": False,
        "dq_settings": {
            "corescore_filter_enabled": False,
            "fp_device_check": False,
            "fp_fraud_check": False,
        },
        "product": "marketplace",
        "pds_ignore_override": False,
        "supplier_allocation_throttle": False,
        "blend_applied": False,
        "crtd_on": epoch_ms(survey.created),
        "mod_on": survey.mod_on if survey.mod_on is not None else epoch_ms(survey.created),
    }
    for name in ECHOED_FIELDS:
        response[name] = body.get(name)
    return response


def status_of(survey: StoredSurvey) -> dict:
    """The answer of `GET /surveys/{id}/status`: the public material names the call, not its
    body, so the body is a sandbox decision: the status with what a monitor shows beside it."""
    body = survey.body
    return {
        "ps_survey_id": survey.survey_id,
        "ps_survey_status": survey.status,
        "survey_title": body["survey_title"],
        "completes_required": body["completes_required"],
        "offer_price": body.get("offer_price"),
        "project_last_complete_date": survey.last_complete,
        "mod_on": survey.mod_on if survey.mod_on is not None else epoch_ms(survey.created),
    }
