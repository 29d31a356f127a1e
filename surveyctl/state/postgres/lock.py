"""The lock of an environment's state in PostgreSQL: a session advisory lock plus a holder row.

The lock itself is `pg_try_advisory_lock(key)` on a connection of its own, held for the whole
command. The server drops it when that session ends, so a command killed with `kill -9` (or a
machine that died) leaves no stale lock behind: the next command simply gets it. A row in the
`locks` table names the holder (who, host, pid, operation, lock ID, since, and the session's
backend pid) for the "already locked" message; a row is believed only while its session really
holds the advisory lock, so a row left by a killed holder says nothing.

`force_unlock(ID)` ends the holder's session with `pg_terminate_backend` (only when the ID
matches), for a command that hangs rather than dies; that command's next write is refused,
because every write checks that its lock is still the one recorded.
"""

from __future__ import annotations

import threading
import time

import psycopg
from psycopg import sql

from surveyctl.state.lock import (
    POLL_SECONDS,
    LockError,
    LockHeld,
    LockInfo,
    LockLost,
    lock_lost,
    wait_interrupted,
    waiting_note,
)
from surveyctl.state.notes import Note
from surveyctl.state.postgres.database import DatabaseError, Dsn
from surveyctl.state.postgres.schema import advisory_key

# How long a refused command waits for the winner's holder row to be committed (the winner
# writes it right after taking the advisory lock).
_ROW_WAIT_SECONDS = 3.0
# What ending the holder's session takes (pg_terminate_backend), docs/state.md.
_SIGNAL_RIGHTS = (
    "to be the database user that holds the lock or a member of its role, or a member of "
    "pg_signal_backend; only a superuser may end a superuser's session"
)
# How often a wait whose database session ended tries to connect again.
_RECONNECT_SECONDS = 0.5


class AdvisoryLock:
    """The lock of one environment's state in one schema."""

    def __init__(self, dsn: Dsn, schema: str, environment: str):
        self.dsn = dsn
        self.schema = schema
        self.environment = environment
        self.key = advisory_key("state", schema, environment)
        self._connection: psycopg.Connection | None = None
        self.info: LockInfo | None = None
        # Whether the wait connected again: the session that ended was not the lock's alone.
        self.reconnected = False
        # What ended the lock's session, in the server's words, once a probe found it ended.
        self._how_it_ended: str | None = None
        # Parallel writes probe at once: the first to meet the ended session closes the
        # connection before it has said how it ended; one at a time, the others read that.
        self._probing = threading.Lock()

    def acquire(
        self,
        operation: str,
        timeout: float = 0.0,
        on_note: Note | None = None,
        actor: str | None = None,
    ) -> LockInfo:
        """Takes the lock, waiting up to `timeout` seconds (said once to `on_note`); LockHeld
        naming the holder."""
        connection = self.dsn.connect(f"lock {operation}")
        deadline = time.monotonic() + max(timeout, 0.0)
        waiting = False
        try:
            while True:
                try:
                    taken = connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))
                    if taken.fetchone()[0]:
                        self.info = self._record(connection, operation, actor)
                        self._connection = connection
                        return self.info
                    if time.monotonic() >= deadline:
                        holder = self._wait_for_holder(connection)
                        if holder is not None:
                            raise LockHeld(self._held_message(holder, timeout), holder)
                        continue  # released in the meantime: try again
                except psycopg.OperationalError as exc:
                    if not connection.closed or time.monotonic() >= deadline:
                        raise
                    # The session ended (a database restart, a dropped connection): it held
                    # nothing, so a command asked to wait connects again and waits on.
                    connection = self._reconnect(operation, exc, deadline, on_note)
                    self.reconnected = True
                    continue
                try:  # the note too: a Ctrl-C that answers it is still one during the wait
                    if not waiting and on_note is not None:
                        waiting = True
                        holder = self._holder_if_known(connection)
                        on_note(waiting_note(self.environment, holder, timeout))
                    time.sleep(POLL_SECONDS)
                except KeyboardInterrupt as stop:
                    holder = self._holder_if_known(connection)
                    raise wait_interrupted(self.environment, holder, stop) from None
        except psycopg.Error as exc:
            connection.close()
            raise self.dsn.error(exc, "take the state lock", self.schema) from None
        except BaseException:
            connection.close()
            raise

    def _reconnect(
        self, operation: str, lost: psycopg.Error, deadline: float, on_note: Note | None
    ) -> psycopg.Connection:
        """A new connection for a wait whose session ended, tried every `_RECONNECT_SECONDS`
        while the server cannot be reached, until `deadline` (a restart takes seconds); the
        last failure once the wait is over, and a refused login at once."""
        if on_note is not None:
            on_note(
                f"{self.dsn.error(lost, 'wait for the state lock', self.schema)}; connecting "
                "again until the wait ends"
            )
        while True:
            try:
                time.sleep(_RECONNECT_SECONDS)
            except KeyboardInterrupt as stop:
                raise wait_interrupted(self.environment, None, stop) from None
            try:
                return self.dsn.connect(f"lock {operation}")
            except DatabaseError as failed:
                if not failed.unreachable or time.monotonic() >= deadline:
                    raise

    def release(self) -> None:
        """Drops the lock and its row; a lock already ended by a force-unlock is just closed."""
        connection, info = self._connection, self.info
        self._connection, self.info = None, None
        if connection is None or info is None:
            return
        try:
            connection.execute(
                sql.SQL("DELETE FROM {}.locks WHERE environment = %s AND lock_id = %s").format(
                    sql.Identifier(self.schema)
                ),
                (self.environment, info.id),
            )
            connection.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
        except psycopg.Error:
            pass  # the session is gone, and with it the lock
        finally:
            connection.close()

    def check(self, where: str) -> None:
        """LockLost (naming `where` the state is) when the session holding the lock has ended
        (a force-unlock, a server restart, a dropped connection)."""
        if self._connection is None or self.info is None:
            return
        ended, how = self._probe()
        if ended:
            raise lock_lost(self.environment, where, False, how)

    def lost(self, where: str) -> LockLost:
        """What a state write refused for want of this lock says, with what ended the lock's
        session in the server's words when its connection tells: "terminating connection due
        to idle-session timeout" points at the role's settings, "administrator command" at a
        force-unlock or a restart, where the bare fact sent a person looking at surveyctl."""
        return lock_lost(self.environment, where, True, self._probe()[1])

    def _probe(self) -> tuple[bool, str | None]:
        """Whether the lock's session has ended (a round trip on its connection tells: a
        session-level advisory lock lives exactly as long as its session), and what ended it."""
        with self._probing:
            return self._probe_once()

    def _probe_once(self) -> tuple[bool, str | None]:
        connection = self._connection
        if connection is None:
            return False, None
        if connection.closed:
            # Probed before: a closed connection now says only that it is closed.
            return True, self._how_it_ended
        try:
            connection.execute("SELECT 1")
        except psycopg.Error as exc:
            self._how_it_ended = self.dsn.ended(exc, "the session that held it")
            return True, self._how_it_ended
        return False, None

    def still_held_sql(self) -> tuple[sql.Composed, tuple[object, ...]]:
        """A query, for the write transaction, that returns a row while the lock row is this
        command's and its session still holds the advisory lock: a row left by a session
        that ended (the server restarted) proves nothing."""
        query = sql.SQL(
            "SELECT 1 FROM {}.locks l WHERE l.environment = %s AND l.lock_id = %s AND EXISTS "
            "(SELECT 1 FROM pg_locks p WHERE p.locktype = 'advisory' AND p.granted "
            "AND p.pid = l.backend_pid AND p.classid = %s AND p.objid = %s AND p.objsubid = 1)"
        ).format(sql.Identifier(self.schema))
        lock_id = self.info.id if self.info is not None else ""
        high, low = (self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF
        return query, (self.environment, lock_id, high, low)

    def holder(self, connection: psycopg.Connection) -> LockInfo | None:
        """Who holds the lock now: the row of the session that really holds it, or a stand-in
        naming that session when it has not written its row yet."""
        backend = self._holding_backend(connection)
        if backend is None:
            return None
        row = connection.execute(
            sql.SQL(
                "SELECT lock_id, operation, who, host, pid, since FROM {}.locks "
                "WHERE environment = %s AND backend_pid = %s"
            ).format(sql.Identifier(self.schema)),
            (self.environment, backend),
        ).fetchone()
        if row is None:
            return LockInfo(
                id=f"session-{backend}",
                operation="unknown",
                who="a database session that has not said who it is",
                host="",
                pid=backend,
                created="",
            )
        return LockInfo(
            id=row[0], operation=row[1], who=row[2], host=row[3], pid=row[4], created=row[5]
        )

    def force_unlock(self, lock_id: str) -> LockInfo:
        """Ends the session holding the lock when its ID is `lock_id`; returns who held it."""
        connection = self.dsn.connect("force-unlock")
        try:
            holder = self.holder(connection)
            if holder is None:
                raise LockError(
                    f"the state of environment {self.environment!r} is not locked, so there is "
                    "nothing to unlock"
                )
            if holder.id != lock_id:
                raise LockError(
                    f"the lock of environment {self.environment!r} has ID {holder.id}, not "
                    f"{lock_id}; it is held by {holder.describe()}"
                )
            backend = self._holding_backend(connection)
            if backend is not None:
                connection.execute("SELECT pg_terminate_backend(%s)", (backend,))
                self._wait_until_free(connection)
            connection.execute(
                sql.SQL("DELETE FROM {}.locks WHERE environment = %s AND lock_id = %s").format(
                    sql.Identifier(self.schema)
                ),
                (self.environment, lock_id),
            )
            return holder
        except psycopg.Error as exc:
            # Ending another's session is no right on the tables: table grants would not help.
            raise self.dsn.error(
                exc, "end the session holding the lock", self.schema, needs=_SIGNAL_RIGHTS
            ) from None
        finally:
            connection.close()

    def _record(
        self, connection: psycopg.Connection, operation: str, actor: str | None
    ) -> LockInfo:
        info = LockInfo.mine(operation, actor)
        connection.execute(
            sql.SQL(
                "INSERT INTO {}.locks (environment, lock_id, who, host, pid, operation, since, "
                "backend_pid) VALUES (%s, %s, %s, %s, %s, %s, %s, pg_backend_pid()) "
                "ON CONFLICT (environment) DO UPDATE SET lock_id = excluded.lock_id, "
                "who = excluded.who, host = excluded.host, pid = excluded.pid, "
                "operation = excluded.operation, since = excluded.since, "
                "backend_pid = excluded.backend_pid"
            ).format(sql.Identifier(self.schema)),
            (
                self.environment,
                info.id,
                info.who,
                info.host,
                info.pid,
                info.operation,
                info.created,
            ),
        )
        return info

    def _holding_backend(self, connection: psycopg.Connection) -> int | None:
        # A bigint advisory key shows in pg_locks as classid (high half), objid (low half),
        # objsubid 1.
        row = connection.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s AND objid = %s AND objsubid = 1 AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())",
            ((self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF),
        ).fetchone()
        return None if row is None else int(row[0])

    def _holder_if_known(self, connection: psycopg.Connection) -> LockInfo | None:
        """The holder for a message, when it can be read (None otherwise)."""
        try:
            return self.holder(connection)
        except psycopg.Error:
            return None

    def _wait_for_holder(self, connection: psycopg.Connection) -> LockInfo | None:
        """The holder, once its row is committed (or after a short wait, the stand-in);
        None when nobody holds the lock any more."""
        deadline = time.monotonic() + _ROW_WAIT_SECONDS
        while True:
            holder = self.holder(connection)
            if holder is None or holder.operation != "unknown" or time.monotonic() > deadline:
                return holder
            time.sleep(POLL_SECONDS)

    def _wait_until_free(self, connection: psycopg.Connection) -> None:
        deadline = time.monotonic() + 10
        while self._holding_backend(connection) is not None:
            if time.monotonic() > deadline:
                raise LockError(
                    f"the session holding the lock of environment {self.environment!r} did "
                    "not end within 10 s"
                )
            time.sleep(POLL_SECONDS)

    def _held_message(self, holder: LockInfo, timeout: float) -> str:
        waited = f" after waiting {timeout:g}s" if timeout > 0 else ""
        return (
            f"the state of environment {self.environment!r} is locked{waited} by "
            f"{holder.describe()} (PostgreSQL {self.dsn.describe()}, schema {self.schema}); wait "
            "for it (or pass --lock-timeout SECONDS); a command that was killed has already "
            "released it, and one that hangs can be stopped with "
            f"`surveyctl --env {self.environment} force-unlock {holder.id}`"
        )
