"""While a plan's reads are in flight the interpreter switches threads often, so that a read's
worker takes its answer soon after it arrives; the plan leaves the setting as it found it."""

from __future__ import annotations

import sys

import pytest

from surveyctl.reconcile import reads
from surveyctl.reconcile.reads import READ_SWITCH_INTERVAL_S, LiveReads
from surveyctl.state import State


@pytest.fixture
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's default
    yield 0.005
    sys.setswitchinterval(before)


def test_reads_in_flight_switch_threads_at_least_every_fifth_of_a_millisecond(default_interval):
    with LiveReads(None, State.empty(), parallelism=2):
        assert sys.getswitchinterval() <= READ_SWITCH_INTERVAL_S <= 0.0002


def test_the_first_reads_of_a_process_switch_threads_often_until_they_end(default_interval):
    switching = reads._FastSwitching()  # as a new process has it: made when reads.py loads
    switching.open()
    try:
        assert sys.getswitchinterval() <= READ_SWITCH_INTERVAL_S
    finally:
        switching.close()
    assert sys.getswitchinterval() == pytest.approx(default_interval)


def test_the_switch_interval_is_given_back_when_the_reads_end(default_interval):
    with LiveReads(None, State.empty(), parallelism=2):
        pass
    assert sys.getswitchinterval() == pytest.approx(default_interval)


def test_the_switch_interval_is_given_back_when_the_plan_fails(default_interval):
    with pytest.raises(RuntimeError), LiveReads(None, State.empty(), parallelism=2):
        raise RuntimeError("the plan failed")
    assert sys.getswitchinterval() == pytest.approx(default_interval)


def test_a_shorter_interval_set_by_the_caller_is_kept(default_interval):
    sys.setswitchinterval(0.0001)
    with LiveReads(None, State.empty(), parallelism=2):
        assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.05)
    assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.05)


def test_reads_of_two_plans_ended_out_of_order_keep_the_interval_until_both_ended(
    default_interval,
):
    first = LiveReads(None, State.empty(), parallelism=2)
    second = LiveReads(None, State.empty(), parallelism=2)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first: not nested

    assert sys.getswitchinterval() <= READ_SWITCH_INTERVAL_S
    second.__exit__(None, None, None)
    assert sys.getswitchinterval() == pytest.approx(default_interval)
