"""The test suite's PostgreSQL (tests/postgres_cluster.py, the `postgres` fixture) goes when the
process that started it goes, however it goes: a run stopped by SIGTERM (a CI timeout,
`timeout`, a mutation run) or SIGKILL runs no fixture teardown, and its server would otherwise
run for ever. Each test starts the cluster in a process of its own, through the fixture's code,
and ends that process."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psycopg
import pytest

from surveyctl.processes import process_running

from .. import postgres_cluster

ROOT = Path(__file__).resolve().parents[2]
GONE_WITHIN = 10.0  # seconds

# Starts the cluster as the fixture does, says where it is, and waits to be ended.
HOLDER = textwrap.dedent(
    """
    import json, time
    from tests import postgres_cluster

    cluster = postgres_cluster.start()
    print(json.dumps({"pid": cluster.pid, "folder": str(cluster.folder),
                      "dsn": cluster.postgres.admin_dsn}), flush=True)
    time.sleep(600)
    """
)

# A test of a pytest run that uses the fixture: says where its cluster is, and waits.
HOLDING_TEST = textwrap.dedent(
    """
    import json, os, time
    from pathlib import Path

    import psycopg

    def test_holds_the_cluster(postgres):
        with psycopg.connect(postgres.admin_dsn) as connection:
            data = Path(connection.execute("SHOW data_directory").fetchone()[0])
        Path(os.environ["HOLDER_INFO"]).write_text(json.dumps({
            "worker": os.getpid(), "dsn": postgres.admin_dsn,
            "pid": int((data / "postmaster.pid").read_text().split()[0]),
            "folder": str(data.parent)}))
        time.sleep(600)
    """
)


def _started_holder() -> tuple[subprocess.Popen, dict]:
    """A process holding a cluster, once the cluster answers, and what it said of it; the
    leader of a process group of its own, as a test run under `timeout` is."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    ready, _, _ = select.select([holder.stdout], [], [], 120)
    line = holder.stdout.readline() if ready else ""
    if not line:
        holder.kill()
        raise AssertionError(f"the cluster did not start (exit {holder.wait()})")
    cluster = json.loads(line)
    with psycopg.connect(cluster["dsn"], connect_timeout=5) as connection:
        assert connection.execute("SELECT 1").fetchone() == (1,)  # else "gone" proves nothing
    return holder, cluster


def _gone(cluster: dict) -> bool:
    """Whether the server is gone, its socket answers no more and its folder is removed."""
    if process_running(cluster["pid"], None, None) or Path(cluster["folder"]).exists():
        return False
    try:
        psycopg.connect(cluster["dsn"], connect_timeout=2).close()
    except psycopg.OperationalError:
        return True
    return False


def _wait_until_gone(cluster: dict) -> float:
    """Seconds until the cluster is gone; fails past GONE_WITHIN."""
    started = time.monotonic()
    while not _gone(cluster):
        if time.monotonic() - started > GONE_WITHIN:
            raise AssertionError(f"the server {cluster['pid']} still runs")
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.fixture
def holder():
    """A process holding a cluster; killed afterwards should the test not end it."""
    started = []

    def start():
        process, cluster = _started_holder()
        started.append(process)
        return process, cluster

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


def test_the_cluster_stops_when_its_process_is_ended_by_sigterm(holder):
    process, cluster = holder()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == -signal.SIGTERM  # no Python cleanup ran
    _wait_until_gone(cluster)


def test_the_cluster_stops_when_its_whole_process_group_is_killed(holder):
    process, cluster = holder()
    os.killpg(process.pid, signal.SIGKILL)  # as `timeout -s KILL` does: the watcher too, were
    assert process.wait(timeout=10) == -signal.SIGKILL  # it in the group
    _wait_until_gone(cluster)


def test_the_cluster_stops_when_its_process_is_ended_by_sigkill(holder):
    process, cluster = holder()
    process.kill()
    assert process.wait(timeout=10) == -signal.SIGKILL
    _wait_until_gone(cluster)


def test_a_cluster_stopped_by_its_process_leaves_no_watcher():
    cluster = postgres_cluster.start()
    cluster.stop()
    assert cluster.watcher.process.returncode == 0
    assert not cluster.folder.exists()
    assert not process_running(cluster.pid, None, None)


def test_the_cluster_of_a_pytest_worker_stops_when_the_worker_is_killed(tmp_path):
    (tmp_path / "test_holding.py").write_text(HOLDING_TEST, encoding="utf-8")
    info = tmp_path / "cluster.json"
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest"]
        + ["-n", "1", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "HOLDER_INFO": str(info)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not info.exists() or not info.read_text():
            if run.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the run held no cluster: {run.communicate()[0]}")
            time.sleep(0.2)
        cluster = json.loads(info.read_text())
        os.kill(cluster["worker"], signal.SIGKILL)
        _wait_until_gone(cluster)
    finally:
        run.kill()
        run.communicate()
