"""SIGINT, SIGTERM and SIGHUP while a command writes: before the writes they stop it at once, during
them they only stop new writes, and the handlers of before are back afterwards."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from surveyctl.safety import Interrupts

STOPS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _send(number: int) -> None:
    os.kill(os.getpid(), number)


@pytest.mark.parametrize("number", STOPS, ids=[signal.Signals(n).name for n in STOPS])
def test_a_signal_before_the_writes_stops_the_command_at_once_with_its_exit_code(number):
    with pytest.raises(KeyboardInterrupt), Interrupts() as signals:
        _send(number)
    assert not signals.stop.is_set()
    assert signals.exit_code == 128 + number


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
