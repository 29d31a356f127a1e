"""How a respondent session ends: the return link, and the buyer's transaction status call.

A session enters the buyer's survey (status 16, see traffic.py) and ends once, either by the
return link (`process_return`: st, transaction_id, quota_id, sqlc, ps_hash) or by the buyer's
transaction status call (routes/transaction_status.py), both through `finish`. The ps_hash must
be the SHA-1 of the URL without it followed by the buyer's shared secret, else the session is
recorded as a tampered buyer URL (31, public facts), never as a complete. A complete counts in
the survey and in the quotas the respondent fell into; with QLC on, the quota_id list
re-allocates it to those quotas instead (with sqlc=true the values may name quotas by
buyer_quota_supplier_id too). A status the buyer set by the call wins: a later return link is
refused (409).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import weakref
from datetime import UTC, datetime
from urllib.parse import quote, unquote_plus, urlsplit

from surveyctl.sandbox.respondents import STATUS_DESCRIPTIONS, iso
from surveyctl.sandbox.store import Store, StoredSurvey

IN_BUYER_SURVEY = 16
RETURN_STATUSES = (17, 18, 20, 21, 30)
COMPLETE = 21
PLATFORM_QUALITY = 15  # de-dupe and exclusion group
TAMPERED = 31  # a return whose ps_hash does not match (public facts: "tampered buyer URL")
# Substatus of a session whose status the buyer set through the transaction status call.
API_STATUS_NOTE = "status set through the transaction status call"

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


def ensure_schema(store: Store) -> None:
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


def start_session(store: Store, survey_id: int, transaction_id: str, quotas: list[str]) -> None:
    ensure_schema(store)
    with store.write() as conn:
        conn.execute(
            "INSERT INTO traffic_sessions (transaction_id, survey_id, quotas) VALUES (?, ?, ?)",
            (transaction_id, survey_id, json.dumps(quotas)),
        )


def termination(reason: str, status: int) -> dict:
    return {"PS_Termination Reason": reason, "PS_Termination Code": str(status)}


def process_return(store: Store, url: str, buyer_id: int | None = None) -> dict:
    """Records the outcome a return link carries; returns what was recorded.

    Raises ReturnRefused (404 unknown transaction, 403 a transaction of a survey of another
    buyer than `buyer_id` when given, 409 already returned, 400 bad st or quota_id) when
    nothing is recorded.
    """
    ensure_schema(store)
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
    if buyer_id is not None and (survey is None or survey.buyer_id != buyer_id):
        raise ReturnRefused(403, "You don't have permission for this survey")
    secret = store.buyer_secret(survey.buyer_id) if survey else None
    unsigned = parts._replace(query="&".join(i for i in items if not i.startswith("ps_hash=")))
    given = raw.get("ps_hash", "").lower()
    expected = link_hash(unsigned.geturl(), secret or "")
    if not secret or not hmac.compare_digest(given.encode("ascii", "replace"), expected.encode()):
        return finish(store, transaction_id, TAMPERED, [], fraud=True)
    try:
        status = int(raw.get("st", ""))
    except ValueError:
        status = 0
    if status not in RETURN_STATUSES:
        raise ReturnRefused(400, f"st must be one of {list(RETURN_STATUSES)}")
    quotas = _complete_quotas(store, survey, transaction_id, raw) if status == COMPLETE else []
    return finish(store, transaction_id, status, quotas)


def _complete_quotas(store: Store, survey: StoredSurvey, transaction_id: str, raw: dict) -> list:
    """The quotas a complete counts in: the QLC re-allocation when given, else those the
    respondent fell into at screening."""
    named = quota_names(unquote_plus(raw.get("quota_id", "")))
    qlc = (survey.body.get("qlc") or {}).get("enable", False)
    if qlc and named:
        return quotas_named(survey, named, raw.get("sqlc", "").lower() == "true")
    return session_quotas(store, survey, transaction_id)


def quota_names(value: str) -> list[str]:
    """The names a decoded quota_id value lists (spec 4.12 rule 1: separated by commas).

    Split only once decoded: a comma sent as `%2C` is a comma like any other, as every query
    reader (the service's included) decodes before the value is used. The hash, by contrast,
    covers the URL as sent (`process_return`)."""
    return [name for name in value.split(",") if name]


def quotas_named(survey: StoredSurvey, named: list[str], sqlc: bool) -> list[str]:
    """The buyer_quota_ids of the quotas a QLC quota_id list names; ReturnRefused (400) for a
    name of no quota. With sqlc a name may be a buyer_quota_supplier_id (spec 2.4: the id of
    supplier-level QLC) or a buyer_quota_id (spec 4.12 rule 2: "the buyer quota identifier"):
    the spec says both, so both are taken."""
    by_id = {q.buyer_quota_id: q for q in survey.quotas}
    if sqlc:
        by_id.update(
            (q.body["buyer_quota_supplier_id"], q)
            for q in survey.quotas
            if q.body.get("buyer_quota_supplier_id")
        )
    unknown = [name for name in named if name not in by_id]
    if unknown:
        ids = "buyer_quota_supplier_id or buyer_quota_id" if sqlc else "buyer_quota_id"
        raise ReturnRefused(400, f"quota_id {unknown[0]!r} is the {ids} of no quota of the survey")
    return [by_id[name].buyer_quota_id for name in named]


def session_quotas(store: Store, survey: StoredSurvey, transaction_id: str) -> list[str]:
    """The quotas the respondent fell into at screening that the survey still has."""
    ensure_schema(store)
    with store.read() as conn:
        row = conn.execute(
            "SELECT quotas FROM traffic_sessions WHERE transaction_id = ?", (transaction_id,)
        ).fetchone()
    existing = {q.buyer_quota_id for q in survey.quotas}
    return [q for q in (json.loads(row[0]) if row else []) if q in existing]


def finish(
    store: Store,
    transaction_id: str,
    status: int,
    quotas: list,
    *,
    fraud: bool = False,
    open_statuses: tuple[int, ...] = (IN_BUYER_SURVEY,),
    note: str | None = None,
) -> dict:
    """Records the final status of a session still in one of `open_statuses` (the return
    link: in the buyer's survey); ReturnRefused (409) when it has ended. `note` becomes the
    record's substatus."""
    now = datetime.now(UTC)
    with store.write() as conn:
        current = store.transaction(transaction_id, conn)
        if current["Respondent Status Code"] not in open_statuses:
            ended = current["Respondent Status Code"]
            why = (
                ", set through the transaction status call, which wins over a return link"
                if current["Respondent Substatus Description"] == API_STATUS_NOTE
                else ""
            )
            raise ReturnRefused(
                409, f"transaction {transaction_id!r} already ended with status {ended}{why}"
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
        if note:
            updated["Respondent Substatus Description"] = note
        if fraud:
            updated["Respondent Substatus Description"] = "fraud: return link ps_hash mismatch"
            updated.update(termination("fraud: return link ps_hash mismatch", TAMPERED))
        store.replace_transaction(conn, updated)
    if status == COMPLETE:
        store.record_complete(updated["Survey ID"], quotas)
    return {
        "transaction_id": transaction_id,
        "Respondent Status Code": status,
        "Respondent Status Description": updated["Respondent Status Description"],
        "quotas": quotas,
    }
