"""An adjustment interrupted in flight leaves a record: journalled before it is sent, settled
when its answer comes; SIGINT, SIGTERM and SIGHUP wait for the answer, and a SIGKILL's lost
answer is shown by the next `adjust` of its transactions, which sends nothing again unless
told to."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .conftest import JOURNAL, SLOW_MS, configure, journal_events


def _adjust(project, *args: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "surveyctl", "adjust", *args]
    return subprocess.Popen(
        command,
        cwd=project,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1"},
    )


def _in_flight(project, process: subprocess.Popen) -> None:
    """Returns once the submission is journalled, i.e. the request is about to leave or on
    its way (the marketplace takes 1.5 s to answer it)."""
    journal = project.joinpath(*JOURNAL)
    deadline = time.monotonic() + 30
    while not (journal.exists() and '"event":"sending"' in journal.read_text()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the submission was never journalled"
        time.sleep(0.02)
    time.sleep(0.3)  # the request is sent right after the journal line


def _killed_in_flight(project, market, file: str) -> None:
    """`adjust FILE --yes` killed (SIGKILL) while its request is in flight; the marketplace
    finishes the request anyway. The project is then aimed at the same data served without
    latency (the same environment, `local`), so that reading back is quick."""
    process = _adjust(project, file, "--yes")
    _in_flight(project, process)
    process.kill()
    process.wait(timeout=10)
    time.sleep(SLOW_MS / 1000 + 0.5)
    configure(project, market.fast)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_in_flight_waits_for_the_answer_and_records_it(project, slow_market, number):
    process = _adjust(project, "ids.csv", "--yes")
    _in_flight(project, process)
    process.send_signal(number)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 128 + number, out + err  # 130 SIGINT, 143 SIGTERM, 129 SIGHUP
    assert f"{signal.Signals(number).name} received: the adjustment in flight is answered" in err
    events = journal_events(project)
    assert [event["event"] for event in events] == ["sending", "answered"], (events, out, err)
    adjustment_id = events[1]["answer"]["adjustment_id"]
    assert f"adjustment {adjustment_id}: status 1 (Pending)" in out
    assert slow_market.adjustments() == 1


def test_a_killed_adjust_is_shown_by_the_next_one_which_sends_nothing_again(
    project, slow_market, run_cli
):
    _killed_in_flight(project, slow_market, "ids.csv")
    assert slow_market.adjustments() == 1

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert "got no answer (the command was stopped)" in result.stdout
    assert "shows all 3 transaction(s) read back as reconciled" in result.stdout
    assert "nothing submitted: 3 of these 3 transaction(s) were submitted already" in result.stderr
    assert "pass --resubmit" in result.stderr
    assert slow_market.adjustments() == 1


def test_the_adjustments_listing_shows_a_killed_adjust_and_its_read_back(
    project, slow_market, run_cli
):
    _killed_in_flight(project, slow_market, "ids.csv")

    listing = run_cli("adjustments")

    assert listing.exit_code == 0, listing.output
    assert "answer lost; likely made (3 of 3 reconciled)" in listing.stdout
    assert "ids.csv" in listing.stdout


def test_without_surveys_to_read_back_the_outcome_is_unknown_and_the_ids_are_named(
    project, slow_market, run_cli
):
    _killed_in_flight(project, slow_market, "bare.csv")

    result = run_cli("adjust", "bare.csv", "--yes")

    assert result.exit_code == 1
    assert "Its outcome is unknown: the file named no survey" in result.stdout
    assert f"It carried 3 transaction(s): {', '.join(slow_market.ids)}" in result.stdout


def test_resubmit_sends_the_transactions_of_a_lost_adjustment_again_once(
    project, slow_market, run_cli
):
    _killed_in_flight(project, slow_market, "ids.csv")

    again = run_cli("adjust", "ids.csv", "--yes", "--resubmit")
    listing = run_cli("adjustments", "--offline")

    assert again.exit_code == 0, again.output
    assert slow_market.adjustments() == 2
    assert "answer lost; submitted again later" in listing.stdout
    assert "status 1" in listing.stdout


def test_an_unconfirmed_adjust_exits_1_and_journals_nothing(project, slow_market):
    process = _adjust(project, "ids.csv")  # no terminal and no --yes: nobody to ask
    process.communicate(timeout=60)
    assert process.returncode == 1
    assert not project.joinpath(*JOURNAL).exists()
    assert slow_market.adjustments() == 0


def test_a_second_adjust_of_transactions_in_flight_is_refused(project, slow_market, run_cli):
    process = _adjust(project, "ids.csv", "--yes")
    _in_flight(project, process)

    second = run_cli("adjust", "ids.csv", "--yes", "--resubmit")
    process.communicate(timeout=60)

    assert second.exit_code == 1
    assert f"being submitted now by process {process.pid}" in second.stderr
    assert process.returncode == 0
    assert slow_market.adjustments() == 1


def test_a_resubmission_the_service_refuses_leaves_the_lost_adjustment_blocking(
    project, slow_market, run_cli
):
    _killed_in_flight(project, slow_market, "ids.csv")
    # bare.csv names no survey, so --survey sends the same transactions to a survey not there
    refused = run_cli("adjust", "bare.csv", "--yes", "--resubmit", "--survey", "999999")
    again = run_cli("adjust", "ids.csv", "--yes")

    assert refused.exit_code == 1 and "answered 404" in refused.stderr
    assert again.exit_code == 1
    assert "got no answer (the command was stopped)" in again.stdout
    assert slow_market.adjustments() == 1
