"""The PostgreSQL backend: team state in a schema of an existing database.

One row per managed resource and per create in flight, so a write touches the rows of the
addresses it changes; every write is one transaction that first moves the environment's serial
from the value this command read to the next one (`UPDATE ... WHERE serial = %s`), so a write
based on a stale read is refused and the other writer's change is kept, never overwritten; the
same transaction adds a row per changed address to `history`. The lock is an advisory lock on a
connection of its own (`lock` in this package). Tables are created on first use (`schema`).
The DSN is read from the variable the configuration names and is never part of a message
(`database`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import psycopg
from psycopg import sql

from surveyctl.state.changes import Change, Edit, Entry
from surveyctl.state.lock import LockInfo, LockLost, lock_lost
from surveyctl.state.notes import Note
from surveyctl.state.postgres import DEFAULT_SCHEMA
from surveyctl.state.postgres.database import DatabaseError, Dsn
from surveyctl.state.postgres.lock import AdvisoryLock
from surveyctl.state.postgres.schema import SCHEMA_VERSION, SchemaTooNew, ensure_schema
from surveyctl.state.records import (
    FORMAT_VERSION,
    State,
    StateError,
    SurveyPlace,
    survey_place,
)
from surveyctl.state.status_changes import MARK, StatusChange, from_parts, is_status_change
from surveyctl.state.store import StoreBase


class PostgresStateStore(StoreBase):
    """The state of one environment in a PostgreSQL schema (see the module docstring)."""

    def __init__(
        self,
        dsn: str | Dsn,
        environment: str,
        schema: str = DEFAULT_SCHEMA,
        on_note: Note | None = None,
        dsn_variable: str = "the DSN",
        defaults: dict[str, str] | None = None,
    ):
        super().__init__(environment, on_note)
        self.dsn = (
            dsn
            if isinstance(dsn, Dsn)
            else Dsn.parse(dsn, environment, dsn_variable, defaults or {})
        )
        self.schema = schema
        self._connection: psycopg.Connection | None = None
        self._lock: AdvisoryLock | None = None  # checked by every write while it is held

    @property
    def location(self) -> str:
        return f"PostgreSQL {self.dsn.describe()} (schema {self.schema})"

    # Connection and tables.

    def _connected(self) -> psycopg.Connection:
        if self._connection is None or self._connection.closed:
            connection = self.dsn.connect(f"state {self.environment}")
            try:
                ensure_schema(connection, self.schema)
            except SchemaTooNew as exc:
                connection.close()
                raise DatabaseError(
                    f"the state tables in schema {self.schema} of {self.dsn.describe()} were "
                    f"made by a newer surveyctl (layout {exc.found}, this one knows "
                    f"{SCHEMA_VERSION}); upgrade surveyctl"
                ) from None
            except psycopg.Error as exc:
                connection.close()
                raise self.dsn.error(exc, "create the state tables", self.schema) from None
            self._connection = connection
        return self._connection

    def _sql(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    # The lock.

    @contextmanager
    def locked(self, operation: str, timeout: float = 0.0) -> Iterator[LockInfo]:
        """Holds the environment's advisory lock for the block (see `postgres.lock`)."""
        with self._mutex:
            self._connected()  # tables first: the lock writes its row into them
        lock = AdvisoryLock(self.dsn, self.schema, self.environment)
        info = lock.acquire(operation, timeout, self._note, self.actor)
        try:
            with self._mutex:
                if lock.reconnected and self._connection is not None:
                    # What ended the waiting session (a restart) ended this one too.
                    self._connection.close()
                    self._connection = None
                self._state = None  # read afresh now that nobody else writes
                self._operation = operation
                self._lock = lock
            yield info
        finally:
            with self._mutex:
                self._operation = None
                self._lock = None
            lock.release()

    def check_lock(self) -> None:
        lock = self._lock
        if lock is not None:
            lock.check(self.location)

    def lock_holder(self) -> LockInfo | None:
        with self._mutex:
            connection = self._connected()
            try:
                return AdvisoryLock(self.dsn, self.schema, self.environment).holder(connection)
            except psycopg.Error as exc:
                raise self.dsn.error(exc, "read the state lock", self.schema) from None

    def force_unlock(self, lock_id: str) -> LockInfo:
        with self._mutex:
            self._connected()
        return AdvisoryLock(self.dsn, self.schema, self.environment).force_unlock(lock_id)

    # Reading.

    def _read(self) -> State:
        data = self._snapshot("SELECT address, record FROM {s}.resources WHERE environment = %s")
        return State.empty() if data is None else State.from_json(data, self.location)

    def _survey_place(self, survey_id: int) -> SurveyPlace:
        """Reads of each record its field names alone, and in full only those that hold the
        survey's id (see `survey_place`): the server picks them out, so a state of 1,000
        surveys is not sent over the wire to record one status change."""
        data = self._snapshot(_SURVEY_FIELDS, (survey_id,))
        if data is None:
            return SurveyPlace("", 0, None)
        return survey_place(data, survey_id, self.location)

    def _snapshot(self, resources_sql: str, params: tuple = ()) -> dict | None:
        """The stored state as `State.from_json` takes it, its records as `resources_sql`
        (with `params`, then the environment) reads them; None when there is none yet."""
        connection = self._connected()
        try:
            with connection.transaction():
                # One snapshot for the three reads, whatever commits meanwhile.
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                head = connection.execute(
                    self._sql(
                        "SELECT lineage, serial, format_version FROM {s}.states "
                        "WHERE environment = %s"
                    ),
                    (self.environment,),
                ).fetchone()
                if head is None:
                    return None
                resources = connection.execute(
                    self._sql(resources_sql), (*params, self.environment)
                ).fetchall()
                journal = connection.execute(
                    self._sql(
                        "SELECT address, started_at, fingerprint FROM {s}.journal "
                        "WHERE environment = %s"
                    ),
                    (self.environment,),
                ).fetchall()
        except psycopg.Error as exc:
            raise self.dsn.error(exc, "read the state", self.schema) from None
        return {
            "format_version": head[2],
            "lineage": head[0],
            "serial": head[1],
            "resources": {address: record for address, record in resources},
            "journal": {
                address: {"address": address, "started_at": started, "fingerprint": digest}
                for address, started, digest in journal
            },
        }

    # Writing.

    def _persist(self, change: Change, state: State) -> None:
        connection = self._connected()
        try:
            with connection.transaction():
                # The lock first: a command that lost it is told so, not that the state moved.
                if not self._still_locked(connection):
                    raise _LockGone()
                if not self._advance(connection, change, state):
                    raise _Refused()
                for edit in change.edits:
                    self._store_edit(connection, edit, change.serial)
                self._add_history(connection, [change])
        except _Refused:
            raise self._refusal(connection, state) from None
        except _LockGone:
            raise self._lost() from None
        except psycopg.Error as exc:
            raise self.dsn.error(exc, "write the state", self.schema) from None

    def _lost(self) -> LockLost:
        """The refusal of a write whose lock is gone, saying what ended it when it can."""
        lock = self._lock
        if lock is None:
            return lock_lost(self.environment, self.location)
        return lock.lost(self.location)

    def _still_locked(self, connection: psycopg.Connection) -> bool:
        """True while this command holds no lock, or the lock it took is still its own."""
        lock = self._lock
        if lock is None:
            return True
        query, params = lock.still_held_sql()
        return connection.execute(query, params).fetchone() is not None

    def _advance(self, connection: psycopg.Connection, change: Change, state: State) -> bool:
        """Moves the serial from the one this command read to the next, when it still is."""
        if state.serial == 0:
            moved = connection.execute(
                self._sql(
                    "INSERT INTO {s}.states (environment, lineage, serial, format_version) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (environment) DO NOTHING RETURNING serial"
                ),
                (self.environment, change.lineage, change.serial, FORMAT_VERSION),
            ).fetchone()
        else:
            moved = connection.execute(
                self._sql(
                    "UPDATE {s}.states SET serial = %s, updated_at = now() "
                    "WHERE environment = %s AND lineage = %s AND serial = %s RETURNING serial"
                ),
                (change.serial, self.environment, change.lineage, state.serial),
            ).fetchone()
        return moved is not None

    def _store_edit(self, connection: psycopg.Connection, edit: Edit, serial: int) -> None:
        after = edit.after or Entry()
        key = (self.environment, edit.address)
        if after.record is not None:
            connection.execute(
                self._sql(_PUT_RESOURCE), (*key, _json(after.record.to_json()), serial)
            )
        elif edit.before is not None and edit.before.record is not None:
            connection.execute(
                self._sql("DELETE FROM {s}.resources WHERE environment = %s AND address = %s"),
                key,
            )
        if after.pending is not None:
            connection.execute(
                self._sql(_PUT_PENDING),
                (*key, after.pending.started_at, after.pending.fingerprint, serial),
            )
        elif edit.before is not None and edit.before.pending is not None:
            connection.execute(
                self._sql("DELETE FROM {s}.journal WHERE environment = %s AND address = %s"),
                key,
            )

    def _add_history(self, connection: psycopg.Connection, changes: list[Change]) -> None:
        """Adds the history rows of `changes` in one batch (pipelined: a state of 5,000
        changes is not 5,000 round trips to a server that may be far away)."""
        rows = [row for change in changes for row in _rows_of(self.environment, change)]
        if rows:
            with connection.cursor() as cursor:
                cursor.executemany(self._sql(_ADD_HISTORY), rows)

    def _refusal(self, connection: psycopg.Connection, state: State) -> StateError:
        try:
            row = connection.execute(
                self._sql("SELECT lineage, serial FROM {s}.states WHERE environment = %s"),
                (self.environment,),
            ).fetchone()
        except psycopg.Error as exc:
            return self.dsn.error(exc, "write the state", self.schema)
        where = f"the state of environment {self.environment!r} in {self.location}"
        there = "no state" if row is None else f"serial {row[1]}"
        return StateError(
            f"{where} changed since this command read it ({there} there, serial "
            f"{state.serial} here): the write was refused so that the other change is not "
            "lost; run the command again"
        )

    def restore(self, state: State, changes: list[Change]) -> None:
        """Replaces the state by `state` and the history by `changes` (a migration), in one
        transaction that is refused if the stored state moved since it was read."""
        with self._mutex:
            read = self._loaded()
            connection = self._connected()
            try:
                with connection.transaction():
                    if not self._still_locked(connection):
                        raise _LockGone()
                    if not self._take_over(connection, read, state):
                        raise _Refused()
                    for table in ("resources", "journal"):
                        connection.execute(
                            self._sql(f"DELETE FROM {{s}}.{table} WHERE environment = %s"),
                            (self.environment,),
                        )
                    # Status changes are no part of the state: those recorded here are kept
                    # (a migration adds the source's after this).
                    connection.execute(
                        self._sql(
                            "DELETE FROM {s}.history WHERE environment = %s "
                            f"AND (after IS NULL OR after -> '{MARK}' IS NULL)"
                        ),
                        (self.environment,),
                    )
                    self._put_all(connection, state)
                    self._add_history(connection, changes)
            except _Refused:
                raise self._refusal(connection, read) from None
            except _LockGone:
                raise self._lost() from None
            except psycopg.Error as exc:
                raise self.dsn.error(exc, "write the state", self.schema) from None
            self._state = state.copy()

    def _put_all(self, connection: psycopg.Connection, state: State) -> None:
        """Stores every record and create in flight of `state` in two batches (pipelined, as
        the history: a round trip each made a migration of 5,000 surveys 10,000 of them)."""
        key, serial = self.environment, state.serial
        records = [
            (key, address, _json(record.to_json()), serial)
            for address, record in state.resources.items()
        ]
        pending = [
            (key, address, entry.started_at, entry.fingerprint, serial)
            for address, entry in state.journal.items()
        ]
        with connection.cursor() as cursor:
            for text, rows in ((_PUT_RESOURCE, records), (_PUT_PENDING, pending)):
                if rows:
                    cursor.executemany(self._sql(text), rows)

    def _take_over(self, connection: psycopg.Connection, read: State, state: State) -> bool:
        if read.serial == 0:
            return self._advance(connection, _head(state), read)
        moved = connection.execute(
            self._sql(
                "UPDATE {s}.states SET lineage = %s, serial = %s, updated_at = now() "
                "WHERE environment = %s AND lineage = %s AND serial = %s RETURNING serial"
            ),
            (state.lineage, state.serial, self.environment, read.lineage, read.serial),
        ).fetchone()
        return moved is not None

    # History.

    def changes(self, address: str | None = None, upto: int | None = None) -> list[Change]:
        return _group(self._history_rows(address, upto), self.location)

    def _history_records(
        self, address: str | None = None
    ) -> tuple[list[Change], list[StatusChange]]:
        """The writes and the status changes of `history` (of `address`), from one query: both
        are rows of that table. The status changes come in serial order, each serial's in the
        order recorded, as `history` lists them."""
        rows = self._history_rows(address)
        return _group(rows, self.location), self._status_of(
            (lineage, serial, at, who, command, after)
            for lineage, serial, at, who, command, _, _, after in rows
            if is_status_change(after)
        )

    def _history_rows(self, address: str | None = None, upto: int | None = None) -> list[tuple]:
        """The rows of `history` (of `address`, up to serial `upto`) in serial order."""
        query = (
            "SELECT lineage, serial, at, who, command, address, before, after FROM {s}.history "
            "WHERE environment = %s"
        )
        params: list[object] = [self.environment]
        if address is not None:
            query += " AND address = %s"
            params.append(address)
        if upto is not None:
            query += " AND serial <= %s"
            params.append(upto)
        with self._mutex:
            connection = self._connected()
            try:
                rows = connection.execute(self._sql(query + " ORDER BY serial, id"), params)
                return rows.fetchall()
            except psycopg.Error as exc:
                raise self.dsn.error(exc, "read the state history", self.schema) from None

    def _append_status(self, changes: list[StatusChange]) -> None:
        """Inserts the rows of status changes in one transaction of their own: no advisory
        lock (an apply holding it does not hold them up), no serial moved."""
        rows = [row for change in changes for row in _rows_of(self.environment, change)]
        with self._mutex:
            connection = self._connected()
            try:
                with connection.transaction(), connection.cursor() as cursor:
                    cursor.executemany(self._sql(_ADD_HISTORY), rows)
            except psycopg.Error as exc:
                raise self.dsn.error(exc, "write the state history", self.schema) from None

    def status_changes(self, address: str | None = None) -> list[StatusChange]:
        query = (
            "SELECT lineage, serial, at, who, command, after FROM {s}.history "
            # `before IS NULL` first: most rows are updates, whose `after` need not be parsed.
            f"WHERE environment = %s AND before IS NULL AND after -> '{MARK}' IS NOT NULL"
        )
        params: list[object] = [self.environment]
        if address is not None:
            query += " AND address = %s"
            params.append(address)
        with self._mutex:
            connection = self._connected()
            try:
                rows = connection.execute(self._sql(query + " ORDER BY id"), params).fetchall()
            except psycopg.Error as exc:
                raise self.dsn.error(exc, "read the state history", self.schema) from None
        return self._status_of(rows)

    def _status_of(self, rows: Iterable[tuple]) -> list[StatusChange]:
        """The status changes of history rows (lineage, serial, at, who, command, after)."""
        found = (
            from_parts(lineage, serial, _at(at), who, command, after, self.location)
            for lineage, serial, at, who, command, after in rows
        )
        return [change for change in found if change is not None]

    def close(self) -> None:
        with self._mutex:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


# Each record as `survey_place` needs it: in full when it holds the survey's id (or is no JSON
# object, which `survey_place` refuses as a full read does), else its field names alone, as an
# object whose values are null (never the id). `record` is json, not jsonb: its text is kept as
# written, so the id is compared as jsonb (10001 and 10001.0 alike, as Python compares them).
_SURVEY_FIELDS = (
    "SELECT address, CASE WHEN json_typeof(record) <> 'object' "
    "OR (starts_with(address, 'Survey/') "
    "AND (record -> 'ps_survey_id')::jsonb = to_jsonb(%s::bigint)) THEN record "
    "ELSE (SELECT coalesce(json_object_agg(key, NULL), '{{}}') "
    "FROM json_object_keys(record) AS key) END "
    "FROM {s}.resources WHERE environment = %s"
)
_PUT_RESOURCE = (
    "INSERT INTO {s}.resources (environment, address, record, serial) "
    "VALUES (%s, %s, %s, %s) ON CONFLICT (environment, address) "
    "DO UPDATE SET record = excluded.record, serial = excluded.serial"
)
_PUT_PENDING = (
    "INSERT INTO {s}.journal (environment, address, started_at, fingerprint, "
    "serial) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (environment, address) "
    "DO UPDATE SET started_at = excluded.started_at, "
    "fingerprint = excluded.fingerprint, serial = excluded.serial"
)
_ADD_HISTORY = (
    "INSERT INTO {s}.history (environment, lineage, serial, address, at, who, "
    "command, before, after) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


class _Refused(Exception):
    """The serial moved: the transaction is rolled back."""


class _LockGone(Exception):
    """The command's lock is no longer its own: the transaction is rolled back."""


def _head(state: State) -> Change:
    """A change that only carries the lineage and serial of `state` (to create its row)."""
    return Change(state.lineage, state.serial, "", "", "", ())


def _rows_of(environment: str, change: Change | StatusChange) -> list[tuple]:
    """The `history` rows of a write or a status change: its history line (the one shape both
    share, `surveyctl.state.history_line`), one row per address, in `_ADD_HISTORY`'s order."""
    line = change.to_json()
    return [
        (
            environment,
            line["lineage"],
            line["serial"],
            item["address"],
            line["at"] or None,  # a baseline's (no time) is NULL, read back as ""
            line["who"],
            line["command"],
            None if item["before"] is None else _json(item["before"]),
            None if item["after"] is None else _json(item["after"]),
        )
        for item in line["changes"]
    ]


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _at(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).isoformat(timespec="seconds")


def _group(rows: list[tuple], source: str) -> list[Change]:
    """History rows, one per address, back into one Change per serial."""
    changes: list[Change] = []
    for lineage, serial, at, who, command, address, before, after in rows:
        if is_status_change(after):
            continue  # a status change, not a write (status_changes reads it)
        edit = Edit(
            address,
            None if before is None else Entry.from_json(address, before, source),
            None if after is None else Entry.from_json(address, after, source),
        )
        last = changes[-1] if changes else None
        if last is not None and (last.lineage, last.serial, last.command) == (
            lineage,
            serial,
            command,
        ):
            changes[-1] = Change(
                last.lineage, last.serial, last.at, last.who, last.command, (*last.edits, edit)
            )
        else:
            changes.append(Change(lineage, serial, _at(at), who, command, (edit,)))
    return changes
