"""The PostgreSQL state against the timeouts a DBA sets for a role or a database: surveyctl's own
sessions (the lock's, idle for the whole apply; the state's, idle between its writes) outlast
them, and a lock whose session the server ended anyway says so, with what to check."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from surveyctl.sandbox.process import served as serve_in_process
from surveyctl.state.lock import LockLost
from surveyctl.state.postgres import database
from surveyctl.state.postgres.database import Dsn
from surveyctl.state.postgres.store import PostgresStateStore
from surveyctl.state.records import SurveyRecord

from ..reconcile.conftest import Manifests, survey_manifest
from .conftest import local_project

LATENCY_MS = 150  # six creates of several requests each: several seconds in all
SURVEYS = 6
DSN_VARIABLE = "SURVEYCTL_TIMED_DSN"


def admin(postgres) -> psycopg.Connection:
    return psycopg.connect(postgres.admin_dsn.replace("/postgres?", "/surveyctl?"), autocommit=True)


def timed_role(postgres, setting: str, value: str = "1s") -> str:
    """The DSN of a new role of the state database for which a DBA set `setting` to `value`
    (`ALTER ROLE ... SET`): every session it opens starts with it."""
    role, password = f"t_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    with admin(postgres) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        connection.execute(f"GRANT CREATE ON DATABASE surveyctl TO {role}")
        connection.execute(f"ALTER ROLE {role} SET {setting} = '{value}'")
    return postgres.dsn(user=role, password=password)


@pytest.fixture(scope="module")
def slow_marketplace(tmp_path_factory):
    with serve_in_process(
        tmp_path_factory.mktemp("timeouts") / "sandbox.db", latency_ms=LATENCY_MS
    ) as sandbox:
        yield sandbox.url


@pytest.mark.parametrize("setting", ["idle_session_timeout", "idle_in_transaction_session_timeout"])
def test_an_apply_longer_than_the_roles_session_timeout_succeeds_holding_its_lock(
    postgres, slow_marketplace, tmp_path: Path, monkeypatch, run_cli, setting
):
    monkeypatch.setenv(DSN_VARIABLE, timed_role(postgres, setting))
    schema = postgres.fresh_schema()
    state = f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
    local_project(tmp_path, slow_marketplace, state, monkeypatch)
    manifests = Manifests(tmp_path)
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"timed-{number}"))

    started = time.monotonic()
    result = run_cli("apply", "manifests", "--auto-approve", "--parallelism", "1")
    took = time.monotonic() - started

    assert result.exit_code == 0, result.stdout + result.stderr
    assert took > 2, f"the apply took {took:.1f}s, no longer than the timeout"
    with admin(postgres) as connection:
        recorded = connection.execute(f"SELECT count(*) FROM {schema}.resources").fetchone()
    assert recorded == (SURVEYS,)


@pytest.mark.parametrize(
    ("setting", "statements"),
    [
        ("idle_session_timeout", []),
        ("idle_in_transaction_session_timeout", ["BEGIN", "SELECT 1"]),
        ("statement_timeout", ["SELECT pg_sleep(1.5)"]),
        ("transaction_timeout", ["BEGIN", "SELECT pg_sleep(0.8)", "SELECT pg_sleep(0.8)"]),
    ],
)
def test_a_session_of_surveyctls_outlasts_the_timeout_set_for_its_role(
    postgres, setting, statements
):
    dsn = Dsn.parse(timed_role(postgres, setting), "staging", DSN_VARIABLE)
    connection = dsn.connect("state staging")
    try:
        for statement in statements:
            connection.execute(statement)
        time.sleep(1.5)
        assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        connection.close()


def test_a_server_without_one_of_the_timeouts_is_connected_to_all_the_same(postgres, monkeypatch):
    # PostgreSQL 12 and 13 have no idle_session_timeout, 16 and earlier no transaction_timeout.
    later = (*database.SESSION_TIMEOUTS, "idle_timeout_of_a_later_release")
    monkeypatch.setattr(database, "SESSION_TIMEOUTS", later)
    dsn = Dsn.parse(timed_role(postgres, "idle_session_timeout"), "staging", DSN_VARIABLE)
    connection = dsn.connect("state staging")
    try:
        time.sleep(1.5)
        assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        connection.close()


def end_lock_session(postgres, schema: str) -> None:
    """What a DBA's `pg_terminate_backend` (or a server shutdown) does to the lock's session,
    once the session is gone."""
    with admin(postgres) as connection:
        [(backend,)] = connection.execute(f"SELECT backend_pid FROM {schema}.locks").fetchall()
        connection.execute("SELECT pg_terminate_backend(%s)", (backend,))
        deadline = time.monotonic() + 10
        gone = "SELECT 1 FROM pg_stat_activity WHERE pid = %s"
        while connection.execute(gone, (backend,)).fetchone():
            assert time.monotonic() < deadline, f"session {backend} did not end"
            time.sleep(0.02)


@contextmanager
def lock_session_ended(postgres) -> Iterator[PostgresStateStore]:
    """A store of a fresh schema inside its state lock, whose session the server has ended;
    closed after."""
    schema = postgres.fresh_schema()
    store = PostgresStateStore(postgres.dsn(), "staging", schema)
    try:
        with store.locked("apply"):
            end_lock_session(postgres, schema)
            yield store
    finally:
        store.close()


ENDED = (
    'the database server ended the session that held it ("terminating connection due to '
    'administrator command", as a `force-unlock`, a `pg_terminate_backend` or a server shutdown '
    "does: the server's log says which, and `pg_stat_activity` shows the sessions now)"
)


def test_a_write_after_the_server_ended_the_lock_session_says_the_server_ended_it(postgres):
    with lock_session_ended(postgres) as store:
        with pytest.raises(LockLost) as lost:
            store.record("Survey/a", SurveyRecord(1))
    assert str(lost.value) == (
        f"this command lost the state lock of environment 'staging' in {store.location}: "
        f"{ENDED}, so its state write was refused and it starts no further change; run "
        "`surveyctl plan` to see what is left to do"
    )


def test_a_check_after_the_server_ended_the_lock_session_says_the_server_ended_it(postgres):
    with lock_session_ended(postgres) as store:
        with pytest.raises(LockLost) as lost:
            store.check_lock()
    assert str(lost.value) == (
        f"this command lost the state lock of environment 'staging' in {store.location}: "
        f"{ENDED}, so it starts no further change; run `surveyctl plan` to see what is left to do"
    )


def test_a_state_session_the_server_ended_for_a_timeout_says_where_to_look(postgres):
    # A timeout surveyctl cannot turn off (a server or a pooler in front of it that ends
    # sessions itself) is met here as the state session's end: said with what to check.
    dsn = Dsn.parse(postgres.dsn(), "staging", DSN_VARIABLE)
    connection = dsn.connect("state staging")
    try:
        connection.execute("SET idle_session_timeout = '200ms'")
        time.sleep(0.6)
        with pytest.raises(psycopg.OperationalError) as ended:
            connection.execute("SELECT 1")
    finally:
        connection.close()
    assert str(dsn.error(ended.value, "write the state")) == (
        f"lost the connection to the state database of environment 'staging' at "
        f"{dsn.describe()} while trying to write the state: the database server ended the "
        'session ("terminating connection due to idle-session timeout", for a timeout set for '
        "the database user or the database: `SELECT * FROM pg_db_role_setting` lists them)"
    )


def test_a_check_after_a_refused_write_still_says_the_server_ended_the_lock_session(postgres):
    # An apply of several writes at once: one write is refused, and another's check before
    # its change comes after it, on a connection that can only say it is closed by then.
    with lock_session_ended(postgres) as store:
        with pytest.raises(LockLost):
            store.record("Survey/a", SurveyRecord(1))
        with pytest.raises(LockLost) as lost:
            store.check_lock()
    assert f"{store.location}: {ENDED}, so it starts no further change" in str(lost.value)
