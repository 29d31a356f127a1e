"""The PostgreSQL backend against a real server: tables on first use, one row per resource,
serial-checked transactions, the advisory lock, and failures said without the password."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from surveyctl.signals import Stopped
from surveyctl.state import StateError, SurveyRecord
from surveyctl.state.lock import LockError, LockHeld, LockLost, LockWaitInterrupted
from surveyctl.state.postgres.database import DatabaseError
from surveyctl.state.postgres.schema import SCHEMA_VERSION, advisory_key
from surveyctl.state.postgres.store import PostgresStateStore


@pytest.fixture
def schema(postgres) -> str:
    return postgres.fresh_schema()


@pytest.fixture
def store(postgres, schema):
    store = PostgresStateStore(postgres.dsn(), "staging", schema)
    yield store
    store.close()


def survey(ps_survey_id: int) -> SurveyRecord:
    return SurveyRecord(ps_survey_id, {"male": "q-1"}, {"survey_title": "T", "a": 1, "B": 2})


def rows(postgres, query: str, *params) -> list[tuple]:
    with psycopg.connect(postgres.admin_dsn.replace("/postgres?", "/surveyctl?")) as connection:
        return connection.execute(query, params).fetchall()


def end_session(postgres, backend: int) -> None:
    """Ends a session as a server restart does, and waits until it is gone: the server ends
    it a moment after pg_terminate_backend answers, and until then the session still works."""
    rows(postgres, "SELECT pg_terminate_backend(%s)", backend)
    deadline = time.monotonic() + 10
    while rows(postgres, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", backend):
        assert time.monotonic() < deadline, f"session {backend} did not end"
        time.sleep(0.02)


def test_tables_are_made_on_first_use_with_a_schema_version(postgres, store, schema):
    assert store.load().serial == 0
    version = rows(postgres, f"SELECT version FROM {schema}.schema_version")
    assert version == [(SCHEMA_VERSION,)]
    tables = {
        r[0]
        for r in rows(postgres, "SELECT tablename FROM pg_tables WHERE schemaname = %s", schema)
    }
    assert tables == {"schema_version", "states", "resources", "journal", "history", "locks"}


def test_a_write_touches_the_row_of_its_resource_only(postgres, store, schema):
    for number in range(5):
        store.record(f"Survey/s-{number}", survey(number))
    store.record("Survey/s-2", survey(222))
    written = rows(postgres, f"SELECT address, serial FROM {schema}.resources ORDER BY address")
    assert written == [
        ("Survey/s-0", 1),
        ("Survey/s-1", 2),
        ("Survey/s-2", 6),
        ("Survey/s-3", 4),
        ("Survey/s-4", 5),
    ]


def test_state_survives_a_new_connection_with_body_order_kept(postgres, store, schema):
    store.record("Survey/a", survey(1))
    entry = store.journal_create("Survey/b", {"survey_title": "B"})
    reread = PostgresStateStore(postgres.dsn(), "staging", schema).load()
    assert reread.survey("a") == survey(1)
    assert list(reread.survey("a").last_applied) == ["survey_title", "a", "B"]
    assert reread.pending_create("Survey/b") == entry
    assert reread.serial == 2 and reread.lineage == store.current().lineage


def test_resolve_forget_and_move_change_rows_and_journal(postgres, store, schema):
    store.journal_create("Survey/a", {"survey_title": "A"})
    store.resolve_create("Survey/a", survey(1))
    store.move("Survey/a", "Survey/b")
    store.record("Survey/c", survey(3))
    store.forget("Survey/c")
    state = PostgresStateStore(postgres.dsn(), "staging", schema).load()
    assert sorted(state.resources) == ["Survey/b"] and state.journal == {}
    assert rows(postgres, f"SELECT count(*) FROM {schema}.journal") == [(0,)]


def test_environments_sharing_a_schema_keep_apart(postgres, store, schema):
    store.record("Survey/a", survey(1))
    other = PostgresStateStore(postgres.dsn(), "production", schema)
    assert other.load().resources == {}
    other.record("Survey/z", survey(9))
    assert sorted(store.load().resources) == ["Survey/a"]


def test_a_write_based_on_a_stale_read_is_refused_and_the_other_kept(postgres, store, schema):
    store.record("Survey/a", survey(1))
    first = PostgresStateStore(postgres.dsn(), "staging", schema)
    second = PostgresStateStore(postgres.dsn(), "staging", schema)
    first.load(), second.load()
    first.record("Survey/b", survey(2))
    with pytest.raises(
        StateError, match=r"changed since this command read it \(serial 2 there, serial 1 here\)"
    ):
        second.record("Survey/c", survey(3))
    assert sorted(store.load().resources) == ["Survey/a", "Survey/b"]
    assert "Survey/c" not in second.current().resources


def test_two_first_writes_of_a_new_state_one_is_refused(postgres, schema):
    first = PostgresStateStore(postgres.dsn(), "fresh", schema)
    second = PostgresStateStore(postgres.dsn(), "fresh", schema)
    first.load(), second.load()
    first.record("Survey/a", survey(1))
    with pytest.raises(StateError, match="no state there|serial 1 there"):
        second.record("Survey/b", survey(2))


def test_the_lock_refuses_a_second_holder_naming_the_first(postgres, store, schema):
    with store.locked("apply") as held:
        other = PostgresStateStore(postgres.dsn(), "staging", schema)
        with pytest.raises(LockHeld) as refused:
            with other.locked("import"):
                pass
        assert refused.value.holder.id == held.id
        message = str(refused.value)
        assert "'apply'" in message and held.who in message
        assert f"force-unlock {held.id}" in message
        assert store.lock_holder().id == held.id
    assert store.lock_holder() is None
    with PostgresStateStore(postgres.dsn(), "staging", schema).locked("import"):
        pass


HOLDER = textwrap.dedent(
    """
    import sys, time
    from surveyctl.state.postgres.store import PostgresStateStore
    store = PostgresStateStore(sys.argv[1], "staging", sys.argv[2])
    with store.locked("apply") as info:
        print(info.id, flush=True)
        time.sleep(120)
    """
)


def start_holder(postgres, schema) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, postgres.dsn(), schema], stdout=subprocess.PIPE, text=True
    )
    lock_id = process.stdout.readline().strip()
    assert lock_id, "the holder did not take the lock"
    return process, lock_id


def test_a_killed_holders_lock_is_released_by_the_server(postgres, store, schema):
    process, lock_id = start_holder(postgres, schema)
    assert store.lock_holder().id == lock_id
    process.kill()
    process.wait()
    with store.locked("apply", timeout=10) as mine:  # the server ends the session at once
        assert mine.id != lock_id


def test_force_unlock_with_another_id_is_refused(postgres, store, schema):
    process, lock_id = start_holder(postgres, schema)
    try:
        with pytest.raises(LockError, match=f"has ID {lock_id}, not wrong-id"):
            store.force_unlock("wrong-id")
        assert store.lock_holder().id == lock_id
    finally:
        process.kill()
        process.wait()


def test_force_unlock_ends_the_holders_session(postgres, store, schema):
    process, lock_id = start_holder(postgres, schema)
    try:
        removed = store.force_unlock(lock_id)
        assert removed.id == lock_id and removed.operation == "apply"
        assert store.lock_holder() is None
        with store.locked("apply"):
            pass
    finally:
        process.kill()
        process.wait()


def test_a_write_after_its_lock_was_forced_is_refused(postgres, store, schema):
    with store.locked("apply") as held:
        store.record("Survey/a", survey(1))
        PostgresStateStore(postgres.dsn(), "staging", schema).force_unlock(held.id)
        with pytest.raises(StateError, match="lost the state lock"):
            store.record("Survey/b", survey(2))
    assert sorted(store.load().resources) == ["Survey/a"]


def test_a_write_after_the_lock_session_ended_is_refused(postgres, store, schema):
    with store.locked("apply"):
        store.record("Survey/a", survey(1))
        # A server restart or a dropped connection: the session ends, its row stays.
        [(backend,)] = rows(postgres, f"SELECT backend_pid FROM {schema}.locks")
        end_session(postgres, backend)
        with pytest.raises(StateError, match="lost the state lock of environment 'staging'"):
            store.record("Survey/b", survey(2))
    assert sorted(store.load().resources) == ["Survey/a"]


def test_a_migration_into_a_state_whose_lock_was_forced_is_refused(postgres, store, schema):
    with store.locked("state migrate") as held:
        store.record("Survey/a", survey(1))
        copied = store.load()
        PostgresStateStore(postgres.dsn(), "staging", schema).force_unlock(held.id)
        with pytest.raises(StateError, match="lost the state lock"):
            store.restore(copied, [])
    assert sorted(store.load().resources) == ["Survey/a"]


def test_force_unlock_without_a_lock_says_so(store):
    with pytest.raises(LockError, match="not locked"):
        store.force_unlock("any")


def test_an_unreachable_database_is_one_sentence_naming_environment_and_host(tmp_path):
    dsn = f"host={tmp_path} port=5999 dbname=x user=u password=hunter2-secret"
    started = time.monotonic()
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore(dsn, "staging").load()
    message = str(failed.value)
    assert message.startswith(
        f"cannot reach the state database of environment 'staging' at u@{tmp_path}:5999/x"
    )
    assert "hunter2" not in message and "\n" not in message
    assert time.monotonic() - started < 15


@pytest.mark.parametrize(
    "setting, said",
    [
        ("sslmode=bogus", 'invalid sslmode value: "bogus"'),
        ("port=99999", 'invalid port number: "99999"'),
        ("connect_timeout=abc", "bad value for connect_timeout"),
    ],
)
def test_a_setting_libpq_refuses_is_named_as_the_connection_strings_fault(tmp_path, setting, said):
    dsn = f"host={tmp_path} dbname=x user=u password=hunter2-secret {setting}"
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore(dsn, "staging", dsn_variable="TEAM_DSN").load()
    message = str(failed.value)
    assert message.startswith(
        "$TEAM_DSN of environment 'staging' has a setting PostgreSQL does not accept: "
    )
    assert said in message and "correct the connection string" in message
    assert "cannot reach" not in message and "hunter2" not in message


def test_a_refused_login_is_one_sentence_without_the_password(postgres):
    dsn = postgres.dsn(password="wrong-password-123")
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore(dsn, "staging").load()
    message = str(failed.value)
    assert "environment 'staging'" in message and "refused the login" in message
    assert postgres.socket_dir in message
    assert "wrong-password-123" not in message


def test_missing_rights_are_one_sentence_naming_the_user(postgres, schema):
    dsn = postgres.dsn(user="reader", password=postgres.reader_password)
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore(dsn, "staging", schema).load()
    message = str(failed.value)
    assert "the database user reader lacks the rights to create the state tables" in message
    assert "environment 'staging'" in message and postgres.reader_password not in message


def test_a_dsn_that_does_not_parse_is_not_repeated(postgres):
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore("host=x password=s3cret-value oops", "staging", dsn_variable="$DSN")
    assert "s3cret" not in str(failed.value) and "not a PostgreSQL connection string" in str(
        failed.value
    )


@pytest.mark.parametrize(
    "dsn",
    [
        # A generated password (base64) with a `/`: libpq read host `surveyctl`, port
        # `s3cr3tPw`, database `x9Qz+k==@db.example.com/ops`, and the message named them all.
        "postgresql://surveyctl:s3cr3tPw/x9Qz+k==@db.example.com:5432/ops?sslmode=require",
        # One with an `@`: the host became `x9Qz@db.example.com`, quoted by libpq's own error.
        "postgresql://surveyctl:s3cr3tPw@x9Qz@db.example.com/ops",
    ],
)
def test_a_url_whose_password_holds_a_slash_or_at_sign_is_refused_without_any_of_it(dsn):
    with pytest.raises(DatabaseError) as failed:
        PostgresStateStore(dsn, "staging", dsn_variable="SURVEYCTL_STATE_DSN")
    message = str(failed.value)
    assert message == (
        "$SURVEYCTL_STATE_DSN of environment 'staging' is a URL whose user name or password "
        "holds a `/` or an `@` as it is, which ends that part early, so the rest of it would be "
        "read as the host or the database: write it percent-encoded (`/` as %2F, `@` as %40), "
        "or use the `host=... user=... password=...` form"
    )
    assert "s3cr3t" not in message and "x9Qz" not in message


def test_a_url_with_its_password_percent_encoded_is_accepted(postgres):
    encoded = postgres.url().replace(postgres.password, postgres.password + "%2F%40", 1)
    with pytest.raises(DatabaseError, match="refused the login"):  # the password is another
        PostgresStateStore(encoded, "staging").load()


def test_location_names_host_and_schema_but_never_the_password(postgres, store, schema):
    assert (
        store.location
        == f"PostgreSQL surveyctl@{postgres.socket_dir}:{postgres.port}/surveyctl (schema {schema})"
    )
    assert postgres.password not in store.location


def test_a_url_dsn_works_too(postgres, schema):
    store = PostgresStateStore(postgres.url(), "staging", schema)
    store.record("Survey/a", survey(1))
    assert postgres.password not in store.location
    assert store.load().survey("a") == survey(1)


def test_a_read_only_role_can_read_the_state_but_not_lock_it(postgres, store, schema):
    store.record("Survey/a", survey(1))
    with psycopg.connect(postgres.dsn(), autocommit=True) as owner:
        owner.execute(f"GRANT USAGE ON SCHEMA {schema} TO reader")
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO reader")
    reader = PostgresStateStore(
        postgres.dsn(user="reader", password=postgres.reader_password), "staging", schema
    )
    assert reader.load().survey("a") == survey(1)  # enough for `surveyctl plan`
    with pytest.raises(
        DatabaseError,
        match=f"user reader lacks the rights to take the state lock in schema {schema} ",
    ):
        with reader.locked("apply"):
            pass
    with store.locked("apply"):  # the refused attempt left no lock behind
        pass


def test_a_schema_of_the_first_layout_is_migrated_to_take_any_resource_kind(
    postgres, store, schema
):
    store.record("Survey/s-1", survey(1))  # the tables, then put back as the first layout was
    with psycopg.connect(postgres.admin_dsn.replace("/postgres?", "/surveyctl?")) as connection:
        for table in ("resources", "journal"):
            connection.execute(
                f"ALTER TABLE {schema}.{table} ADD CONSTRAINT {table}_address_check "
                "CHECK (address ~ '^(Survey|ExclusionGroup)/.+$')"
            )
        connection.execute(f"DELETE FROM {schema}.schema_version")
        connection.execute(f"INSERT INTO {schema}.schema_version (version) VALUES (1)")
    again = PostgresStateStore(postgres.dsn(), "staging", schema)
    try:
        again.load()
    finally:
        again.close()
    assert rows(postgres, f"SELECT max(version) FROM {schema}.schema_version") == [
        (SCHEMA_VERSION,)
    ]
    with psycopg.connect(postgres.admin_dsn.replace("/postgres?", "/surveyctl?")) as connection:
        connection.execute(
            f"INSERT INTO {schema}.resources (environment, address, record, serial) "
            "VALUES ('staging', 'Memo/x', '{}', 1)"
        )


def test_tables_of_a_newer_layout_are_refused_untouched_asking_for_an_upgrade(
    postgres, store, schema
):
    store.record("Survey/s-1", survey(1))
    newer = SCHEMA_VERSION + 1
    with psycopg.connect(postgres.admin_dsn.replace("/postgres?", "/surveyctl?")) as connection:
        connection.execute(f"INSERT INTO {schema}.schema_version (version) VALUES ({newer})")
    older = PostgresStateStore(postgres.dsn(), "staging", schema)
    try:
        with pytest.raises(DatabaseError) as refused:
            older.load()
    finally:
        older.close()
    assert f"the state tables in schema {schema} of " in str(refused.value)
    assert (
        f"were made by a newer surveyctl (layout {newer}, this one knows {SCHEMA_VERSION}); "
        "upgrade surveyctl"
    ) in str(refused.value)
    assert postgres.password not in str(refused.value)
    assert rows(postgres, f"SELECT max(version) FROM {schema}.schema_version") == [(newer,)]


def test_a_role_that_cannot_alter_the_tables_still_reads_a_first_layout_state(
    postgres, store, schema
):
    store.record("Survey/a", survey(1))
    with psycopg.connect(postgres.dsn(), autocommit=True) as owner:
        owner.execute(f"UPDATE {schema}.schema_version SET version = 1")
        owner.execute(f"GRANT USAGE ON SCHEMA {schema} TO reader")
        owner.execute(f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA {schema} TO reader")
    reader = PostgresStateStore(
        postgres.dsn(user="reader", password=postgres.reader_password), "staging", schema
    )
    assert reader.load().survey("a") == survey(1)
    assert rows(postgres, f"SELECT max(version) FROM {schema}.schema_version") == [(1,)]


def session_holding(postgres, schema: str, dsn: str | None = None) -> psycopg.Connection:
    """A database session that takes the state lock of `staging` and writes no holder row, as
    a command does in the moment between the two (or a session of another role)."""
    connection = psycopg.connect(dsn or postgres.dsn(), autocommit=True)
    key = advisory_key("state", schema, "staging")
    assert connection.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]
    return connection


def applications(postgres) -> list[str]:
    """The application names of the sessions open on the state database."""
    return [
        name
        for (name,) in rows(
            postgres,
            "SELECT application_name FROM pg_stat_activity WHERE datname = 'surveyctl' "
            "AND application_name LIKE 'surveyctl%%'",
        )
    ]


def test_the_refusal_says_who_holds_the_lock_where_and_how_to_force_unlock_it(
    postgres, store, schema
):
    with store.locked("apply") as held:
        with pytest.raises(LockHeld) as refused:
            with PostgresStateStore(postgres.dsn(), "staging", schema).locked("import"):
                pass
    assert str(refused.value) == (
        f"the state of environment 'staging' is locked by {held.describe()} (PostgreSQL "
        f"surveyctl@{postgres.socket_dir}:{postgres.port}/surveyctl, schema {schema}); wait "
        "for it (or pass --lock-timeout SECONDS); a command that was killed has already "
        "released it, and one that hangs can be stopped with "
        f"`surveyctl --env staging force-unlock {held.id}`"
    )


def test_a_refusal_after_a_wait_says_how_long_it_waited(postgres, store, schema):
    with store.locked("apply") as held:
        other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=lambda _: None)
        with pytest.raises(LockHeld) as refused:
            with other.locked("import", timeout=0.3):
                pass
    assert str(refused.value).startswith(
        f"the state of environment 'staging' is locked after waiting 0.3s by {held.describe()} "
    )


def test_a_refusal_naming_a_holder_that_wrote_its_row_comes_without_waiting(
    postgres, store, schema
):
    with store.locked("apply"):
        started = time.monotonic()
        with pytest.raises(LockHeld):
            with PostgresStateStore(postgres.dsn(), "staging", schema).locked("import"):
                pass
        assert time.monotonic() - started < 2  # not the wait for a row yet to be written


def test_a_wait_for_the_lock_is_said_once_naming_the_holder(postgres, store, schema):
    notes: list[str] = []
    with store.locked("apply") as held:
        other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=notes.append)
        with pytest.raises(LockHeld):
            with other.locked("import", timeout=0.5):
                pass
    assert notes == [
        f"waiting up to 0.5s for the state lock of environment 'staging', held by {held.describe()}"
    ]


def test_a_ctrl_c_during_the_wait_ends_it_with_nothing_held(postgres, store, schema):
    def interrupt(note: str) -> None:
        raise KeyboardInterrupt  # the Ctrl-C lands while the note is said

    with store.locked("apply") as held:
        other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=interrupt)
        with pytest.raises(LockWaitInterrupted) as stopped:
            with other.locked("import", timeout=30):
                pass
        assert str(stopped.value) == (
            f"interrupted while waiting for the state lock of environment 'staging' (held by "
            f"{held.describe()}); nothing was changed"
        )
        assert stopped.value.exit_code == 130
        assert _session_ends(postgres, "surveyctl lock import")


def test_a_wait_for_the_lock_outlives_a_database_restart(postgres, store, schema):
    # A restart ends every session: the waiter's held nothing, so it connects again and waits
    # on, rather than failing a command told to wait (a CI job queued behind another).
    notes: list[str] = []
    other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=notes.append)
    other.load()  # its state connection, which the restart ends as well
    state_session = other._connection.info.backend_pid
    operation = f"import {schema}"  # names its lock session apart from other tests'
    outcome: dict[str, object] = {}

    def wait() -> None:
        try:
            with other.locked(operation, timeout=30):
                outcome["state"] = sorted(other.load().resources)
        except Exception as exc:  # said by the assertion below
            outcome["error"] = exc

    with store.locked("apply"):
        store.record("Survey/a", survey(1))
        waiter = threading.Thread(target=wait)
        waiter.start()
        _until(lambda: len(notes) == 1)
        rows(
            postgres,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid = %s OR application_name = %s",
            state_session,
            f"surveyctl lock {operation}",
        )
        _until(lambda: len(notes) == 2)
    waiter.join(30)
    other.close()

    assert outcome == {"state": ["Survey/a"]}
    assert notes[1].startswith(
        "lost the connection to the state database of environment 'staging' at "
    ), notes
    assert notes[1].endswith("; connecting again until the wait ends"), notes


def test_a_wait_whose_new_connection_is_refused_the_login_ends_at_once(postgres, store, schema):
    # Trying again helps a server that restarts, not a login it now refuses (a password
    # rotated meanwhile): that is said at once, not after the whole wait.
    role, password = f"w_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex
    store.load()  # the tables
    admin = postgres.admin_dsn.replace("/postgres?", "/surveyctl?")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        connection.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        connection.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}"
        )
    notes: list[str] = []
    other = PostgresStateStore(
        postgres.dsn(user=role, password=password), "staging", schema, on_note=notes.append
    )
    failed: list[Exception] = []

    def wait() -> None:
        try:
            with other.locked(f"import {schema}", timeout=60):
                pass
        except Exception as exc:  # said by the assertion below
            failed.append(exc)

    try:
        with store.locked("apply"):
            waiter = threading.Thread(target=wait)
            waiter.start()
            _until(lambda: len(notes) == 1)
            with psycopg.connect(admin, autocommit=True) as connection:
                connection.execute(f"ALTER ROLE {role} PASSWORD 'rotated-{password}'")
            rows(
                postgres,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                role,
            )
            waiter.join(15)
            assert not waiter.is_alive()
    finally:
        other.close()
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP OWNED BY {role}")
            connection.execute(f"DROP ROLE {role}")

    assert len(failed) == 1 and "refused the login" in str(failed[0]), failed
    assert password not in str(failed[0])


def _until(condition, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def _session_ends(postgres, name: str, within: float = 5.0) -> bool:
    """Whether no session named `name` is left within `within` seconds: a closed connection's
    server process leaves pg_stat_activity a moment after the client has let it go."""
    deadline = time.monotonic() + within
    while applications(postgres).count(name):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_lock_session_is_named_after_the_command_holding_it(postgres, store, schema):
    with store.locked("apply"):
        assert "surveyctl lock apply" in applications(postgres)


def test_a_released_lock_leaves_no_holder_row_behind(postgres, store, schema):
    with store.locked("apply"):
        pass
    assert rows(postgres, f"SELECT lock_id FROM {schema}.locks") == []


def test_the_winners_row_written_a_moment_after_its_lock_is_named(postgres, store, schema):
    session = session_holding(postgres, schema)
    try:
        [(backend,)] = session.execute("SELECT pg_backend_pid()").fetchall()

        def write_row() -> None:
            time.sleep(1)
            session.execute(
                f"INSERT INTO {schema}.locks (environment, lock_id, who, host, pid, operation, "
                "since, backend_pid) VALUES ('staging', 'late-id', 'ci@runner', 'runner', 42, "
                "'apply', '2026-11-25T00:00:00+00:00', %s)",
                (backend,),
            )

        writer = threading.Thread(target=write_row)
        writer.start()
        try:
            with pytest.raises(LockHeld) as refused:
                with store.locked("import"):
                    pass
        finally:
            writer.join()
        assert refused.value.holder.id == "late-id"
        assert "ci@runner (pid 42)" in str(refused.value)
    finally:
        session.close()


def test_a_holder_that_never_writes_its_row_is_named_by_its_session(postgres, store, schema):
    session = session_holding(postgres, schema)
    try:
        [(backend,)] = session.execute("SELECT pg_backend_pid()").fetchall()
        started = time.monotonic()
        with pytest.raises(LockHeld) as refused:
            with store.locked("import"):
                pass
        waited = time.monotonic() - started
    finally:
        session.close()
    assert refused.value.holder.id == f"session-{backend}"
    assert (
        f"locked by a database session that has not said who it is (pid {backend}) since  "
        f"for 'unknown' (lock ID session-{backend})" in str(refused.value)
    )
    assert f"force-unlock session-{backend}`" in str(refused.value)
    assert 3 <= waited < 6  # the holder's row was waited for, a few seconds only


def test_force_unlock_without_a_lock_says_there_is_nothing_to_unlock(store):
    with pytest.raises(LockError) as refused:
        store.force_unlock("any")
    assert str(refused.value) == (
        "the state of environment 'staging' is not locked, so there is nothing to unlock"
    )


def test_force_unlock_with_another_id_names_the_holder(postgres, store, schema):
    with store.locked("apply") as held:
        with pytest.raises(LockError) as refused:
            PostgresStateStore(postgres.dsn(), "staging", schema).force_unlock("wrong-id")
        assert str(refused.value) == (
            f"the lock of environment 'staging' has ID {held.id}, not wrong-id; it is held by "
            f"{held.describe()}"
        )


@contextmanager
def refused_force_unlock_of_a_superusers_session(
    postgres, store, schema: str
) -> Iterator[tuple[str, str]]:
    """`force_unlock` of the lock a superuser's session holds, refused: the refusal and the
    lock's ID, while that session is still open."""
    store.load()  # the tables
    admin = postgres.admin_dsn.replace("/postgres?", "/surveyctl?")
    session = session_holding(postgres, schema, dsn=admin)
    try:
        [(backend,)] = session.execute("SELECT pg_backend_pid()").fetchall()
        with pytest.raises(DatabaseError) as refused:
            store.force_unlock(f"session-{backend}")
        yield str(refused.value), f"session-{backend}"
    finally:
        session.close()


def test_force_unlock_of_a_session_of_a_mightier_role_names_the_missing_right(
    postgres, store, schema
):
    with refused_force_unlock_of_a_superusers_session(postgres, store, schema) as (refusal, held):
        assert refusal.startswith(
            f"the database user surveyctl lacks the rights to end the session holding the lock "
            f"in schema {schema} on the state database of environment 'staging' at "
            f"surveyctl@{postgres.socket_dir}:{postgres.port}/surveyctl: "
        )
        assert store.lock_holder().id == held


def test_force_unlock_refused_the_right_to_end_a_session_names_that_right_not_table_grants(
    postgres, store, schema
):
    # Table grants, which the user has, do not let it end another role's session: the advice
    # must name what does.
    with refused_force_unlock_of_a_superusers_session(postgres, store, schema) as (refusal, _):
        assert refusal.endswith(
            "(it needs to be the database user that holds the lock or a member of its role, or "
            "a member of pg_signal_backend; only a superuser may end a superuser's session)"
        )
        assert "SELECT, INSERT" not in refusal


def test_force_unlock_of_a_session_that_does_not_end_says_so_after_10_seconds(
    postgres, store, schema
):
    store.load()
    session = session_holding(postgres, schema)
    [(backend,)] = session.execute("SELECT pg_backend_pid()").fetchall()
    os.kill(backend, signal.SIGSTOP)  # a server too busy to end it: the SIGTERM waits
    seen: list[str] = []
    looker = threading.Timer(2, lambda: seen.extend(applications(postgres)))
    try:
        looker.start()
        started = time.monotonic()
        with pytest.raises(LockError) as refused:
            store.force_unlock(f"session-{backend}")
        waited = time.monotonic() - started
    finally:
        looker.join()
        os.kill(backend, signal.SIGCONT)
        session.close()
    assert str(refused.value) == (
        "the session holding the lock of environment 'staging' did not end within 10 s"
    )
    assert 10 <= waited < 10.9
    assert "surveyctl force-unlock" in seen  # what a look at the server's sessions shows


def test_a_command_holding_its_lock_may_go_on(postgres, store, schema):
    with store.locked("apply"):
        store.check_lock()  # before a change of the marketplace: nothing to say


def test_a_command_whose_lock_was_forced_is_told_before_its_next_change(postgres, store, schema):
    with store.locked("apply") as held:
        PostgresStateStore(postgres.dsn(), "staging", schema).force_unlock(held.id)
        with pytest.raises(LockLost) as lost:
            store.check_lock()
    assert str(lost.value).startswith(
        f"this command lost the state lock of environment 'staging' in {store.location}: the "
        'database server ended the session that held it ("terminating connection due to '
        'administrator command", as a `force-unlock`, '
    )


def test_a_refusal_without_a_lock_timeout_says_nothing_of_waiting(postgres, store, schema):
    notes: list[str] = []
    with store.locked("apply"):
        other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=notes.append)
        with pytest.raises(LockHeld):
            with other.locked("import"):
                pass
    assert notes == []


def test_a_lock_released_while_its_holder_is_looked_up_is_taken(postgres, store, schema):
    session = session_holding(postgres, schema)
    # The holder lets go before writing its row: the refused command, which waits for that
    # row, finds the lock free and takes it rather than naming nobody.
    releaser = threading.Timer(1, session.close)
    releaser.start()
    try:
        with store.locked("import") as info:
            assert info is not None and store.lock_holder().id == info.id
    finally:
        releaser.join()


def test_force_unlock_leaves_no_holder_row_behind(postgres, store, schema):
    with store.locked("apply") as held:
        PostgresStateStore(postgres.dsn(), "staging", schema).force_unlock(held.id)
        assert rows(postgres, f"SELECT lock_id FROM {schema}.locks") == []


def test_a_released_lock_is_free_the_moment_its_command_lets_go(postgres, store, schema):
    key = advisory_key("state", schema, "staging")
    with psycopg.connect(postgres.dsn(), autocommit=True) as next_command:
        for _ in range(50):  # its session ends a moment after it closes: not a lock to rely on
            with store.locked("apply"):
                pass
            taken = next_command.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            assert taken[0], "the lock was still held after its command released it"
            next_command.execute("SELECT pg_advisory_unlock(%s)", (key,))


def test_a_sigterm_during_the_wait_is_named_with_its_exit_code(postgres, store, schema):
    def terminate(note: str) -> None:
        raise Stopped(signal.SIGTERM)

    with store.locked("apply"):
        other = PostgresStateStore(postgres.dsn(), "staging", schema, on_note=terminate)
        with pytest.raises(LockWaitInterrupted) as stopped:
            with other.locked("import", timeout=30):
                pass
    assert str(stopped.value).startswith(
        "stopped by SIGTERM while waiting for the state lock of environment 'staging' (held by "
    )
    assert stopped.value.exit_code == 143
