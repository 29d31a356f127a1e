"""Reconciliation adjustments (2.12): the buyer lists transactions to accept (public facts).

Each listed transaction id falls in exactly one bucket:
- invalid: unknown, of another buyer, outside the survey of a per-survey call, or listed twice;
- test: a test transaction (`Respondent Source` "test"), never adjusted;
- alreadyReconciled: accepted by an earlier adjustment, left as it is;
- eligible: accepted now. Of these, `completes` were already complete (21), `rejected` had been
  rejected by an earlier reconciliation, and acceptingCompletesInCurrentUpload were not complete
  and become complete.

Survey-level counters, per survey concerned (the survey of each valid transaction, or the survey
of a per-survey call), then summed: currentCompletes (completes before the upload),
previouslyRejectedCompletes (transactions reconciled as rejected before the upload),
rejectingCompletesInCurrentUpload (always 0: an upload only accepts), resultingCompletes
(current + accepting), totalRejects (rejected transactions after the upload), totalRawCompletes
(resulting + totalRejects), rejectPercentage (totalRejects / totalRawCompletes in percent, two
decimals). `transactions` counts the items of the request. validCap is always true: the sandbox
applies no reject cap. Survey and quota complete counters of fieldwork are not changed.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections import Counter

from surveyctl.sandbox import transactions as records
from surveyctl.sandbox.store import Store, now_iso

PENDING = 1
TEST_SOURCE = "test"

_BUCKETS = ("eligible", "completes", "rejected", "test", "alreadyReconciled")


def adjust(
    store: Store,
    conn: sqlite3.Connection,
    buyer_id: int,
    transaction_ids: list[str],
    survey_id: int | None = None,
) -> dict:
    """Applies one adjustment inside `conn`'s transaction; returns the response body."""
    adjustment_id = str(uuid.uuid4())
    invalid, valid = _sort(store, conn, buyer_id, transaction_ids, survey_id)
    concerned = [survey_id] if survey_id is not None else sorted({r["Survey ID"] for r in valid})
    per_survey = []
    for sid in concerned:
        listed = [r for r in valid if r["Survey ID"] == sid]
        per_survey.append(_survey_summary(store, conn, sid, listed, buyer_id, adjustment_id))
    summary = _total(per_survey, invalid, len(transaction_ids))
    store.save_adjustment(conn, adjustment_id, buyer_id, summary)
    return {
        "status": PENDING,
        "statusDescription": "Pending",
        "adjustment_id": adjustment_id,
        "summary": summary,
    }


def _sort(store, conn, buyer_id, transaction_ids, survey_id) -> tuple[int, list[dict]]:
    invalid, valid, seen, owners = 0, [], set(), {}
    for transaction_id in transaction_ids:
        if transaction_id in seen:
            invalid += 1
            continue
        seen.add(transaction_id)
        record = store.transaction(transaction_id, conn)
        if record is not None and record["Survey ID"] not in owners:
            survey = store.survey(record["Survey ID"], conn)
            owners[record["Survey ID"]] = survey.buyer_id if survey else None
        if (
            record is None
            or owners[record["Survey ID"]] != buyer_id
            or (survey_id is not None and record["Survey ID"] != survey_id)
        ):
            invalid += 1
        else:
            valid.append(record)
    return invalid, valid


def _survey_summary(store, conn, survey_id, listed, buyer_id, adjustment_id) -> dict:
    before = store.survey_transactions(conn, survey_id)
    current = sum(r["Respondent Status Code"] == records.COMPLETE for r in before)
    rejected_before = sum(r["Reconciliation Status"] == records.REJECTED for r in before)
    counts: Counter[str] = Counter()
    accepting = 0
    for record in listed:
        if record["Respondent Source"] == TEST_SOURCE:
            counts["test"] += 1
        elif record["Reconciliation Status"] == records.ACCEPTED:
            counts["alreadyReconciled"] += 1
        else:
            counts["eligible"] += 1
            if record["Respondent Status Code"] == records.COMPLETE:
                counts["completes"] += 1
            else:
                accepting += 1
            if record["Reconciliation Status"] == records.REJECTED:
                counts["rejected"] += 1
            store.replace_transaction(conn, _accepted(record, buyer_id, adjustment_id))
    resulting = current + accepting
    total_rejects = rejected_before - counts["rejected"]
    survey = store.survey(survey_id, conn)
    summary = {
        "surveyId": survey_id,
        "currentCompletes": current,
        "previouslyRejectedCompletes": rejected_before,
        "rejectingCompletesInCurrentUpload": 0,
        "acceptingCompletesInCurrentUpload": accepting,
        "resultingCompletes": resulting,
        "totalRawCompletes": resulting + total_rejects,
        "totalRejects": total_rejects,
        **{bucket: counts[bucket] for bucket in _BUCKETS},
        "invalid": 0,
        "transactions": len(listed),
        "surveyStatus": [{"id": survey_id, "st": survey.status, "modelType": "survey"}],
        "validCap": True,
    }
    summary["rejectPercentage"] = _percentage(total_rejects, summary["totalRawCompletes"])
    return summary


def _accepted(record: dict, buyer_id: int, adjustment_id: str) -> dict:
    return {
        **record,
        "Transaction Original Status": str(record["Respondent Status Code"]),
        "Transaction Original Description": record["Respondent Status Description"],
        "Respondent Status Code": records.COMPLETE,
        "Respondent Status Description": "Complete",
        # Paid as a complete is (returns.py): at the CPI expected when the session entered.
        "Respondent Buyer CPI": record["Expected Buyer CPI"],
        "Reconciliation Status": records.ACCEPTED,
        "Reconciliation Date": now_iso(),
        "Reconciliation Reason": f"accepted by adjustment {adjustment_id}",
        "Reconciliation By": f"buyer {buyer_id}",
    }


def _percentage(part: int, whole: int) -> str:
    return f"{(100 * part / whole) if whole else 0:.2f}"


_SUMMED = (
    "currentCompletes",
    "previouslyRejectedCompletes",
    "rejectingCompletesInCurrentUpload",
    "acceptingCompletesInCurrentUpload",
    "resultingCompletes",
    "totalRawCompletes",
    "totalRejects",
    *_BUCKETS,
)


def _total(per_survey: list[dict], invalid: int, transactions: int) -> dict:
    total = {name: sum(s[name] for s in per_survey) for name in _SUMMED}
    total.update(invalid=invalid, transactions=transactions)
    total["rejectPercentage"] = _percentage(total["totalRejects"], total["totalRawCompletes"])
    total["surveyStatus"] = [status for s in per_survey for status in s["surveyStatus"]]
    total["summaryPerSurvey"] = per_survey
    total["validCap"] = True
    total["invoiced"] = 0
    total["isApiUser"] = True
    return total
