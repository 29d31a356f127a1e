"""Quotas one at a time in the sandbox's store: add, delete and partial update.

A survey's quotas are written whole by a create or a PUT (store.py); these methods serve the
per-quota operations (add a quota, delete one, a JSON Patch of one quota). Every method runs
inside the caller's write transaction.
"""

from __future__ import annotations

import json
import sqlite3
import uuid


def current_target(required_count: int, completes_required: int) -> int:
    """The completes a quota targets now: its required_count, capped by the survey goal.

    Spec 2.4 rule 2 only says current_target <= required_count; the cap by the survey's
    completes_required is the sandbox's reading of quota flexibility (spec 1.4).
    """
    return max(0, min(required_count, completes_required))


class QuotaTables:
    """Store methods over single rows of the `quotas` table."""

    def add_quota(
        self, conn: sqlite3.Connection, survey_id: int, quota: dict, completes_required: int
    ) -> str:
        """Appends a new quota (as sent, without ps_quota_id) to the survey; its ps_quota_id."""
        position = conn.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM quotas WHERE survey_id = ?", (survey_id,)
        ).fetchone()[0]
        ps_quota_id = str(uuid.uuid4())
        required = quota["required_count"]
        conn.execute(
            "INSERT INTO quotas (survey_id, buyer_quota_id, ps_quota_id, position, "
            "required_count, current_target, completes, body) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
            (
                survey_id,
                quota["buyer_quota_id"],
                ps_quota_id,
                position,
                required,
                current_target(required, completes_required),
                json.dumps(quota),
            ),
        )
        self.touch(conn, survey_id)
        return ps_quota_id

    def delete_quota(self, conn: sqlite3.Connection, survey_id: int, buyer_quota_id: str) -> None:
        conn.execute(
            "DELETE FROM quotas WHERE survey_id = ? AND buyer_quota_id = ?",
            (survey_id, buyer_quota_id),
        )
        self.touch(conn, survey_id)

    def set_quota(
        self,
        conn: sqlite3.Connection,
        survey_id: int,
        buyer_quota_id: str,
        body: dict,
        target: int,
    ) -> None:
        """Overwrites a quota's body, required_count and current_target (completes stay)."""
        conn.execute(
            "UPDATE quotas SET required_count = ?, current_target = ?, body = ? "
            "WHERE survey_id = ? AND buyer_quota_id = ?",
            (body["required_count"], target, json.dumps(body), survey_id, buyer_quota_id),
        )
        self.touch(conn, survey_id)
