"""Transactions and adjustments in the sandbox's store.

A transaction record is stored as the JSON text the API answers for it (`encode_record`: sorted
keys, the encoder's default separators), so a page of the list (4.4) is the stored texts joined
into an array: nothing is decoded and encoded again on the way out.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime

from surveyctl.sandbox import transactions as records


def now_iso() -> str:
    """The current UTC time in ISO 8601 with milliseconds and a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode_record(record: dict) -> str:
    """A record's stored text: exactly what the sandbox's JSON responses make of it."""
    return json.dumps(record, sort_keys=True)


def _row(full: dict) -> tuple:
    return (
        full["Transaction ID"],
        full["Survey ID"],
        full["Respondent Status Code"],
        full["Supplier ID"],
        full["Reconciliation Status"],
        encode_record(full),
    )


_INSERT = (
    "INSERT INTO transactions (transaction_id, survey_id, status, supplier_id, reconciliation, "
    "record) VALUES (?, ?, ?, ?, ?, ?)"
)


class TransactionTables:
    """Store methods over the `transactions` and `adjustments` tables."""

    def insert_transaction(self, survey_id: int, record: dict) -> dict:
        """Stores one transaction record of the survey; returns the record as stored."""
        full = records.complete_record(survey_id, record)
        with self.write() as conn:
            conn.execute(_INSERT, _row(full))
        return full

    def insert_transactions(self, survey_id: int, many: Iterable[dict]) -> int:
        """Stores many records of the survey in one write (as `insert_transaction` each);
        returns how many. All or none are stored."""
        rows = [_row(records.complete_record(survey_id, record)) for record in many]
        with self.write() as conn:
            conn.executemany(_INSERT, rows)
        return len(rows)

    def transactions_page_json(
        self,
        survey_id: int,
        statuses: list[int] | None,
        supplier_ids: list[int] | None,
        page: int,
        limit: int,
    ) -> tuple[list[str], int]:
        """One page (from 1) of the survey's matching records as their stored JSON texts,
        oldest first, and how many records match in all.

        The page is cut as LIMIT/OFFSET would cut it, but the offset is walked in the covering
        index (survey, seq, status, supplier) alone; only the page's own rows are read.
        """
        where, args = "survey_id = ?", [survey_id]
        if statuses:
            where += f" AND status IN ({','.join('?' * len(statuses))})"
            args += statuses
        if supplier_ids:
            where += f" AND supplier_id IN ({','.join('?' * len(supplier_ids))})"
            args += supplier_ids
        with self.read() as conn:
            count = conn.execute(f"SELECT COUNT(*) FROM transactions WHERE {where}", args)
            total = count.fetchone()[0]
            first = conn.execute(
                f"SELECT seq FROM transactions WHERE {where} ORDER BY seq LIMIT 1 OFFSET ?",
                [*args, (page - 1) * limit],
            ).fetchone()
            if first is None:
                return [], total
            rows = conn.execute(
                f"SELECT record FROM transactions WHERE {where} AND seq >= ? ORDER BY seq LIMIT ?",
                [*args, first[0], limit],
            ).fetchall()
        return [r[0] for r in rows], total

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
                encode_record(record),
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

    def _encode_old_records(self, conn: sqlite3.Connection) -> None:
        """Re-encodes records stored before `encode_record` (their keys in record order), so
        that every page of the list shows the keys in one order. A no-op once done: only the
        oldest and newest records are looked at."""
        ends = conn.execute(
            "SELECT record FROM transactions WHERE seq IN "
            "((SELECT MIN(seq) FROM transactions), (SELECT MAX(seq) FROM transactions))"
        ).fetchall()
        if all(text == encode_record(json.loads(text)) for (text,) in ends):
            return
        rows = conn.execute("SELECT seq, record FROM transactions").fetchall()
        conn.executemany(
            "UPDATE transactions SET record = ? WHERE seq = ?",
            [(encode_record(json.loads(text)), seq) for seq, text in rows],
        )
