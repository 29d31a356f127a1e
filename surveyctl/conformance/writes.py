"""Checks of what surveyctl assumes the service does with writes to the draft: the create
answer, full-overwrite PUTs, JSON Patch, quota PUTs, and the refusals it documents.

Every write goes to the run's own draft and leaves it a draft: no check changes its status,
and a body the service might take in an unexpected way is one a draft can hold harmlessly.
"""

from __future__ import annotations

import copy
import time

from surveyctl.api import ApiClient, paths
from surveyctl.api.reading import error_fields
from surveyctl.api.transport import RETRY_STATUSES
from surveyctl.conformance.probe import (
    ANY_STATUS,
    Outcome,
    Probe,
    Unanswered,
    differs,
    expect,
    not_checked,
    read_numbers,
)
from surveyctl.conformance.reads import epoch_ms

# A survey id no account is expected to hold (404, not another buyer's 403).
UNKNOWN_SURVEY_ID = 999_999_999_999
INVALID_KEY = "surveyctl-conformance-invalid-key"
# A transaction id no respondent's session has, and an answer that says what sent it to
# anyone who reads the service's logs.
UNKNOWN_TRANSACTION = "surveyctl-conformance-no-such-transaction"
TEXT_CHECK_ANSWER = "surveyctl conformance check: this transaction does not exist."


def create_required_only(probe: Probe) -> Outcome:
    created = probe.created or {}
    return expect(
        isinstance(created.get("ps_survey_id"), int),
        f"201 with ps_survey_id {created.get('ps_survey_id')!r}",
    )


def create_is_draft(probe: Probe) -> Outcome:
    status = (probe.created or {}).get("ps_survey_status")
    return expect(status == 11, f"ps_survey_status {status!r}")


def create_defaults(probe: Probe) -> Outcome:
    created = probe.created or {}
    seen = {
        "billing_id": created.get("billing_id"),
        "offer_price": created.get("offer_price"),
        "test_url": created.get("test_url"),
        "qlc.enable": (created.get("qlc") or {}).get("enable"),
    }
    wanted = {
        "billing_id": f"PS{probe.draft_id}",
        "offer_price": None,
        "test_url": None,
        "qlc.enable": False,
    }
    return expect(seen == wanted, ", ".join(f"{k} {v!r}" for k, v in seen.items()))


def put_overwrites(probe: Probe) -> Outcome:
    first = probe.call(
        "PUT",
        paths.survey(probe.draft_id),
        body=probe.put_body(buyer_message="conformance", external_project_id="conformance-project"),
    )
    if not first.ok:
        return differs(first.describe())
    kept = probe.survey()
    if kept.get("external_project_id") != "conformance-project":
        return differs(f"external_project_id after PUT: {kept.get('external_project_id')!r}")
    second = probe.call("PUT", paths.survey(probe.draft_id), body=probe.put_body())
    if not second.ok:
        return differs(second.describe())
    cleared = probe.survey()
    left = {k: cleared.get(k) for k in ("buyer_message", "external_project_id") if cleared.get(k)}
    return expect(not left, f"fields left out of the second PUT afterwards: {left or 'cleared'}")


def put_get_body_back(probe: Probe) -> Outcome:
    body = probe.survey()
    body["external_project_id"] = "conformance-project"
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    return expect(answer.ok, answer.describe())


def put_unknown_field(probe: Probe) -> Outcome:
    body = probe.put_body(surveyctl_conformance_unknown_field="ignored")
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    return expect(answer.ok, answer.describe())


US_STATE = 225  # the attribute of the US state, in the en_US catalogue only
US_LOCALE = "en_US"


def _state_codes(probe: Probe, codes: list[str]) -> Outcome:
    """Whether a PUT of the draft with the US state `codes` is taken; not checked for a draft
    of another locale, whose catalogue holds no US state (its refusal says nothing of the
    codes)."""
    if probe.locale != US_LOCALE:
        return not_checked(
            f"attribute {US_STATE} (US state) is in the {US_LOCALE} catalogue only; the draft is "
            f"{probe.locale} (--locale {US_LOCALE} checks it)"
        )
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=_with_state(probe, codes))
    return expect(answer.ok, answer.describe())


def _with_state(probe: Probe, codes: list[str]) -> dict:
    body = probe.put_body()
    body["qualifications"] = [
        *body.get("qualifications", []),
        {"qualification_code": US_STATE, "condition_codes": codes},
    ]
    return body


def state_codes_unpadded(probe: Probe) -> Outcome:
    return _state_codes(probe, ["6"])


def state_codes_padded(probe: Probe) -> Outcome:
    return _state_codes(probe, ["06", "36", "34"])


def feasibility_criterias(probe: Probe) -> Outcome:
    today = time.strftime("%Y%m%d")
    body = probe.put_body(
        feasibility_exclusions={
            "enable": False,
            "start": today,
            "end": today,
            "criteriaSurveys": [],
            "statuses": [],
            "criterias": [],
        }
    )
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    return expect(answer.ok, answer.describe())


def unknown_locale(probe: Probe) -> Outcome:
    body = probe.put_body(survey_localization="xx_XX")
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    probe.call("PUT", paths.survey(probe.draft_id), body=probe.put_body())  # in case it took
    return expect(answer.status == 400, answer.describe())


def patch_replace(probe: Probe) -> Outcome:
    operations = [{"op": "replace", "path": "/completes_required", "value": 2}]
    answer = probe.call("PATCH", paths.survey(probe.draft_id), body=operations)
    body = answer.body if isinstance(answer.body, dict) else {}
    return expect(
        answer.ok and read_numbers(body.get("completes_required")) == 2, answer.describe()
    )


def mod_on_moves(probe: Probe) -> Outcome:
    """mod_on moves forward on a write (a plan takes a survey whose mod_on is unchanged for
    unchanged) and crtd_on, the creation time, keeps its value: both compared across one PUT,
    read as a plan reads them (an integer written as text is that integer)."""
    before = probe.survey()
    time.sleep(0.01)  # epoch milliseconds: one write later is a later millisecond
    put = probe.call("PUT", paths.survey(probe.draft_id), body=probe.put_body())
    if not put.ok:
        return differs(put.describe())
    after = probe.survey()
    mod_on = (epoch_ms(before, "mod_on"), epoch_ms(after, "mod_on"))
    crtd_on = (epoch_ms(before, "crtd_on"), epoch_ms(after, "crtd_on"))
    seen = f"mod_on {mod_on[0]!r} -> {mod_on[1]!r}, crtd_on {crtd_on[0]!r} -> {crtd_on[1]!r}"
    if None in (*mod_on, *crtd_on):
        shown = {n: (before.get(n), after.get(n)) for n in ("mod_on", "crtd_on")}
        return differs(
            ", ".join(f"{n} {b!r} -> {a!r}" for n, (b, a) in shown.items())
            + ": not epoch milliseconds"
        )
    if crtd_on[1] != crtd_on[0]:
        return differs(f"{seen}: crtd_on moved on a write")
    return expect(mod_on[1] > mod_on[0], seen)


def _quota(probe: Probe, index: int = 0) -> dict:
    return copy.deepcopy((probe.create_body or {})["quotas"][index])


def quota_put(probe: Probe) -> Outcome:
    quota = _quota(probe)
    body = {"required_count": 1, "criteria": quota["criteria"]}
    answer = probe.call("PUT", paths.quota(probe.draft_id, quota["buyer_quota_id"]), body=body)
    got = answer.body if isinstance(answer.body, dict) else {}
    fields = {"buyer_quota_id", "ps_quota_id", "required_count", "criteria"}
    missing = sorted(fields - set(got)) if answer.ok else []
    seen = answer.describe() + (f", without {missing}" if missing else "")
    return expect(answer.ok and not missing, seen)


def _quota_ids(survey: dict) -> dict[str, str]:
    return {
        str(q.get("buyer_quota_id")): str(q.get("ps_quota_id"))
        for q in survey.get("quotas") or []
        if isinstance(q, dict) and q.get("ps_quota_id")
    }


def quota_ids_kept(probe: Probe) -> Outcome:
    """A full PUT and a quota PUT keep each quota's ps_quota_id (its completes go with it):
    the state records the ids once and apply never re-reads them after a quota PUT."""
    before = _quota_ids(probe.survey())
    put = probe.call("PUT", paths.survey(probe.draft_id), body=probe.put_body())
    if not put.ok:
        return differs(put.describe())
    after_put = _quota_ids(probe.survey())
    quota = _quota(probe)
    body = {"required_count": 1, "criteria": quota["criteria"]}
    answer = probe.call("PUT", paths.quota(probe.draft_id, quota["buyer_quota_id"]), body=body)
    if not answer.ok:
        return differs(answer.describe())
    after_quota = _quota_ids(probe.survey())
    kept = bool(before) and before == after_put == after_quota
    return expect(
        kept,
        f"ps_quota_id of {len(before)} quotas kept by the PUT: {before == after_put}, "
        f"by the quota PUT: {after_put == after_quota}",
    )


def quota_put_repeats_id(probe: Probe) -> Outcome:
    quota = _quota(probe)
    body = {
        "buyer_quota_id": quota["buyer_quota_id"],
        "required_count": 1,
        "criteria": quota["criteria"],
    }
    answer = probe.call("PUT", paths.quota(probe.draft_id, quota["buyer_quota_id"]), body=body)
    return expect(answer.ok, answer.describe())


def quota_put_title(probe: Probe) -> Outcome:
    quota = _quota(probe, 1)
    body = {
        "quota_title": "renamed by the conformance check",
        "required_count": 1,
        "criteria": quota["criteria"],
    }
    answer = probe.call("PUT", paths.quota(probe.draft_id, quota["buyer_quota_id"]), body=body)
    if not answer.ok:
        return differs(answer.describe())
    quotas = probe.survey().get("quotas") or []
    titles = {q.get("buyer_quota_id"): q.get("quota_title") for q in quotas}
    shown = titles.get(quota["buyer_quota_id"])
    return expect(shown == body["quota_title"], f"the survey shows quota_title {shown!r}")


def unknown_survey(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.survey(UNKNOWN_SURVEY_ID))
    return expect(answer.status == 404 and answer.code == 1006, answer.describe())


def text_check_unknown_transaction(probe: Probe) -> Outcome:
    """The open-ended check of a transaction that does not exist is refused with 400 and a
    message (public facts: "Invalid transaction"). Safe on any account: the spec shows no price
    for the check, and with no transaction there is no survey whose seen texts (the duplicate
    check's memory) it could add to; one short answer, far below the 20 a call."""
    body = {
        "transaction_id": UNKNOWN_TRANSACTION,
        "questions": [{"question_id": "conformance", "text": TEXT_CHECK_ANSWER}],
    }
    answer = probe.call("POST", paths.text_check(), body=body)
    if answer.status == 400 and not answer.message:
        return differs(f"{answer.describe()}, without a message the client can read")
    return expect(answer.status == 400, answer.describe())


def invalid_key(probe: Probe) -> Outcome:
    # Retried like every other probe (a 429 or 503 is no answer about the key), within the
    # run's --timeout.
    stranger = ApiClient(
        probe.client.host,
        INVALID_KEY,
        timeout=probe.client.timeout,
        show_host=False,
        on_retry=probe.client.on_retry,  # its retries are said like every other
    )
    try:
        response = stranger.request("GET", paths.surveys(), expected=ANY_STATUS)
    finally:
        stranger.close()
    if response.status_code in RETRY_STATUSES:
        raise Unanswered(
            f"the service did not answer: GET /surveys with an invalid key answered "
            f"{response.status_code}"
        )
    try:
        body = response.json()
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    readable = bool(error_fields(body)[1])  # under any name the client reads a message
    return expect(
        response.status_code == 401 and readable,
        f"GET /surveys with an invalid key answered {response.status_code}"
        + ("" if readable else ", without a message the client can read"),
    )


def qlc_needs_quotas(probe: Probe) -> Outcome:
    qlc = {"enable": True, "multiple_quotas": {"enable": True}}
    body = probe.put_body(quotas=[], qlc=qlc)
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    _restore(probe, answer.ok)
    return expect(answer.status == 400 and answer.code == 1014, answer.describe())


def qbp_needs_quotas(probe: Probe) -> Outcome:
    body = probe.put_body(quotas=[], qbp={"enable": True})
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    _restore(probe, answer.ok)
    return expect(answer.status == 400 and answer.code == 1007, answer.describe())


def _restore(probe: Probe, changed: bool) -> None:
    """Puts the draft back as created after a refusal that was taken after all."""
    if changed:
        probe.call("PUT", paths.survey(probe.draft_id), body=probe.put_body())
