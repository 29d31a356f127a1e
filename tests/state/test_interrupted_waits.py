"""A `surveyctl apply` waiting for the state lock (`--lock-timeout`) that is interrupted with
Ctrl-C, SIGTERM (a cancelled CI job) or SIGHUP (a closed terminal) ends at once: one sentence
naming the lock and its holder, the shell's exit code for the signal, nothing changed, no
traceback. Run as a real process with a real signal, on both backends."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.config import load_config
from surveyctl.state import open_state

from ..processes import surveyctl
from ..reconcile.conftest import Manifests, survey_manifest, survey_title
from .conftest import local_project


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch, state_setting) -> Path:
    """A project whose `local` environment is the test sandbox, its state in the backend
    under test, with one survey manifest."""
    local_project(tmp_path, sandbox.url, state_setting, monkeypatch)
    Manifests(tmp_path).write(survey_manifest("waiting"))
    return tmp_path


def wait_for_lock(project: Path) -> subprocess.Popen:
    """An apply that waits up to a minute for the lock, once it says it is waiting."""
    process = surveyctl(project, "apply", "manifests", "--auto-approve", "--lock-timeout", "60")
    for line in process.stderr:
        if "waiting up to 60s for the state lock of environment 'local', held by" in line:
            return process  # said once, as the wait begins
    raise AssertionError(f"the apply never said it waits for the lock: {process.communicate()}")


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP"),
    ],
)
def test_a_signal_while_waiting_for_the_lock_exits_with_its_code_naming_the_holder(
    project, sandbox, stop, code, said
):
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"))
    try:
        with store.locked("apply"):
            waiting = wait_for_lock(project)
            waiting.send_signal(stop)
            out, err = waiting.communicate(timeout=60)
    finally:
        store.close()

    assert waiting.returncode == code, out + err
    assert f"Error: {said} while waiting for the state lock of environment 'local'" in err
    assert f"(pid {os.getpid()})" in err and "nothing was changed" in err
    assert "Traceback" not in err and "Aborted!" not in err
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    titles = [survey["survey_title"] for survey in client.list_surveys()]
    client.close()
    assert survey_title("waiting") not in titles
