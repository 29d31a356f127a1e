"""Respondent traffic of the sandbox: simulated sessions, ended by the return link.

`simulate` sends N respondents at a live survey. Each one, in this order: is turned away when
the survey is not live (paused 23, closed 22); is stopped as a de-dupe (15) when the same PSID
already took this survey, or took another survey of one of its exclusion groups within the
group's exclusion period (days); fails the qualifications (13); falls into quotas, and is
turned away when a quota they belong to is closed (12, or 24 when it never opened) or when they
fall into no quota at all (13); otherwise enters the buyer's survey (16) and comes back through
the return link with st 17, 18, 20, 21 or 30 and a ps_hash, which `returns.process_return`
records (a wrong ps_hash is a tampered buyer URL, 31). Completes can pause the survey
(store.record_complete applies the auto-pause rule).
"""

from __future__ import annotations

import json
import random
import sqlite3
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from surveyctl.sandbox import lifecycle, returns
from surveyctl.sandbox.respondents import (
    Respondent,
    draw_psid,
    iso,
    matches,
    profile,
    record,
    targeted_codes,
)
from surveyctl.sandbox.returns import COMPLETE, IN_BUYER_SURVEY, PLATFORM_QUALITY, ReturnRefused
from surveyctl.sandbox.store import Store, StoredQuota, StoredSurvey

__all__ = ["ReturnRefused", "Simulation", "SimulationResult", "simulate"]

# Statuses of a session that reached the buyer's survey: "took part" for exclusion groups.
TOOK_PART = (16, 17, 18, 19, 20, 21, 30)
DEFAULT_BAD_HASH_SHARE = 0.02
DEFAULT_SUPPLIERS = (12, 13)
MAX_LOI_MINUTES = 24 * 60
MAX_PERIOD_DAYS = 100 * 366  # "for ever" to a simulation; timedelta stops near 2.7 million years


@dataclass(frozen=True)
class Simulation:
    """What to send: how many respondents, the seed, the suppliers, and the outcome mix."""

    respondents: int
    seed: int | None = None
    supplier_ids: tuple[int, ...] = DEFAULT_SUPPLIERS
    bad_hash_share: float = DEFAULT_BAD_HASH_SHARE
    hold: bool = False  # stop everyone in the buyer's survey (16): returns are sent by hand


@dataclass
class SimulationResult:
    """Counts per Respondent Status Code, and the survey's status afterwards."""

    survey_id: int
    statuses: Counter = field(default_factory=Counter)
    survey_status: int = 0

    def as_dict(self) -> dict:
        return {
            "survey_id": self.survey_id,
            "respondents": sum(self.statuses.values()),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "completes": self.statuses.get(COMPLETE, 0),
            "ps_survey_status": self.survey_status,
        }


def simulate(store: Store, survey_id: int, plan: Simulation, return_base: str) -> SimulationResult:
    """Runs the respondents of `plan` through the survey, one after the other."""
    # PSIDs come from their own stream, so the same seed meets the same people in the same
    # order whatever happens to them (outcomes draw a varying number of numbers).
    people = random.Random(plan.seed)
    rng = random.Random(None if plan.seed is None else f"{plan.seed}:outcomes")
    survey = store.survey(survey_id)
    if survey is None:
        raise KeyError(survey_id)
    codes, free_values = targeted_codes(survey.body)
    excluded = _excluded_psids(store, survey)
    seen = _psids_of(store, survey_id)
    result = SimulationResult(survey_id)
    secret = store.buyer_secret(survey.buyer_id) or ""
    now = datetime.now(UTC)
    # No session enters before its survey was created, however long the LOI.
    created = datetime.fromisoformat(survey.created)
    for _ in range(plan.respondents):
        person = profile(draw_psid(people), survey.body["survey_localization"], codes, free_values)
        supplier = rng.choice(plan.supplier_ids)
        survey = store.survey(survey_id)  # completes may have paused it
        # Capped at a day: a simulated session of a larger LOI would overflow the clock.
        loi = min(float(survey.body.get("expected_loi") or 10), MAX_LOI_MINUTES)
        entered = max(now - timedelta(minutes=2 + loi * rng.uniform(0.6, 1.4)), created)
        status, reason, quotas = _screen(survey, person, excluded, seen)
        seen.add(person.psid)
        transaction_id = str(uuid.uuid4())
        fields = record(
            transaction_id=transaction_id,
            person=person,
            survey=survey,
            supplier_id=supplier,
            entered=entered,
            status=status,
            rng=rng,
        )
        fields.update(reason)
        if status != IN_BUYER_SURVEY:
            left = entered + timedelta(seconds=rng.uniform(20, 120))
            fields["PS Exit Datetime"] = iso(min(left, max(now, entered)))
            store.insert_transaction(survey_id, fields)
            result.statuses[status] += 1
            continue
        # 90 s in the marketplace's screener, or half the time since entering when it entered
        # less than 3 minutes ago (its survey just created): never after it was simulated.
        screened = min(timedelta(seconds=90), (now - entered) / 2)
        fields["Buyer Survey Entry Datetime"] = iso(entered + screened)
        returns.start_session(store, survey_id, transaction_id, [q.buyer_quota_id for q in quotas])
        store.insert_transaction(survey_id, fields)
        if plan.hold:
            result.statuses[IN_BUYER_SURVEY] += 1
            continue
        url = _buyer_survey_return(survey, quotas, transaction_id, plan, rng, secret, return_base)
        outcome = returns.process_return(store, url)
        result.statuses[outcome["Respondent Status Code"]] += 1
    final = store.survey(survey_id)
    result.survey_status = final.status if final else 0
    return result


def _screen(
    survey: StoredSurvey, person: Respondent, excluded: set[str], seen: set[str]
) -> tuple[int, dict, list[StoredQuota]]:
    """The platform's verdict: (status, record fields explaining it, quotas fallen into)."""
    if survey.status == lifecycle.PAUSED:
        return 23, {}, []
    if survey.status != lifecycle.LIVE:
        return 22, {}, []
    if person.psid in seen:
        return (
            PLATFORM_QUALITY,
            returns.termination("de-dupe: already took this survey", PLATFORM_QUALITY),
            [],
        )
    if person.psid in excluded:
        return (
            PLATFORM_QUALITY,
            returns.termination(
                "exclusion group: took another survey of the group", PLATFORM_QUALITY
            ),
            [],
        )
    for qualification in survey.body.get("qualifications") or []:
        if not matches(person, qualification):
            code = qualification["qualification_code"]
            return 13, returns.termination(f"did not qualify on qualification {code}", 13), []
    fallen = [
        quota
        for quota in survey.quotas
        if all(matches(person, c) for c in quota.body.get("criteria") or [])
    ]
    closed = [quota for quota in fallen if not quota.open]
    if closed:
        status = 24 if closed[0].required_count == 0 else 12
        reason = f"quota {closed[0].buyer_quota_id} is closed"
        return status, {"PS_QuotaFull Reason": reason, **returns.termination(reason, status)}, []
    if survey.quotas and not fallen:
        return 13, returns.termination("falls into none of the survey's quotas", 13), []
    return IN_BUYER_SURVEY, {}, fallen


def _buyer_survey_return(
    survey: StoredSurvey,
    fallen: list[StoredQuota],
    transaction_id: str,
    plan: Simulation,
    rng: random.Random,
    secret: str,
    return_base: str,
) -> str:
    """What the buyer's survey does: an outcome, QLC quota ids, and the signed return link."""
    incidence = min(0.95, max(0.05, float(survey.body.get("expected_ir") or 50) / 100))
    if rng.random() < incidence:
        status = COMPLETE
    else:
        status = rng.choices((18, 17, 20, 30), weights=(60, 15, 15, 10))[0]
    quotas, sqlc = [], False
    qlc = (survey.body.get("qlc") or {}).get("enable", False)
    if status == COMPLETE and qlc:
        chosen = _least_filled(survey.quotas) or (fallen[:1] if fallen else [])
        supplier_ids = [q.body.get("buyer_quota_supplier_id") for q in chosen]
        if chosen and all(supplier_ids):
            quotas, sqlc = supplier_ids, True
        else:
            quotas = [q.buyer_quota_id for q in chosen]
    signing = secret if rng.random() >= plan.bad_hash_share else secret + "-forged"
    return returns.signed_return_url(return_base, status, transaction_id, quotas, sqlc, signing)


def _least_filled(quotas: list[StoredQuota]) -> list[StoredQuota]:
    """The open quota with the lowest share of its required count filled (QLC least-fill)."""
    candidates = [q for q in quotas if q.open and q.required_count > 0]
    if not candidates:
        return []
    return [min(candidates, key=lambda q: q.completes / q.required_count)]


def _psids_of(store: Store, survey_id: int) -> set[str]:
    with store.read() as conn:
        rows = conn.execute(
            "SELECT json_extract(record, '$.PSID') FROM transactions WHERE survey_id = ?",
            (survey_id,),
        ).fetchall()
    return {row[0] for row in rows}


def _excluded_psids(store: Store, survey: StoredSurvey) -> set[str]:
    """PSIDs that took part in another survey of one of the survey's groups, within the
    group's exclusion_period (in days; the spec does not give the unit)."""
    excluded: set[str] = set()
    now = datetime.now(UTC)
    for group in store.survey_groups(survey.survey_id):
        others = [s for s in group.surveys if s != survey.survey_id]
        since = now - timedelta(days=min(group.exclusion_period, MAX_PERIOD_DAYS))
        with store.read() as conn:
            excluded |= _recent_participants(conn, others, since)
    return excluded


def _recent_participants(conn: sqlite3.Connection, survey_ids: list[int], since: datetime) -> set:
    if not survey_ids:
        return set()
    marks = ",".join("?" * len(survey_ids))
    rows = conn.execute(
        f"SELECT record FROM transactions WHERE survey_id IN ({marks})", survey_ids
    ).fetchall()
    found = set()
    for (text,) in rows:
        fields = json.loads(text)
        if fields["Respondent Status Code"] in TOOK_PART and fields["PS Entry DateTime"] >= iso(
            since
        ):
            found.add(fields["PSID"])
    return found
