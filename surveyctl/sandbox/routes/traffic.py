"""Respondent-side routes of the sandbox, and the open-ended check of `/buyers/v3` (4.7).

Under `/sandbox` (NOT part of the marketplace API; the buyer's access-token is needed, and a
buyer drives only its own surveys' traffic):
- `POST /sandbox/surveys/{id}/simulate` with {"respondents": N, "seed": S, "supplier_ids":
  [12, 13], "bad_hash_share": 0.02, "hold": false} sends simulated respondents at the survey
  (see `traffic.py`) and answers the counts per status.
- `GET /sandbox/return?st=..&transaction_id=..&quota_id=..&sqlc=..&ps_hash=..` is the return
  link of the sandbox marketplace: a survey platform (or `surveyctl link build`) sends
  respondents of status 16 back here.

`POST /buyers/v3/transactions/ps_api_fail` checks up to 20 answers of one transaction with
the deterministic rules of `textcheck.py`; more answers are a 422, a malformed body a 400.
"""

from __future__ import annotations

import weakref

from flask import Blueprint, request

from surveyctl.sandbox import contract, lifecycle, returns, textcheck, traffic
from surveyctl.sandbox.accounts import current_buyer
from surveyctl.sandbox.bodies import read_json
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import (
    INVALID_BODY,
    NOT_FOUND,
    SURVEY_FORBIDDEN,
    UNKNOWN_TRANSACTION,
    ApiProblem,
)
from surveyctl.sandbox.routes.surveys import owned_survey
from surveyctl.sandbox.store import Store

# Error codes of these routes (sandbox decisions).
TOO_MANY_ANSWERS = 1022
SURVEY_NOT_LAUNCHED = 1024
RETURN_REFUSED = 1025
MAX_RESPONDENTS = 10_000

blueprint = Blueprint("traffic", __name__)

_TEXT_SCHEMA = """
CREATE TABLE IF NOT EXISTS text_answers (
    survey_id INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (survey_id, fingerprint)
)
"""
_ready: weakref.WeakSet = weakref.WeakSet()


@blueprint.post("/sandbox/surveys/<int:survey_id>/simulate")
def simulate(survey_id: int):
    store = get_store()
    plan = _simulation(read_json())
    survey = owned_survey(store, survey_id)
    if survey.status == lifecycle.DRAFT:
        raise ApiProblem(
            409, SURVEY_NOT_LAUNCHED, f"survey {survey_id} is a draft: set it live first"
        )
    return_base = request.host_url.rstrip("/") + "/sandbox/return"
    result = traffic.simulate(store, survey_id, plan, return_base)
    return reply(result.as_dict(), 200)


def _simulation(body: object) -> traffic.Simulation:
    if not isinstance(body, dict):
        raise _invalid("the body must be a JSON object")
    unknown = set(body) - {"respondents", "seed", "supplier_ids", "bad_hash_share", "hold"}
    if unknown:
        raise _invalid(f"unknown field {sorted(unknown)[0]}")
    count = body.get("respondents")
    if not _int(count) or not 1 <= count <= MAX_RESPONDENTS:
        raise _invalid(f"respondents must be an integer from 1 to {MAX_RESPONDENTS}")
    seed = body.get("seed")
    if seed is not None and not _int(seed):
        raise _invalid("seed must be an integer")
    suppliers = body.get("supplier_ids", list(traffic.DEFAULT_SUPPLIERS))
    if not isinstance(suppliers, list) or not suppliers or not all(map(_int, suppliers)):
        raise _invalid("supplier_ids must be a non-empty list of integers")
    share = body.get("bad_hash_share", traffic.DEFAULT_BAD_HASH_SHARE)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise _invalid("bad_hash_share must be a number from 0 to 1")
    hold = body.get("hold", False)
    if not isinstance(hold, bool):
        raise _invalid("hold must be true or false")
    return traffic.Simulation(count, seed, tuple(suppliers), float(share), hold)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _invalid(message: str) -> ApiProblem:
    return ApiProblem(400, INVALID_BODY, message)


@blueprint.get("/sandbox/return")
def respondent_return():
    url = request.base_url + "?" + request.query_string.decode("latin-1")
    try:
        outcome = returns.process_return(get_store(), url, buyer_id=current_buyer())
    except returns.ReturnRefused as refused:
        codes = {404: NOT_FOUND, 403: SURVEY_FORBIDDEN}
        raise ApiProblem(
            refused.status, codes.get(refused.status, RETURN_REFUSED), refused.message
        ) from None
    return reply(outcome, 200)


@blueprint.post("/buyers/v3/transactions/ps_api_fail")
def text_check():
    body = read_json()
    questions = body.get("questions") if isinstance(body, dict) else None
    if isinstance(questions, list) and len(questions) > textcheck.MAX_ANSWERS:
        raise ApiProblem(
            422,
            TOO_MANY_ANSWERS,
            f"at most {textcheck.MAX_ANSWERS} answers per call, got {len(questions)}",
        )
    body = contract.check_request("text-check.request.json", body)
    store = get_store()
    record = store.transaction(body["transaction_id"])
    survey = store.survey(record["Survey ID"]) if record else None
    if survey is None or survey.buyer_id != current_buyer():
        # The service's own words (public facts); the id is the caller's own request.
        raise ApiProblem(400, UNKNOWN_TRANSACTION, "Invalid transaction")
    language = survey.body["survey_localization"].partition("_")[0]
    verdicts = _check(store, survey.survey_id, language, body["questions"])
    answer = {"transaction_id": body["transaction_id"], "data": verdicts}
    return reply(answer, 200, "text-check.response.json")


def _check(store: Store, survey_id: int, language: str, questions: list[dict]) -> list[dict]:
    """Verdicts in order; the fingerprints join the survey's seen texts in one write."""
    if store not in _ready:
        with store.write() as conn:
            conn.execute(_TEXT_SCHEMA)
        _ready.add(store)
    with store.write() as conn:
        seen = {
            row[0]
            for row in conn.execute(
                "SELECT fingerprint FROM text_answers WHERE survey_id = ?", (survey_id,)
            )
        }
        before = set(seen)
        verdicts = [
            textcheck.check(q["text"], language, seen).as_item(q["question_id"]) for q in questions
        ]
        conn.executemany(
            "INSERT OR IGNORE INTO text_answers (survey_id, fingerprint) VALUES (?, ?)",
            [(survey_id, mark) for mark in seen - before],
        )
    return verdicts
