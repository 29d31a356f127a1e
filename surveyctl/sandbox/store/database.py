"""The sandbox's SQLite store: the connections, the schema and the buyers.

Several processes may open the same file (two CLI runs on one project), so the database runs in
WAL mode with a busy timeout, and every write is one `BEGIN IMMEDIATE` transaction. Connections
are pooled: a request thread borrows one, so no connection is used by two threads at once.
The tables of each kind of data have their methods in a module of their own (`surveys`,
`groups`, `quotas`, `transactions`, `reports`), mixed into `Store`.

The file records the layout of its tables (SQLite's `user_version`, `LAYOUT`). A file of an
earlier sandbox is brought up to date when opened; a file of a later layout is refused without
a change, as this sandbox would serve its tables without what that layout keeps in them.
"""

from __future__ import annotations

import queue
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from surveyctl import __version__
from surveyctl.sandbox.store.groups import GroupTables
from surveyctl.sandbox.store.quotas import QuotaTables
from surveyctl.sandbox.store.reports import ReportQueries
from surveyctl.sandbox.store.surveys import SurveyTables
from surveyctl.sandbox.store.transactions import TransactionTables

BUSY_TIMEOUT_S = 30.0
FIRST_SURVEY_ID = 10001
# The layout of the tables, in the file's user_version (0: a file of a sandbox from before it
# was recorded, brought up to date below). A later sandbox raises it when an earlier one would
# serve its tables wrongly (a column it would not keep up to date, as mod_on once was).
LAYOUT = 1

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
    last_complete TEXT,
    mod_on INTEGER
);
CREATE INDEX IF NOT EXISTS surveys_by_buyer ON surveys (buyer_id, survey_id);
-- The survey list asks for one status a request: its count and its page's offset are walked in
-- this index alone, not over every survey of the buyer (10,000 drafts made each page of the
-- live ones, none, cost a walk of 10,000 rows).
CREATE INDEX IF NOT EXISTS surveys_by_status ON surveys (buyer_id, status, survey_id);
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


class NewerData(Exception):
    """The data file was made by a later sandbox, whose tables this one does not know."""


class Store(SurveyTables, GroupTables, TransactionTables, QuotaTables, ReportQueries):
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
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found > LAYOUT:
                raise NewerData(
                    f"the sandbox data was made by a newer surveyctl (layout {found}; this one, "
                    f"{__version__}, knows layout {LAYOUT}), and was left as it is: upgrade "
                    "surveyctl, or move the file aside to start an empty sandbox"
                )
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) SELECT 'surveys', ? "
                "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'surveys')",
                (FIRST_SURVEY_ID - 1,),
            )
            self._encode_old_records(conn)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(surveys)")}
            if "mod_on" not in columns:  # a file written before mod_on was kept
                conn.execute("ALTER TABLE surveys ADD COLUMN mod_on INTEGER")
            conn.execute(f"PRAGMA user_version = {LAYOUT}")

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    # -- buyers -----------------------------------------------------------------------------

    def ensure_buyer(self, buyer_id: int, secret: str | None = None) -> None:
        """Creates the buyer, if missing, with `secret` as its shared secret (by default
        `sandbox-secret-<id>`)."""
        with self.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO buyers (buyer_id, secret) VALUES (?, ?)",
                (buyer_id, secret or f"sandbox-secret-{buyer_id}"),
            )

    def buyer_secret(self, buyer_id: int) -> str | None:
        with self.read() as conn:
            row = conn.execute("SELECT secret FROM buyers WHERE buyer_id = ?", (buyer_id,))
            found = row.fetchone()
        return found[0] if found else None
