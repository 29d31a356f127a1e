"""The connection to a PostgreSQL state database: the DSN kept secret, and its failures said in
one sentence that names the environment and the host, never the password.

The DSN comes only from the environment variable that `surveyctl.yaml` names (libpq
`key=value` form or a `postgresql://` URL). It is parsed once, by libpq itself through psycopg,
to know the host, port, database and user for messages; the password is never printed, and any
server text quoted in a message is scrubbed of it first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg
from psycopg import conninfo, errors

from surveyctl.api.secrets import remember
from surveyctl.state.records import StateError

# Sent to the server so that `pg_stat_activity` says who holds a session.
APPLICATION_NAME = "surveyctl"
# Without these a killed client's session on a half-open TCP connection (a laptop that left
# the network) would keep its advisory lock for the OS default of about two hours.
_KEEPALIVES = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
}
_CONNECT_TIMEOUT = "10"
# Timeouts a DBA may set for a role or a database (`ALTER ROLE surveyctl SET
# idle_session_timeout = '60s'`) that end a session of surveyctl's, or cancel its statement, in
# the middle of a command: the lock's session sits idle for the whole apply (and while a person
# reads the plan), the state's between its writes. Each is a setting any user may change for
# the session, so surveyctl turns them off for its own; one the server lacks
# (idle_session_timeout came with PostgreSQL 14, transaction_timeout with 17) is not asked for.
SESSION_TIMEOUTS = (
    "idle_session_timeout",
    "idle_in_transaction_session_timeout",
    "statement_timeout",
    "transaction_timeout",
)
# The SQLSTATEs of a session the server ended for a timeout, and for an administrator's
# command (pg_terminate_backend, a force-unlock, a shutdown) or a crash.
_TIMED_OUT = {"57P05", "25P03", "25P04"}
_TERMINATED = {"57P01", "57P02"}
# What a user refused a right on the state tables needs (docs/state.md).
_TABLE_RIGHTS = (
    "USAGE and CREATE on the schema, or CREATE on the database for the first use, and SELECT, "
    "INSERT, UPDATE, DELETE on its tables"
)


class DatabaseError(StateError):
    """The state database could not be reached, refused the login, or refused an operation."""

    # True when the server could not be reached (down, restarting): worth trying again, where
    # a refused login or a refused right is not.
    unreachable = False


class Unreachable(DatabaseError):
    """The state database could not be reached."""

    unreachable = True


@dataclass(frozen=True)
class Dsn:
    """A connection string and what may be said of it (host, port, database, user)."""

    value: str
    environment: str
    host: str
    port: str
    dbname: str
    user: str
    password: str
    variable: str = "the DSN"  # where the string came from, for a message about its settings

    @classmethod
    def parse(
        cls, value: str, environment: str, variable: str, defaults: dict[str, str] | None = None
    ) -> Dsn:
        """`value` read as libpq reads it; `defaults` are libpq's variables (PGHOST, ...,
        surveyctl.variables.libpq_defaults) for what the string leaves out."""
        defaults = defaults or {}
        # Every error and traceback a person sees passes through `redact` (the API key's
        # net): the DSN and its password are caught there too, whatever quotes them.
        remember(value)
        try:
            params = conninfo.conninfo_to_dict(value)
        except psycopg.ProgrammingError:
            # libpq's message may quote the string, password included: it is not repeated.
            raise DatabaseError(
                f"${variable} of environment {environment!r} is not a PostgreSQL connection "
                "string (use `host=... dbname=... user=...` or `postgresql://user@host/db`)"
            ) from None
        if _credentials_spill(value):
            # libpq would take a piece of the password for the host, port or database, which
            # every message names (and its own errors quote): it is refused before that.
            raise DatabaseError(
                f"${variable} of environment {environment!r} is a URL whose user name or "
                "password holds a `/` or an `@` as it is, which ends that part early, so the "
                "rest of it would be read as the host or the database: write it percent-encoded "
                "(`/` as %2F, `@` as %40), or use the `host=... user=... password=...` form"
            )
        password = params.get("password") or defaults.get("PGPASSWORD") or ""
        remember(password)
        return cls(
            value=value,
            environment=environment,
            host=params.get("host") or defaults.get("PGHOST") or "localhost",
            port=params.get("port") or defaults.get("PGPORT") or "5432",
            dbname=params.get("dbname") or defaults.get("PGDATABASE") or "",
            user=params.get("user") or defaults.get("PGUSER") or "",
            password=password,
            variable=f"${variable}" if variable.isidentifier() else variable,
        )

    def describe(self) -> str:
        """`user@host:port/dbname`, without the password."""
        user = f"{self.user}@" if self.user else ""
        return f"{user}{self.host}:{self.port}/{self.dbname}"

    def redact(self, text: str) -> str:
        """`text` with the password (and the whole DSN) replaced by `***`."""
        for secret in (self.value, self.password):
            if secret:
                text = text.replace(secret, "***")
        return text

    def connect(self, purpose: str) -> psycopg.Connection:
        """An autocommit connection; DatabaseError in one sentence when there is none."""
        given = conninfo.conninfo_to_dict(self.value)
        extra = {key: value for key, value in _KEEPALIVES.items() if key not in given}
        extra.setdefault("connect_timeout", given.get("connect_timeout") or _CONNECT_TIMEOUT)
        try:
            connection = psycopg.connect(
                self.value,
                autocommit=True,
                application_name=f"{APPLICATION_NAME} {purpose}",
                **extra,
            )
        except psycopg.Error as exc:
            raise self.error(exc, "connect") from None
        try:
            connection.execute(
                "SELECT set_config(name, '0', false) FROM pg_settings WHERE name = ANY(%s)",
                (list(SESSION_TIMEOUTS),),
            )
        except psycopg.Error as exc:
            connection.close()
            raise self.error(exc, "connect") from None
        return connection

    def error(
        self,
        exc: psycopg.Error,
        action: str,
        schema: str | None = None,
        needs: str = _TABLE_RIGHTS,
    ) -> DatabaseError:
        """One sentence for a failure of `action` on the state database; `needs` is what a
        refused right asks for (the tables' rights, unless the action needs another)."""
        where = f"the state database of environment {self.environment!r} at {self.describe()}"
        reason = self.redact(_reason(exc))
        if isinstance(exc, errors.InsufficientPrivilege):
            on = f" in schema {schema}" if schema else ""
            return DatabaseError(
                f"the database user {self.user or '(default)'} lacks the rights to {action}{on} "
                f"on {where}: {reason} (it needs {needs})"
            )
        if action == "connect" and _is_bad_setting(reason):
            # libpq refused the string before connecting: nothing was reached or refused.
            return DatabaseError(
                f"{self.variable} of environment {self.environment!r} has a setting PostgreSQL "
                f"does not accept: {reason}; correct the connection string"
            )
        if _is_login_refusal(exc, reason):
            return DatabaseError(f"{where} refused the login: {reason}")
        if isinstance(exc, psycopg.OperationalError) and action == "connect":
            return Unreachable(f"cannot reach {where}: {reason}")
        if isinstance(exc, psycopg.OperationalError):
            said = self.ended(exc, "the session") or reason
            return DatabaseError(f"lost the connection to {where} while trying to {action}: {said}")
        return DatabaseError(f"{where} refused to {action}: {reason}")

    def ended(self, exc: psycopg.Error, session: str) -> str | None:
        """What ended `session` when its next statement failed with `exc`, in the server's
        words, and where to look; None when `exc` says nothing of it."""
        said = self.redact(_reason(exc))
        state = getattr(getattr(exc, "diag", None), "sqlstate", None)
        if state in _TIMED_OUT:
            return (
                f'the database server ended {session} ("{said}", for a timeout set for the '
                "database user or the database: `SELECT * FROM pg_db_role_setting` lists them)"
            )
        if state in _TERMINATED:
            return (
                f'the database server ended {session} ("{said}", as a `force-unlock`, a '
                "`pg_terminate_backend` or a server shutdown does: the server's log says which, "
                "and `pg_stat_activity` shows the sessions now)"
            )
        if isinstance(exc, psycopg.OperationalError) and state is None:
            return (
                f'the connection to the database server was lost ("{said}": a server restart '
                "or crash, or the network; the server's log says which)"
            )
        return None


def _credentials_spill(value: str) -> bool:
    """Whether a `postgresql://` URL has a user name or password with a `/` or `@` that is not
    percent-encoded. libpq ends the credentials at the first `@` or `/`: after a `/` in the
    password the rest of it becomes the database (`u:pa/ss@h/db`: host `u`, port `pa`,
    database `ss@h/db`), and after an `@` the host (`u:pa@ss@h`: host `ss@h`). Either way an
    `@` is left where none can be, in the database name before the query or in the host."""
    scheme, found, rest = value.partition("://")
    if not found or scheme not in ("postgresql", "postgres"):
        return False
    end = next((i for i, char in enumerate(rest) if char in "@/"), None)
    if end is None:
        return False
    after = rest[end + 1 :]
    if rest[end] == "/":
        return "@" in after.split("?", 1)[0]
    return "@" in re.split(r"[/?]", after, maxsplit=1)[0]


def _reason(exc: psycopg.Error) -> str:
    """The server's or libpq's own words, on one line."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    if primary:
        return primary.strip()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    # "connection failed: connection to server at "h", port 5432 failed: FATAL:  reason"
    text = text.rsplit("failed: ", 1)[-1].removeprefix("connection is bad: ")
    return text.replace("FATAL:", "").strip() or type(exc).__name__


# What libpq and the server say when they answer but will not let the user in.
_LOGIN_REFUSALS = (
    "authentication failed",
    "no pg_hba.conf entry",
    "does not exist",  # the role or the database
    "no password supplied",
    "permission denied for database",
)


def _is_bad_setting(reason: str) -> bool:
    """Whether libpq (or psycopg) refused a value of the connection string before trying to
    connect: `invalid sslmode value: "bogus"`, `invalid port number: "99999"`, `invalid integer
    value "x" for connection option "keepalives"`, `bad value for connect_timeout: 'abc'`."""
    lowered = reason.lower()
    if lowered.startswith("bad value for "):
        return True
    return lowered.startswith("invalid ") and ("value" in lowered or "port number" in lowered)


def _is_login_refusal(exc: psycopg.Error, reason: str) -> bool:
    if isinstance(exc, errors.InvalidAuthorizationSpecification | errors.InvalidPassword):
        return True
    lowered = reason.lower()
    return isinstance(exc, psycopg.OperationalError) and any(
        marker in lowered for marker in _LOGIN_REFUSALS
    )
