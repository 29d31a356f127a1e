"""A `surveyctl apply` waiting for the state lock (`--lock-timeout`) that is interrupted with
Ctrl-C ends at once: one sentence naming the lock and its holder, exit code 130, nothing
changed, no traceback. Run as a real process with a real signal, on both backends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.config import load_config
from surveyctl.state import open_state

from ..reconcile.conftest import Manifests, survey_manifest, survey_title


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch, state_setting) -> Path:
    """A project whose `local` environment is the test sandbox, its state in the backend
    under test, with one survey manifest."""
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY{state_setting}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", "sandbox-buyer-1")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    Manifests(tmp_path).write(survey_manifest("waiting"))
    return tmp_path


def wait_for_lock(project: Path) -> subprocess.Popen:
    """An apply that waits up to a minute for the lock, started once it is waiting: it names
    its environment on stderr just before it takes the lock."""
    process = subprocess.Popen(
        [sys.executable, "-m", "surveyctl", "apply", "manifests", "--auto-approve"]
        + ["--lock-timeout", "60"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    for line in process.stderr:
        if line.startswith("surveyctl: environment"):
            break
    time.sleep(0.5)  # well inside the wait, which polls every 0.1 s
    return process


def test_ctrl_c_while_waiting_for_the_lock_exits_130_naming_the_holder_with_nothing_changed(
    project, sandbox
):
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"))
    try:
        with store.locked("apply"):
            waiting = wait_for_lock(project)
            waiting.send_signal(signal.SIGINT)
            out, err = waiting.communicate(timeout=60)
    finally:
        store.close()

    assert waiting.returncode == 130, out + err
    assert "Error: interrupted while waiting for the state lock of environment 'local'" in err
    assert f"(pid {os.getpid()})" in err and "nothing was changed" in err
    assert "Traceback" not in err and "Aborted!" not in err
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    titles = [survey["survey_title"] for survey in client.list_surveys()]
    client.close()
    assert survey_title("waiting") not in titles
