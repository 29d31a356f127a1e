"""The tables of the PostgreSQL backend, created on first use in the configured schema.

One schema holds the state of every environment that names it, keyed by environment:

| table | one row per |
|---|---|
| `schema_version` | (one row) the layout of these tables, so a later release can migrate |
| `states` | environment: its lineage and serial |
| `resources` | managed resource: its record as JSON, and the serial that last wrote it |
| `journal` | create in flight (sent, answer not yet recorded) |
| `history` | address changed by a write: serial, when, who, command, before and after |
| `locks` | lock holder: who, host, pid, operation, lock ID, since, database session |

Bodies are `json`, not `jsonb`: the text is kept as written, so `state show` prints a
`last_applied` body in the order it was applied, as the file backend does.
"""

from __future__ import annotations

import hashlib

import psycopg
from psycopg import errors, sql

SCHEMA_VERSION = 2
# Version 1 checked each address against the kinds of its day; a new resource kind must not need
# a schema change, so version 2 leaves addresses to the state records (surveyctl.state.records).
_MIGRATIONS = {
    2: (
        "ALTER TABLE {schema}.resources DROP CONSTRAINT IF EXISTS resources_address_check",
        "ALTER TABLE {schema}.journal DROP CONSTRAINT IF EXISTS journal_address_check",
    ),
}

_TABLES = """
CREATE TABLE {schema}.schema_version (version integer NOT NULL);
CREATE TABLE {schema}.states (
    environment text PRIMARY KEY,
    lineage text NOT NULL,
    serial bigint NOT NULL CHECK (serial >= 0),
    format_version integer NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE {schema}.resources (
    environment text NOT NULL REFERENCES {schema}.states ON DELETE CASCADE,
    address text NOT NULL,
    record json NOT NULL,
    serial bigint NOT NULL,
    PRIMARY KEY (environment, address)
);
CREATE TABLE {schema}.journal (
    environment text NOT NULL REFERENCES {schema}.states ON DELETE CASCADE,
    address text NOT NULL,
    started_at text NOT NULL,
    fingerprint text NOT NULL,
    serial bigint NOT NULL,
    PRIMARY KEY (environment, address)
);
CREATE TABLE {schema}.history (
    id bigserial PRIMARY KEY,
    environment text NOT NULL,
    lineage text NOT NULL,
    serial bigint NOT NULL,
    address text NOT NULL,
    at timestamptz,
    who text NOT NULL,
    command text NOT NULL,
    before json,
    after json
);
CREATE INDEX ON {schema}.history (environment, address, serial);
CREATE INDEX ON {schema}.history (environment, serial);
CREATE TABLE {schema}.locks (
    environment text PRIMARY KEY,
    lock_id text NOT NULL,
    who text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    operation text NOT NULL,
    since text NOT NULL,
    backend_pid integer NOT NULL
);
"""


class SchemaTooNew(Exception):
    """The tables were made by a newer surveyctl."""

    def __init__(self, found: int):
        super().__init__(found)
        self.found = found


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for `parts` (stable across processes and releases)."""
    digest = hashlib.sha256("\x1f".join(("surveyctl", *parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def ensure_schema(connection: psycopg.Connection, schema: str) -> None:
    """Creates the tables in `schema` when they are not there yet; SchemaTooNew when they were
    made by a later release. Two first users at once are serialised by an advisory lock."""
    found = _version(connection, schema)
    if found is None:
        with connection.transaction():
            connection.execute(
                "SELECT pg_advisory_xact_lock(%s)", (advisory_key("schema", schema),)
            )
            found = _version(connection, schema, savepoint=True)
            if found is None:
                _create(connection, schema)
                found = SCHEMA_VERSION
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(found)
    if found < SCHEMA_VERSION:
        _migrate(connection, schema)


def _migrate(connection: psycopg.Connection, schema: str) -> None:
    """Brings an older layout up to SCHEMA_VERSION, one version at a time, under the same
    advisory lock as the creation (two first users of a new release migrate once)."""
    name = sql.Identifier(schema)
    try:
        with connection.transaction():
            connection.execute(
                "SELECT pg_advisory_xact_lock(%s)", (advisory_key("schema", schema),)
            )
            found = _version(connection, schema, savepoint=True) or SCHEMA_VERSION
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    connection.execute(sql.SQL(statement).format(schema=name))
                connection.execute(
                    sql.SQL("INSERT INTO {}.schema_version (version) VALUES (%s)").format(name),
                    (version,),
                )
    except errors.InsufficientPrivilege:
        # A user with row rights only (docs/state.md) cannot alter the tables. Version 1 still
        # holds every kind this release has; the tables' owner migrates them on a later run.
        return


def _version(connection: psycopg.Connection, schema: str, savepoint: bool = False) -> int | None:
    query = sql.SQL("SELECT max(version) FROM {}.schema_version").format(sql.Identifier(schema))
    try:
        if savepoint:
            with connection.transaction():
                row = connection.execute(query).fetchone()
        else:
            row = connection.execute(query).fetchone()
    except (errors.UndefinedTable, errors.InvalidSchemaName):
        return None
    return None if row is None or row[0] is None else int(row[0])


def _create(connection: psycopg.Connection, schema: str) -> None:
    name = sql.Identifier(schema)
    exists = connection.execute(
        "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
    ).fetchone()
    if exists is None:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(name))
    for statement in _TABLES.split(";"):
        if statement.strip():
            connection.execute(sql.SQL(statement.strip()).format(schema=name))
    connection.execute(
        sql.SQL("INSERT INTO {}.schema_version (version) VALUES (%s)").format(name),
        (SCHEMA_VERSION,),
    )
