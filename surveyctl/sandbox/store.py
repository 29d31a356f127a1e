"""The sandbox's SQLite store: buyers, surveys, quotas, exclusion groups, transactions.

Several processes may open the same file (two CLI runs on one project), so the database runs in
WAL mode with a busy timeout, and every write is one `BEGIN IMMEDIATE` transaction. Connections
are pooled: a request thread borrows one, so no connection is used by two threads at once.

Functions other sandbox modules call (the respondent-traffic routes among them):

- `survey(survey_id) -> SurveyRecord | None`: the stored body (quotas left out), status, buyer,
  completes, has-been-live flag, the quotas (`QuotaRecord`: completes, current_target, `open`)
  and the refs of the exclusion groups the survey belongs to.
- `survey_groups(survey_id) -> list[GroupRecord]`: those exclusion groups, with their members.
- `record_complete(survey_id, buyer_quota_ids)`: counts one complete in the survey and in each
  named quota (KeyError for a quota the survey does not have), stamps the last complete date,
  then applies the auto-pause rule (a live survey whose goal or every quota is achieved moves
  to paused). Returns the survey's status afterwards.
- `insert_transaction(survey_id, record)`: stores a full transaction record (spec 2.10; missing
  keys get defaults, see `transactions.complete_record`); `insert_transactions(survey_id,
  records)` stores many in one write.
- `buyer_secret(buyer_id)`: the shared secret of the return link's hash.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from surveyctl.sandbox import lifecycle
from surveyctl.sandbox.store_groups import GroupRecord, GroupTables
from surveyctl.sandbox.store_quotas import QuotaTables, current_target
from surveyctl.sandbox.store_reports import ReportQueries
from surveyctl.sandbox.store_transactions import TransactionTables, now_iso

__all__ = ["GroupRecord", "QuotaRecord", "Store", "SurveyRecord", "current_target", "now_iso"]

BUSY_TIMEOUT_S = 30.0
FIRST_SURVEY_ID = 10001

_SCHEMA = """
CREATE TABLE IF NOT EXISTS buyers (buyer_id INTEGER PRIMARY KEY, secret TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS surveys (
    survey_id INTEGER PRIMARY KEY AUTOINCREMENT,
    buyer_id INTEGER NOT NULL,
    status INTEGER NOT NULL,
    has_been_live INTEGER NOT NULL DEFAULT 0,
    completes INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    created TEXT NOT NULL,
    last_complete TEXT
);
CREATE INDEX IF NOT EXISTS surveys_by_buyer ON surveys (buyer_id, survey_id);
CREATE TABLE IF NOT EXISTS quotas (
    survey_id INTEGER NOT NULL REFERENCES surveys ON DELETE CASCADE,
    buyer_quota_id TEXT NOT NULL,
    ps_quota_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    required_count INTEGER NOT NULL,
    current_target INTEGER NOT NULL,
    completes INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    PRIMARY KEY (survey_id, buyer_quota_id)
);
CREATE TABLE IF NOT EXISTS survey_groups (
    ref TEXT PRIMARY KEY,
    buyer_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    exclusion_period INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS group_members (
    ref TEXT NOT NULL REFERENCES survey_groups ON DELETE CASCADE,
    survey_id INTEGER NOT NULL REFERENCES surveys ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (ref, survey_id)
);
CREATE INDEX IF NOT EXISTS members_by_survey ON group_members (survey_id);
CREATE TABLE IF NOT EXISTS transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id TEXT NOT NULL UNIQUE,
    survey_id INTEGER NOT NULL REFERENCES surveys ON DELETE CASCADE,
    status INTEGER NOT NULL,
    supplier_id INTEGER NOT NULL,
    reconciliation INTEGER NOT NULL,
    record TEXT NOT NULL
);
DROP INDEX IF EXISTS transactions_by_survey;
CREATE INDEX IF NOT EXISTS transactions_by_survey_page
    ON transactions (survey_id, seq, status, supplier_id);
CREATE TABLE IF NOT EXISTS adjustments (
    adjustment_id TEXT PRIMARY KEY,
    buyer_id INTEGER NOT NULL,
    created TEXT NOT NULL,
    summary TEXT NOT NULL
);
"""


@dataclass
class QuotaRecord:
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
class SurveyRecord:
    """A stored survey: the last create/update body without its quotas, and its state."""

    survey_id: int
    buyer_id: int
    status: int
    has_been_live: bool
    completes: int
    body: dict
    created: str
    last_complete: str | None
    quotas: list[QuotaRecord] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


class Store(GroupTables, TransactionTables, QuotaTables, ReportQueries):
    """All sandbox data in one SQLite file; safe to share between threads and processes."""

    def __init__(self, db_path: Path):
        self.db_path = Path(db_path)
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._create_schema()

    # -- connections ------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    @contextmanager
    def _borrow(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = self._open()
        try:
            yield conn
        finally:
            self._idle.put(conn)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one read transaction (a consistent snapshot)."""
        with self._borrow() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside one write transaction, committed unless an exception escapes."""
        with self._borrow() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _create_schema(self) -> None:
        with self.write() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) SELECT 'surveys', ? "
                "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'surveys')",
                (FIRST_SURVEY_ID - 1,),
            )
            self._encode_old_records(conn)

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    # -- buyers -----------------------------------------------------------------------------

    def ensure_buyer(self, buyer_id: int) -> None:
        """Creates the buyer with its default shared secret `sandbox-secret-<id>` if missing."""
        with self.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO buyers (buyer_id, secret) VALUES (?, ?)",
                (buyer_id, f"sandbox-secret-{buyer_id}"),
            )

    def buyer_secret(self, buyer_id: int) -> str | None:
        with self.read() as conn:
            row = conn.execute("SELECT secret FROM buyers WHERE buyer_id = ?", (buyer_id,))
            found = row.fetchone()
        return found[0] if found else None

    # -- surveys ----------------------------------------------------------------------------

    def survey(self, survey_id: int, conn: sqlite3.Connection | None = None) -> SurveyRecord | None:
        """The stored survey, or None; `conn` reads inside a caller's transaction."""
        if conn is None:
            with self.read() as own:
                return self._survey(own, survey_id)
        return self._survey(conn, survey_id)

    def _survey(self, conn: sqlite3.Connection, survey_id: int) -> SurveyRecord | None:
        row = conn.execute(
            "SELECT survey_id, buyer_id, status, has_been_live, completes, body, created, "
            "last_complete FROM surveys WHERE survey_id = ?",
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

    def surveys_of(self, buyer_id: int) -> list[SurveyRecord]:
        """Every survey of the buyer, oldest first, read in one snapshot."""
        with self.read() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT survey_id FROM surveys WHERE buyer_id = ? ORDER BY survey_id",
                    (buyer_id,),
                )
            ]
            return [s for s in (self._survey(conn, i) for i in ids) if s is not None]

    def insert_survey(
        self, conn: sqlite3.Connection, buyer_id: int, body: dict, quotas: list[dict]
    ) -> int:
        """Stores a new draft survey; returns its ps_survey_id."""
        cursor = conn.execute(
            "INSERT INTO surveys (buyer_id, status, body, created) VALUES (?, ?, ?, ?)",
            (buyer_id, lifecycle.DRAFT, json.dumps(body), now_iso()),
        )
        survey_id = cursor.lastrowid
        self._write_quotas(conn, survey_id, body, quotas, {})
        return survey_id

    def replace_survey(
        self, conn: sqlite3.Connection, survey: SurveyRecord, body: dict, quotas: list[dict]
    ) -> None:
        """Overwrites the body; quotas keep their ps_quota_id and completes by buyer_quota_id."""
        conn.execute(
            "UPDATE surveys SET body = ? WHERE survey_id = ?",
            (json.dumps(body), survey.survey_id),
        )
        kept = {q.buyer_quota_id: q for q in survey.quotas}
        conn.execute("DELETE FROM quotas WHERE survey_id = ?", (survey.survey_id,))
        self._write_quotas(conn, survey.survey_id, body, quotas, kept)

    def _write_quotas(
        self,
        conn: sqlite3.Connection,
        survey_id: int,
        body: dict,
        quotas: list[dict],
        kept: dict[str, QuotaRecord],
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
        self, conn: sqlite3.Connection, survey: SurveyRecord, quota: QuotaRecord, body: dict
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

    def set_status(self, conn: sqlite3.Connection, survey_id: int, status: int) -> None:
        conn.execute(
            "UPDATE surveys SET status = ?, "
            "has_been_live = CASE WHEN ? = ? THEN 1 ELSE has_been_live END WHERE survey_id = ?",
            (status, status, lifecycle.LIVE, survey_id),
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


def _survey_from_row(row: tuple) -> SurveyRecord:
    survey_id, buyer_id, status, has_been_live, completes, body, created, last_complete = row
    return SurveyRecord(
        survey_id=survey_id,
        buyer_id=buyer_id,
        status=status,
        has_been_live=bool(has_been_live),
        completes=completes,
        body=json.loads(body),
        created=created,
        last_complete=last_complete,
    )


def _quota_from_row(row: tuple) -> QuotaRecord:
    buyer_quota_id, ps_quota_id, required, target, completes, body = row
    return QuotaRecord(buyer_quota_id, ps_quota_id, required, target, completes, json.loads(body))
