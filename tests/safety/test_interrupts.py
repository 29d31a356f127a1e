"""SIGINT, SIGTERM and SIGHUP while a command writes: before the writes they stop it at once, during
them they only stop new writes, and the handlers of before are back afterwards."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from surveyctl import signals as stops
from surveyctl.safety import Interrupted, Interrupts

from ..reconcile.proxies import HoldingProxy
from .conftest import configure, survey_manifest, survey_title, write_manifest

STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _send(number: int) -> None:
    os.kill(os.getpid(), number)


@pytest.mark.parametrize("number", STOPS, ids=[signal.Signals(n).name for n in STOPS])
def test_a_signal_before_the_writes_stops_the_command_at_once_with_its_exit_code(number):
    with pytest.raises(KeyboardInterrupt), Interrupts() as signals:
        _send(number)
    assert not signals.stop.is_set()
    assert signals.exit_code == 128 + number


@pytest.mark.parametrize(
    ("number", "said"),
    [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")],
)
def test_the_stop_a_signal_raises_before_the_writes_carries_the_signal(number, said):
    # What the root handler reads to say what stopped the command and to exit with its code.
    with pytest.raises(stops.Stopped) as stopped, Interrupts():
        _send(number)
    assert stops.exit_code(stopped.value) == 128 + number
    assert stops.describe(stopped.value) == said


@pytest.mark.parametrize("number", STOPS, ids=[signal.Signals(n).name for n in STOPS])
def test_a_signal_during_the_writes_only_asks_them_to_stop(number):
    told: list[tuple[str, bool]] = []
    with Interrupts(lambda name, first: told.append((name, first))) as signals:
        signals.finish_in_flight()
        _send(number)
        _send(number)
        stopped = signals.stop.is_set()
    name = signal.Signals(number).name
    assert stopped and told == [(name, True), (name, False)]


def test_a_hang_up_during_the_writes_points_the_terminal_at_dev_null(monkeypatch):
    # The writes in flight are then finished and reported: to a terminal that is gone, the
    # report would fail.
    leader, follower = os.openpty()
    monkeypatch.setattr(stops, "_TERMINAL_FDS", [follower])
    try:
        with Interrupts() as signals:
            signals.finish_in_flight()
            _send(signal.SIGHUP)
        null = os.stat(os.devnull)
        shown_on = os.fstat(follower)
        assert (shown_on.st_dev, shown_on.st_ino) == (null.st_dev, null.st_ino)
    finally:
        os.close(follower)
        os.close(leader)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_apply_shows_its_plan_applies_nothing_and_says_so(project, api, number):
    from surveyctl.cli.context import CliContext
    from surveyctl.reconcile.apply_run import apply_run
    from surveyctl.reconcile.run import ApplyHooks, RunOptions

    write_manifest(project, survey_manifest("tracker"))
    options = RunOptions(targets=(Path("manifests"),))
    workspace = CliContext().workspace(options)
    hooks = ApplyHooks(show=lambda plan: _send(number), confirm=lambda environment: True)
    with pytest.raises(Interrupted) as interrupted:
        apply_run(workspace, options, hooks)
    assert str(interrupted.value) == "apply interrupted before any change; nothing was applied"
    assert interrupted.value.exit_code == 128 + number
    assert survey_title("tracker") not in {s["survey_title"] for s in api.list_surveys()}


def test_a_signal_during_the_writes_without_a_listener_still_stops_them():
    with Interrupts() as signals:
        signals.finish_in_flight()
        _send(signal.SIGTERM)
    assert signals.stop.is_set()


def test_the_handlers_of_before_are_back_afterwards():
    before = {number: signal.getsignal(number) for number in Interrupts.SIGNALS}
    with Interrupts():
        assert signal.getsignal(signal.SIGINT) is not before[signal.SIGINT]
    assert {number: signal.getsignal(number) for number in Interrupts.SIGNALS} == before


def test_outside_the_main_thread_it_leaves_signals_alone():
    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def run():
        with Interrupts() as signals:
            seen.append(signal.getsignal(signal.SIGTERM))
            signals.finish_in_flight()
        seen.append(signals.stop.is_set())

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [before, False]


def test_a_hang_up_that_nohup_ignores_stays_ignored_whatever_the_command():
    from surveyctl.cli.waiting import StopRequests
    from surveyctl.signals import stop_like_ctrl_c

    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        stop_like_ctrl_c()
        with Interrupts():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        with StopRequests():  # sandbox serve, state try-postgres
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]  # still handled
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


class SignalAtTheFirstCreate(HoldingProxy):
    """Sends this process `number` when the first survey create arrives, and holds that create
    long enough for the signal to be handled first: the apply is stopped with one write in
    flight, so with a parallelism of 1 every later write is one it did not attempt."""

    held_s = 0.3

    def __init__(self, upstream: str, number: int):
        self.number = number
        self.creates = 0
        super().__init__(upstream)

    def holds(self, environ) -> bool:
        return (environ["REQUEST_METHOD"], environ.get("PATH_INFO")) == (
            "POST",
            "/buyers/v2/surveys",
        )

    def arrived(self, environ) -> None:
        self.creates += 1
        if self.creates == 1:
            _send(self.number)


NAMES = ("alpha", "bravo", "charlie", "delta")


@pytest.fixture
def stopping(project, sandbox, request):
    """The project's marketplace behind a SignalAtTheFirstCreate of the test's `number`, with a
    manifest for each of NAMES."""
    proxy = SignalAtTheFirstCreate(sandbox.url, request.getfixturevalue("number"))
    configure(project, proxy.url)
    for name in NAMES:
        write_manifest(project, survey_manifest(name))
    yield proxy
    proxy.stop()


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_writes_ends_the_apply_interrupted_naming_what_it_did_not_attempt(
    stopping, run_cli, api, number
):
    # One write at a time: only the one in flight when the signal came is made. A second
    # worker would have started the next write before the signal, and made it too.
    result = run_cli("apply", "manifests", "--auto-approve", "--parallelism", "1")
    assert result.exit_code == 128 + number, result.stdout + result.stderr
    assert "Apply interrupted: 1 done, 0 failed, 3 not attempted." in result.stdout
    not_attempted = ", ".join(f"Survey/{name}" for name in NAMES[1:])
    assert f"  not attempted (interrupted): {not_attempted}\n" in result.stdout
    made = {survey["survey_title"] for survey in api.list_surveys()}
    assert [name for name in NAMES if survey_title(name) in made] == ["alpha"]
