"""SIGTERM (a cancelled CI job) during the writes of a real `surveyctl apply`, on both state
backends: the writes in flight finish and are recorded, the lock is released, the exit code is
143, and the next apply finishes the rest without creating any survey twice."""

from __future__ import annotations

import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.config import load_config
from surveyctl.sandbox.process import served as serve_in_process
from surveyctl.state import open_state

from ..processes import signal_after_creates, surveyctl
from ..reconcile.conftest import Manifests, survey_manifest, survey_title
from .conftest import local_project

SURVEYS = 16
LATENCY_MS = 150


@pytest.fixture(scope="module")
def slow_url(tmp_path_factory):
    """A sandbox in a process of its own whose every answer takes LATENCY_MS."""
    db = tmp_path_factory.mktemp("terminated") / "sandbox.db"
    with serve_in_process(db, latency_ms=LATENCY_MS) as sandbox:
        yield sandbox.url


@pytest.fixture
def project(tmp_path: Path, slow_url, monkeypatch, state_setting) -> Path:
    local_project(tmp_path, slow_url, state_setting, monkeypatch)
    manifests = Manifests(tmp_path)
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"term-{number:02d}"))
    return tmp_path


def terminate_after_creates(project: Path, creates: int) -> subprocess.CompletedProcess:
    """Runs `surveyctl apply` and sends it SIGTERM once `creates` creates were reported."""
    process = surveyctl(project, "apply", "manifests", "--auto-approve", "--parallelism", "4")
    out, err = signal_after_creates(process, creates, signal.SIGTERM)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_sigterm_during_the_writes_records_them_releases_the_lock_and_the_rerun_converges(
    project, slow_url, run_cli
):
    stopped = terminate_after_creates(project, 3)

    assert stopped.returncode == 143, stopped.stdout + stopped.stderr
    assert "Apply interrupted:" in stopped.stdout
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"))
    try:
        assert store.lock_holder() is None
        state = store.load()
    finally:
        store.close()
    assert state.journal == {}  # every create in flight got its answer and its record
    assert 3 <= len(state.resources) < SURVEYS

    rerun = run_cli("apply", "manifests", "--auto-approve")
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    client = ApiClient(slow_url, "sandbox-buyer-1", retries=0)
    titles = Counter(survey["survey_title"] for survey in client.list_surveys())
    client.close()
    made = [titles[survey_title(f"term-{number:02d}")] for number in range(SURVEYS)]
    assert made == [1] * SURVEYS
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0
