"""The PostgreSQL backend: team state in a schema of an existing database (`store`), with its
advisory lock (`lock`), its tables (`schema`) and its connection string kept secret
(`database`).

Its settings: `state: {backend: postgres, dsn_env: VARIABLE, schema: NAME}`. The connection
string is read from the variable `dsn_env` names, never from a file. psycopg is imported only
when a store is opened, so those who keep their state in a file never load it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveyctl.config_checks import absent, is_variable_name, unset_variable
from surveyctl.errors import ConfigError
from surveyctl.state.registry import Backend, SettingsSpec, register

if TYPE_CHECKING:
    from surveyctl.config import Config
    from surveyctl.state.postgres.store import PostgresStateStore

NAME = "postgres"
DEFAULT_SCHEMA = "surveyctl"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class PostgresSettings:
    """Where the state is: the variable holding the connection string, and the schema."""

    dsn_env: str
    schema: str = DEFAULT_SCHEMA
    backend: str = NAME


def _settings(spec: SettingsSpec) -> PostgresSettings:
    dsn_env = spec.values.get("dsn_env")
    schema = spec.values.get("schema", DEFAULT_SCHEMA)
    if dsn_env is None:
        raise spec.error(
            "dsn_env",
            "is missing: name the variable that holds the PostgreSQL connection string (such "
            "as SURVEYCTL_STATE_DSN)",
        )
    if not is_variable_name(dsn_env):
        # The value is never repeated: it may be the connection string itself.
        raise spec.error(
            "dsn_env",
            "must name the variable that holds the PostgreSQL connection string (letters, "
            "digits and underscores, such as SURVEYCTL_STATE_DSN), never the string itself",
        )
    # fullmatch: `$` of match() also takes a name that ends in a line break.
    if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
        raise spec.error(
            "schema", "must be a lowercase PostgreSQL name (letters, digits, underscores)"
        )
    if is_system_schema(schema):
        raise spec.error(
            "schema",
            f"names {schema}, which PostgreSQL keeps for itself (pg_* and information_schema "
            "are its own, and no user may keep tables there); choose a schema of the "
            "project's own, such as brand_trackers",
        )
    return PostgresSettings(dsn_env, schema)


def is_system_schema(schema: str) -> bool:
    """Whether PostgreSQL keeps `schema` for itself: it refuses to create a schema named
    pg_* ("unacceptable schema name") and information_schema belongs to the superuser, so a
    state there fails on its first write with the server's words instead of one sentence."""
    return schema.startswith("pg_") or schema == "information_schema"


def _open(settings: PostgresSettings, config: Config, environment: str) -> PostgresStateStore:
    # Imported here: psycopg is loaded only by those who keep their state in PostgreSQL.
    from surveyctl.state.postgres.store import PostgresStateStore

    dsn = config.variable(settings.dsn_env)
    if not dsn:
        raise ConfigError(
            f"the PostgreSQL state of environment {environment!r} needs its connection "
            f"string in {unset_variable(settings.dsn_env, 'dsn_env')}, which {absent(dsn)}"
        )
    return PostgresStateStore(
        dsn,
        environment,
        settings.schema,
        dsn_variable=settings.dsn_env,
        defaults=config.libpq_defaults(),
    )


register(Backend(NAME, ("dsn_env", "schema"), _settings, _open))

__all__ = ["DEFAULT_SCHEMA", "PostgresSettings", "is_system_schema"]
