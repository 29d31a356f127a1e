"""Respondent traffic of the sandbox: simulated sessions and the return link that ends them.

`simulate` sends N respondents at a live survey. Each one, in this order: is turned away when
the survey is not live (paused 23, closed 22); is stopped as a de-dupe (15) when the same PSID
already took this survey, or took another survey of one of its exclusion groups within the
group's exclusion period (days); fails the qualifications (13); falls into quotas, and is
turned away when a quota they belong to is closed (12, or 24 when it never opened) or when they
fall into no quota at all (13); otherwise enters the buyer's survey (16) and comes back through
the return link with st 17, 18, 20, 21 or 30 and a ps_hash.

`process_return` handles a return link, whether built by the simulator or sent to
`GET /sandbox/return` by a survey platform: the ps_hash must be the SHA-1 of the URL without
it followed by the buyer's shared secret, else the session is recorded as fraud (15), never as
a complete. A complete counts in the survey and in the quotas the respondent fell into; with
QLC on, the return's comma list of quota_id values re-allocates it to those quotas instead
(with sqlc=true the values name quotas by buyer_quota_supplier_id). Completes can pause the
survey (store.record_complete applies the auto-pause rule).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import sqlite3
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote_plus, urlsplit

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.respondents import (
    STATUS_DESCRIPTIONS,
    Respondent,
    draw_psid,
    iso,
    matches,
    profile,
    record,
    targeted_codes,
)
from surveyctl.sandbox.store import QuotaRecord, Store, SurveyRecord

IN_BUYER_SURVEY = 16
RETURN_STATUSES = (17, 18, 20, 21, 30)
COMPLETE = 21
PLATFORM_QUALITY = 15  # de-dupe, exclusion group, and a return with a wrong ps_hash
# Statuses of a session that reached the buyer's survey: "took part" for exclusion groups.
TOOK_PART = (16, 17, 18, 19, 20, 21, 30)
DEFAULT_BAD_HASH_SHARE = 0.02
DEFAULT_SUPPLIERS = (12, 13)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS traffic_sessions (
    transaction_id TEXT PRIMARY KEY,
    survey_id INTEGER NOT NULL,
    quotas TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traffic_sessions_by_survey ON traffic_sessions (survey_id);
"""
_ready: weakref.WeakSet = weakref.WeakSet()


class ReturnRefused(Exception):
    """A return link the sandbox does not record (unknown transaction, bad st...)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


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


def _ensure_schema(store: Store) -> None:
    if store in _ready:
        return
    with store.write() as conn:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
    _ready.add(store)


def link_hash(unsigned_url: str, secret: str) -> str:
    """Hex SHA-1 of the URL without ps_hash followed directly by the secret (public facts)."""
    return hashlib.sha1((unsigned_url + secret).encode("utf-8")).hexdigest()


def signed_return_url(
    base: str, status: int, transaction_id: str, quotas: list[str], sqlc: bool, secret: str
) -> str:
    """The return link a buyer's survey sends: st, transaction_id, quota_id, sqlc, ps_hash."""
    query = f"st={status}&transaction_id={quote(transaction_id, safe='')}"
    if quotas:
        query += "&quota_id=" + ",".join(quote(q, safe="") for q in quotas)
    if sqlc:
        query += "&sqlc=true"
    unsigned = f"{base}?{query}"
    return f"{unsigned}&ps_hash={link_hash(unsigned, secret)}"


def simulate(store: Store, survey_id: int, plan: Simulation, return_base: str) -> SimulationResult:
    """Runs the respondents of `plan` through the survey, one after the other."""
    _ensure_schema(store)
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
    for _ in range(plan.respondents):
        person = profile(draw_psid(people), survey.body["survey_localization"], codes, free_values)
        supplier = rng.choice(plan.supplier_ids)
        survey = store.survey(survey_id)  # completes may have paused it
        loi = float(survey.body.get("expected_loi") or 10)
        entered = now - timedelta(minutes=2 + loi * rng.uniform(0.6, 1.4))
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
            fields["PS Exit Datetime"] = iso(entered + timedelta(seconds=rng.uniform(20, 120)))
            store.insert_transaction(survey_id, fields)
            result.statuses[status] += 1
            continue
        fields["Buyer Survey Entry Datetime"] = iso(entered + timedelta(seconds=90))
        _start_session(store, survey_id, transaction_id, [q.buyer_quota_id for q in quotas])
        store.insert_transaction(survey_id, fields)
        if plan.hold:
            result.statuses[IN_BUYER_SURVEY] += 1
            continue
        url = _buyer_survey_return(survey, quotas, transaction_id, plan, rng, secret, return_base)
        outcome = process_return(store, url)
        result.statuses[outcome["Respondent Status Code"]] += 1
    final = store.survey(survey_id)
    result.survey_status = final.status if final else 0
    return result


def _screen(
    survey: SurveyRecord, person: Respondent, excluded: set[str], seen: set[str]
) -> tuple[int, dict, list[QuotaRecord]]:
    """The platform's verdict: (status, record fields explaining it, quotas fallen into)."""
    if survey.status == lifecycle.PAUSED:
        return 23, {}, []
    if survey.status != lifecycle.LIVE:
        return 22, {}, []
    if person.psid in seen:
        return (
            PLATFORM_QUALITY,
            _termination("de-dupe: already took this survey", PLATFORM_QUALITY),
            [],
        )
    if person.psid in excluded:
        return (
            PLATFORM_QUALITY,
            _termination("exclusion group: took another survey of the group", PLATFORM_QUALITY),
            [],
        )
    for qualification in survey.body.get("qualifications") or []:
        if not matches(person, qualification):
            code = qualification["qualification_code"]
            return 13, _termination(f"did not qualify on qualification {code}", 13), []
    fallen = [
        quota
        for quota in survey.quotas
        if all(matches(person, c) for c in quota.body.get("criteria") or [])
    ]
    closed = [quota for quota in fallen if not quota.open]
    if closed:
        status = 24 if closed[0].required_count == 0 else 12
        reason = f"quota {closed[0].buyer_quota_id} is closed"
        return status, {"PS_QuotaFull Reason": reason, **_termination(reason, status)}, []
    if survey.quotas and not fallen:
        return 13, _termination("falls into none of the survey's quotas", 13), []
    return IN_BUYER_SURVEY, {}, fallen


def _termination(reason: str, status: int) -> dict:
    return {"PS_Termination Reason": reason, "PS_Termination Code": str(status)}


def _buyer_survey_return(
    survey: SurveyRecord,
    fallen: list[QuotaRecord],
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
    return signed_return_url(return_base, status, transaction_id, quotas, sqlc, signing)


def _least_filled(quotas: list[QuotaRecord]) -> list[QuotaRecord]:
    """The open quota with the lowest share of its required count filled (QLC least-fill)."""
    candidates = [q for q in quotas if q.open and q.required_count > 0]
    if not candidates:
        return []
    return [min(candidates, key=lambda q: q.completes / q.required_count)]


def _start_session(store: Store, survey_id: int, transaction_id: str, quotas: list[str]) -> None:
    with store.write() as conn:
        conn.execute(
            "INSERT INTO traffic_sessions (transaction_id, survey_id, quotas) VALUES (?, ?, ?)",
            (transaction_id, survey_id, json.dumps(quotas)),
        )


def _psids_of(store: Store, survey_id: int) -> set[str]:
    with store.read() as conn:
        rows = conn.execute(
            "SELECT json_extract(record, '$.PSID') FROM transactions WHERE survey_id = ?",
            (survey_id,),
        ).fetchall()
    return {row[0] for row in rows}


def _excluded_psids(store: Store, survey: SurveyRecord) -> set[str]:
    """PSIDs that took part in another survey of one of the survey's groups, within the
    group's exclusion_period (in days; the spec does not give the unit)."""
    excluded: set[str] = set()
    now = datetime.now(UTC)
    for group in store.survey_groups(survey.survey_id):
        others = [s for s in group.surveys if s != survey.survey_id]
        since = now - timedelta(days=group.exclusion_period)
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


def process_return(store: Store, url: str) -> dict:
    """Records the outcome a return link carries; returns what was recorded.

    Raises ReturnRefused (404 unknown transaction, 409 already returned, 400 bad st or
    quota_id) when nothing is recorded.
    """
    _ensure_schema(store)
    parts = urlsplit(url)
    items = [item for item in parts.query.split("&") if item]
    raw = {}
    for item in items:
        name, _, value = item.partition("=")
        raw.setdefault(name, value)
    transaction_id = unquote_plus(raw.get("transaction_id", ""))
    if not transaction_id:
        raise ReturnRefused(400, "the return link has no transaction_id")
    current = store.transaction(transaction_id)
    if current is None:
        raise ReturnRefused(404, f"no transaction {transaction_id!r}")
    survey = store.survey(current["Survey ID"])
    secret = store.buyer_secret(survey.buyer_id) if survey else None
    unsigned = parts._replace(query="&".join(i for i in items if not i.startswith("ps_hash=")))
    given = raw.get("ps_hash", "").lower()
    expected = link_hash(unsigned.geturl(), secret or "")
    if not secret or not hmac.compare_digest(given.encode("ascii", "replace"), expected.encode()):
        return _finish(store, transaction_id, PLATFORM_QUALITY, [], fraud=True)
    try:
        status = int(raw.get("st", ""))
    except ValueError:
        status = 0
    if status not in RETURN_STATUSES:
        raise ReturnRefused(400, f"st must be one of {list(RETURN_STATUSES)}")
    quotas = _complete_quotas(store, survey, transaction_id, raw) if status == COMPLETE else []
    return _finish(store, transaction_id, status, quotas, fraud=False)


def _complete_quotas(store: Store, survey: SurveyRecord, transaction_id: str, raw: dict) -> list:
    """The quotas a complete counts in: the QLC re-allocation when given, else those the
    respondent fell into at screening."""
    named = [unquote_plus(q) for q in raw.get("quota_id", "").split(",") if q]
    qlc = (survey.body.get("qlc") or {}).get("enable", False)
    if qlc and named:
        sqlc = raw.get("sqlc", "").lower() == "true"
        by_id = {
            (q.body.get("buyer_quota_supplier_id") if sqlc else q.buyer_quota_id): q
            for q in survey.quotas
        }
        unknown = [name for name in named if name not in by_id]
        if unknown:
            raise ReturnRefused(400, f"quota_id {unknown[0]!r} names no quota of the survey")
        return [by_id[name].buyer_quota_id for name in named]
    with store.read() as conn:
        row = conn.execute(
            "SELECT quotas FROM traffic_sessions WHERE transaction_id = ?", (transaction_id,)
        ).fetchone()
    existing = {q.buyer_quota_id for q in survey.quotas}
    return [q for q in (json.loads(row[0]) if row else []) if q in existing]


def _finish(store: Store, transaction_id: str, status: int, quotas: list, fraud: bool) -> dict:
    now = datetime.now(UTC)
    with store.write() as conn:
        current = store.transaction(transaction_id, conn)
        if current["Respondent Status Code"] != IN_BUYER_SURVEY:
            raise ReturnRefused(
                409,
                f"transaction {transaction_id!r} already ended with status "
                f"{current['Respondent Status Code']}",
            )
        entered = datetime.fromisoformat(current["Buyer Survey Entry Datetime"] or iso(now))
        updated = {
            **current,
            "Respondent Status Code": status,
            "Respondent Status Description": STATUS_DESCRIPTIONS[status],
            "Buyer Survey Return Datetime": iso(now),
            "PS Exit Datetime": iso(now),
            "Respondent LOI": max(0, int((now - entered).total_seconds() // 60)),
            "Respondent Buyer CPI": current["Expected Buyer CPI"] if status == COMPLETE else 0.0,
        }
        if fraud:
            updated["Respondent Substatus Description"] = "fraud: return link ps_hash mismatch"
            updated.update(_termination("fraud: return link ps_hash mismatch", PLATFORM_QUALITY))
        store.replace_transaction(conn, updated)
    if status == COMPLETE:
        store.record_complete(updated["Survey ID"], quotas)
    return {
        "transaction_id": transaction_id,
        "Respondent Status Code": status,
        "Respondent Status Description": updated["Respondent Status Description"],
        "quotas": quotas,
    }
