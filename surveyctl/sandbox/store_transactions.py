"""Transactions and adjustments in the sandbox's store."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from surveyctl.sandbox import transactions as records


def now_iso() -> str:
    """The current UTC time in ISO 8601 with milliseconds and a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TransactionTables:
    """Store methods over the `transactions` and `adjustments` tables."""

    def insert_transaction(self, survey_id: int, record: dict) -> dict:
        """Stores one transaction record of the survey; returns the record as stored."""
        full = records.complete_record(survey_id, record)
        with self.write() as conn:
            conn.execute(
                "INSERT INTO transactions (transaction_id, survey_id, status, supplier_id, "
                "reconciliation, record) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    full["Transaction ID"],
                    survey_id,
                    full["Respondent Status Code"],
                    full["Supplier ID"],
                    full["Reconciliation Status"],
                    json.dumps(full),
                ),
            )
        return full

    def transactions_page(
        self,
        survey_id: int,
        statuses: list[int] | None,
        supplier_ids: list[int] | None,
        page: int,
        limit: int,
    ) -> tuple[list[dict], int]:
        """One page (from 1) of the survey's matching records, oldest first, and the total."""
        where, args = "survey_id = ?", [survey_id]
        if statuses:
            where += f" AND status IN ({','.join('?' * len(statuses))})"
            args += statuses
        if supplier_ids:
            where += f" AND supplier_id IN ({','.join('?' * len(supplier_ids))})"
            args += supplier_ids
        with self.read() as conn:
            total = conn.execute(f"SELECT COUNT(*) FROM transactions WHERE {where}", args)
            count = total.fetchone()[0]
            rows = conn.execute(
                f"SELECT record FROM transactions WHERE {where} ORDER BY seq LIMIT ? OFFSET ?",
                [*args, limit, (page - 1) * limit],
            ).fetchall()
        return [json.loads(r[0]) for r in rows], count

    def transaction(
        self, transaction_id: str, conn: sqlite3.Connection | None = None
    ) -> dict | None:
        """The stored record with this Transaction ID, or None."""
        if conn is None:
            with self.read() as own:
                return self.transaction(transaction_id, own)
        row = conn.execute(
            "SELECT record FROM transactions WHERE transaction_id = ?", (transaction_id,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def survey_transactions(self, conn: sqlite3.Connection, survey_id: int) -> list[dict]:
        rows = conn.execute(
            "SELECT record FROM transactions WHERE survey_id = ? ORDER BY seq", (survey_id,)
        )
        return [json.loads(r[0]) for r in rows]

    def replace_transaction(self, conn: sqlite3.Connection, record: dict) -> None:
        conn.execute(
            "UPDATE transactions SET status = ?, reconciliation = ?, record = ? "
            "WHERE transaction_id = ?",
            (
                record["Respondent Status Code"],
                record["Reconciliation Status"],
                json.dumps(record),
                record["Transaction ID"],
            ),
        )

    def save_adjustment(
        self, conn: sqlite3.Connection, adjustment_id: str, buyer_id: int, summary: dict
    ) -> None:
        conn.execute(
            "INSERT INTO adjustments (adjustment_id, buyer_id, created, summary) "
            "VALUES (?, ?, ?, ?)",
            (adjustment_id, buyer_id, now_iso(), json.dumps(summary)),
        )
