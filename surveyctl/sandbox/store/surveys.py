"""Surveys and their quotas in the sandbox's store: the stored bodies and the counters.

`mod_on` (epoch milliseconds, public facts) moves on every write of a survey through the API:
its body, its status (the automatic pause included) and its quotas; never on a read, and not
for respondent traffic. It always grows, also for two writes in one millisecond, so a reader
comparing it sees each change. `crtd_on` is the creation time and never moves.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.store.quotas import current_target
from surveyctl.sandbox.store.transactions import now_iso


@dataclass
class StoredQuota:
    """A stored quota: the body as sent plus the service's counters."""

    buyer_quota_id: str
    ps_quota_id: str
    required_count: int
    current_target: int
    completes: int
    body: dict

    @property
    def open(self) -> bool:
        """Spec 2.4 rule 3: a quota whose required_count is <= its completes takes no traffic."""
        return self.required_count > self.completes


@dataclass
class StoredSurvey:
    """A stored survey: the last create/update body without its quotas, and its state."""

    survey_id: int
    buyer_id: int
    status: int
    has_been_live: bool
    completes: int
    body: dict
    created: str
    last_complete: str | None
    mod_on: int | None = None  # None only in files written before mod_on was kept
    quotas: list[StoredQuota] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


class SurveyTables:
    """Store methods over the `surveys` and `quotas` tables."""

    # -- surveys ----------------------------------------------------------------------------

    def survey(self, survey_id: int, conn: sqlite3.Connection | None = None) -> StoredSurvey | None:
        """The stored survey, or None; `conn` reads inside a caller's transaction."""
        if conn is None:
            with self.read() as own:
                return self._survey(own, survey_id)
        return self._survey(conn, survey_id)

    def _survey(self, conn: sqlite3.Connection, survey_id: int) -> StoredSurvey | None:
        row = conn.execute(
            "SELECT survey_id, buyer_id, status, has_been_live, completes, body, created, "
            "last_complete, mod_on FROM surveys WHERE survey_id = ?",
            (survey_id,),
        ).fetchone()
        if row is None:
            return None
        survey = _survey_from_row(row)
        survey.quotas = [
            _quota_from_row(q)
            for q in conn.execute(
                "SELECT buyer_quota_id, ps_quota_id, required_count, current_target, completes, "
                "body FROM quotas WHERE survey_id = ? ORDER BY position",
                (survey_id,),
            )
        ]
        survey.groups = [
            r[0]
            for r in conn.execute(
                "SELECT ref FROM group_members WHERE survey_id = ? ORDER BY ref", (survey_id,)
            )
        ]
        return survey

    def insert_survey(
        self, conn: sqlite3.Connection, buyer_id: int, body: dict, quotas: list[dict]
    ) -> int:
        """Stores a new draft survey; returns its ps_survey_id."""
        created = now_iso()
        cursor = conn.execute(
            "INSERT INTO surveys (buyer_id, status, body, created, mod_on) VALUES (?, ?, ?, ?, ?)",
            (buyer_id, lifecycle.DRAFT, json.dumps(body), created, epoch_ms(created)),
        )
        survey_id = cursor.lastrowid
        self._write_quotas(conn, survey_id, body, quotas, {})
        return survey_id

    def replace_survey(
        self, conn: sqlite3.Connection, survey: StoredSurvey, body: dict, quotas: list[dict]
    ) -> None:
        """Overwrites the body; quotas keep their ps_quota_id and completes by buyer_quota_id."""
        conn.execute(
            "UPDATE surveys SET body = ? WHERE survey_id = ?",
            (json.dumps(body), survey.survey_id),
        )
        self.touch(conn, survey.survey_id)
        kept = {q.buyer_quota_id: q for q in survey.quotas}
        conn.execute("DELETE FROM quotas WHERE survey_id = ?", (survey.survey_id,))
        self._write_quotas(conn, survey.survey_id, body, quotas, kept)

    def _write_quotas(
        self,
        conn: sqlite3.Connection,
        survey_id: int,
        body: dict,
        quotas: list[dict],
        kept: dict[str, StoredQuota],
    ) -> None:
        rows = []
        for position, quota in enumerate(quotas):
            old = kept.get(quota["buyer_quota_id"])
            required = quota["required_count"]
            rows.append(
                (
                    survey_id,
                    quota["buyer_quota_id"],
                    old.ps_quota_id if old else str(uuid.uuid4()),
                    position,
                    required,
                    current_target(required, body["completes_required"]),
                    old.completes if old else 0,
                    json.dumps(quota),
                )
            )
        conn.executemany(
            "INSERT INTO quotas (survey_id, buyer_quota_id, ps_quota_id, position, "
            "required_count, current_target, completes, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def update_quota(
        self, conn: sqlite3.Connection, survey: StoredSurvey, quota: StoredQuota, body: dict
    ) -> None:
        """Sets a quota's required_count and criteria (4.3); the rest of the quota stays."""
        new_body = {**quota.body, **body}
        target = current_target(body["required_count"], survey.body["completes_required"])
        conn.execute(
            "UPDATE quotas SET required_count = ?, current_target = ?, body = ? "
            "WHERE survey_id = ? AND buyer_quota_id = ?",
            (
                body["required_count"],
                target,
                json.dumps(new_body),
                survey.survey_id,
                quota.buyer_quota_id,
            ),
        )
        self.touch(conn, survey.survey_id)

    def set_status(self, conn: sqlite3.Connection, survey_id: int, status: int) -> None:
        conn.execute(
            "UPDATE surveys SET status = ?, "
            "has_been_live = CASE WHEN ? = ? THEN 1 ELSE has_been_live END WHERE survey_id = ?",
            (status, status, lifecycle.LIVE, survey_id),
        )
        self.touch(conn, survey_id)

    def touch(self, conn: sqlite3.Connection, survey_id: int) -> None:
        """Moves the survey's mod_on to now, and at least one millisecond past its last value."""
        conn.execute(
            "UPDATE surveys SET mod_on = MAX(?, COALESCE(mod_on, 0) + 1) WHERE survey_id = ?",
            (int(time.time() * 1000), survey_id),
        )

    def delete_survey(self, conn: sqlite3.Connection, survey_id: int) -> None:
        conn.execute("DELETE FROM surveys WHERE survey_id = ?", (survey_id,))

    def auto_pause(self, conn: sqlite3.Connection, survey_id: int) -> int:
        """Spec 1.5 / 3: a live survey whose goal or every quota is achieved moves to paused."""
        survey = self._survey(conn, survey_id)
        if survey is None:
            raise KeyError(survey_id)
        quotas = [(q.completes, q.required_count) for q in survey.quotas]
        reached = lifecycle.goal_reached(
            survey.completes, survey.body["completes_required"], quotas
        )
        if survey.status == lifecycle.LIVE and reached:
            self.set_status(conn, survey_id, lifecycle.PAUSED)
            return lifecycle.PAUSED
        return survey.status

    def record_complete(self, survey_id: int, buyer_quota_ids: list[str]) -> int:
        """Counts one complete in the survey and the named quotas; returns the new status."""
        with self.write() as conn:
            updated = conn.execute(
                "UPDATE surveys SET completes = completes + 1, last_complete = ? "
                "WHERE survey_id = ?",
                (now_iso(), survey_id),
            )
            if updated.rowcount == 0:
                raise KeyError(f"no survey {survey_id}")
            for buyer_quota_id in dict.fromkeys(buyer_quota_ids):
                counted = conn.execute(
                    "UPDATE quotas SET completes = completes + 1 "
                    "WHERE survey_id = ? AND buyer_quota_id = ?",
                    (survey_id, buyer_quota_id),
                )
                if counted.rowcount == 0:
                    raise KeyError(f"survey {survey_id} has no quota {buyer_quota_id!r}")
            return self.auto_pause(conn, survey_id)


def _survey_from_row(row: tuple) -> StoredSurvey:
    survey_id, buyer_id, status, has_been_live, completes, body, created, last_complete, mod_on = (
        row
    )
    return StoredSurvey(
        survey_id=survey_id,
        buyer_id=buyer_id,
        status=status,
        has_been_live=bool(has_been_live),
        completes=completes,
        body=json.loads(body),
        created=created,
        last_complete=last_complete,
        mod_on=mod_on,
    )


def _quota_from_row(row: tuple) -> StoredQuota:
    buyer_quota_id, ps_quota_id, required, target, completes, body = row
    return StoredQuota(buyer_quota_id, ps_quota_id, required, target, completes, json.loads(body))


def epoch_ms(iso: str) -> int:
    """`2026-01-02T03:04:05.678Z` -> epoch milliseconds."""
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
