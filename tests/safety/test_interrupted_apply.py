"""An interrupted apply finishes the writes in flight, records them, sends nothing new,
reports what was and was not done, and exits as a shell reports the signal: 130 for SIGINT
(Ctrl-C), 143 for SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from surveyctl.api import ApiClient
from surveyctl.state import FileStateStore

from ..processes import signal_after_creates, surveyctl
from .conftest import configure, survey_manifest, write_manifest

SURVEYS = 50


def _apply(project, *args: str, env: dict | None = None, **popen) -> subprocess.Popen:
    command = ("apply", "manifests", "--auto-approve", *args)
    env = {"SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1", **(env or {})}
    return surveyctl(project, *command, env=env, **popen)


@pytest.fixture
def fifty_surveys(project, served_sandbox):
    """50 survey manifests and a project aimed at a sandbox, in its own process, that answers
    every request after 150 ms."""
    url = served_sandbox(latency_ms=150)
    configure(project, url)
    for index in range(SURVEYS):
        write_manifest(project, survey_manifest(f"tracker-{index:02d}"))
    return url


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_apply_leaves_state_consistent_with_the_service(
    project, fifty_surveys, run_cli, number
):
    process = _apply(project, "--parallelism", "4")
    out, err = signal_after_creates(process, 5, number)

    assert process.returncode == 128 + number, out + err
    assert f"{signal.Signals(number).name} received: the writes in flight finish" in err
    assert "Apply interrupted:" in out and "not attempted (interrupted):" in out
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    recorded = {record.ps_survey_id for record in state.resources.values()}
    with ApiClient(fifty_surveys, "sandbox-buyer-1") as client:
        live = {s["ps_survey_id"] for s in client.list_surveys()}
    assert recorded <= live  # nothing in state that the service lacks
    assert len(live - recorded) <= len(state.journal)  # every survey made is known
    assert 5 <= len(recorded) < SURVEYS
    assert state.journal == {}  # the creates in flight finished and were resolved

    plan = run_cli("plan", "manifests", "--format", "json")
    summary = json.loads(plan.stdout)["summary"]
    assert (summary["add"], summary["change"], summary["destroy"]) == (
        SURVEYS - len(recorded),
        0,
        0,
    )


def test_an_interrupted_apply_releases_the_lock_and_the_next_apply_finishes(
    project, fifty_surveys, run_cli
):
    process = _apply(project, "--parallelism", "8")
    signal_after_creates(process, 3, signal.SIGINT)
    assert process.returncode == 130
    result = run_cli("apply", "manifests", "--auto-approve", "--parallelism", "16")
    assert result.exit_code == 0, result.stdout + result.stderr
    with ApiClient(fifty_surveys, "sandbox-buyer-1") as client:
        assert len(client.list_surveys()) == SURVEYS
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_an_apply_interrupted_while_planning_changes_nothing_and_releases_the_lock(
    project, served_sandbox, run_cli
):
    url = served_sandbox(latency_ms=500)
    configure(project, url)
    for index in range(10):
        write_manifest(project, survey_manifest(f"tracker-{index}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    for index in range(10):
        write_manifest(project, survey_manifest(f"tracker-{index}", survey_title="Renamed"))
    # One GET at a time at 500 ms each: the plan takes 5 s, the signal comes 1 s into it.
    process = _apply(project, "--parallelism", "1")
    for line in process.stderr:
        if line.startswith("surveyctl: environment"):
            break
    time.sleep(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 130, out + err
    assert "apply interrupted before any change; nothing was applied" in err
    with ApiClient(url, "sandbox-buyer-1") as client:
        titles = {s["survey_title"] for s in client.list_surveys()}
    assert "Renamed" not in titles
    assert FileStateStore(project / ".surveyctl" / "state" / "local.json").lock_holder() is None


def _apply_on_a_terminal(project) -> subprocess.Popen:
    """`surveyctl apply` with a pseudo-terminal for its input, so that it asks; returned once
    the question is on its stderr."""
    leader, follower = os.openpty()
    key = {"SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1"}
    process = surveyctl(project, "apply", "manifests", env=key, stdin=follower, text=False)
    os.close(follower)
    process.terminal = leader  # kept open until the process ends
    shown = b""
    while b"Only 'yes' will be accepted" not in shown:
        chunk = os.read(process.stderr.fileno(), 4096)
        assert chunk, shown.decode()
        shown += chunk
    # The question is written before the read begins; a signal in between would be seen only
    # once a line is typed (Python checks for signals when the read is interrupted).
    time.sleep(0.5)
    return process


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_at_the_question_applies_nothing_and_exits_128_plus_its_number(
    project, sandbox, number
):
    write_manifest(project, survey_manifest("asked"))
    process = _apply_on_a_terminal(project)
    process.send_signal(number)
    _, err = process.communicate(timeout=60)
    os.close(process.terminal)

    assert process.returncode == 128 + number, err.decode()
    assert "apply interrupted before any change; nothing was applied" in err.decode()
    assert "Aborted!" not in err.decode()
    assert FileStateStore(project / ".surveyctl" / "state" / "local.json").lock_holder() is None
    with ApiClient(sandbox.url, "sandbox-buyer-1") as client:
        titles = {s["survey_title"] for s in client.list_surveys()}
    assert survey_manifest("asked")["spec"]["survey_title"] not in titles


def test_the_question_goes_to_stderr_so_an_apply_redirected_to_a_file_still_asks(project, sandbox):
    write_manifest(project, survey_manifest("redirected"))
    process = _apply_on_a_terminal(project)  # returns once the question is on its stderr
    os.write(process.terminal, b"no\n")
    out, _ = process.communicate(timeout=60)
    os.close(process.terminal)

    assert process.returncode == 1
    assert "Plan: 1 to add" in out.decode()
    assert "will be accepted" not in out.decode()


def _take_as_controlling_terminal() -> None:
    """In the child, after setsid: fd 0 (the pseudo-terminal) becomes its controlling
    terminal, so that closing the terminal hangs the session up, as closing a window does."""
    import fcntl
    import termios

    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_an_apply_whose_terminal_closes_finishes_and_records_the_writes_in_flight(
    project, fifty_surveys, run_cli
):
    leader, follower = os.openpty()
    terminal = {"stdin": follower, "stdout": follower, "stderr": follower}
    process = _apply(
        project,
        "--parallelism",
        "4",
        env={"TERM": "dumb"},
        start_new_session=True,
        preexec_fn=_take_as_controlling_terminal,
        **terminal,
    )
    os.close(follower)
    shown = b""
    while shown.count(b": create ok") < 5:
        chunk = os.read(leader, 4096)
        assert chunk, shown.decode()
        shown += chunk
    os.close(leader)  # the window closes: SIGHUP, and the terminal is gone
    process.wait(timeout=120)

    # Not killed where it stood: it finished the writes in flight and recorded them, although
    # nothing it printed after the hang-up could be written to the terminal.
    assert process.returncode == 129, shown.decode()
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    recorded = {record.ps_survey_id for record in state.resources.values()}
    with ApiClient(fifty_surveys, "sandbox-buyer-1") as client:
        live = {s["ps_survey_id"] for s in client.list_surveys()}
    assert state.journal == {} and recorded == live
    assert 5 <= len(recorded) < SURVEYS
    result = run_cli("plan", "manifests", "--format", "json")
    assert json.loads(result.stdout)["summary"]["add"] == SURVEYS - len(recorded)


def _ignore_hangups() -> None:
    """In the child before it starts, as `nohup` does."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_an_apply_started_with_nohup_outlives_the_hang_up_and_makes_every_write(
    project, fifty_surveys
):
    process = _apply(project, "--parallelism", "4", preexec_fn=_ignore_hangups)
    out, err = signal_after_creates(process, 5, signal.SIGHUP)

    assert process.returncode == 0, out + err
    assert f"Apply complete! Resources: {SURVEYS} added" in out
    with ApiClient(fifty_surveys, "sandbox-buyer-1") as client:
        assert len(client.list_surveys()) == SURVEYS
