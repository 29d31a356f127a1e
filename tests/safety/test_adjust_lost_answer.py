"""What `surveyctl adjust` says and does when the answer to an adjustment is lost, late or
odd, in the same process as the tests (so that a fault in the command shows here).

A loopback proxy in front of the sandbox forwards each adjustment, which the sandbox makes, and
then loses its answer (a 502) or reshapes it; other records are left `sending` by a process
that has ended, or by the test's own process (one still running). The next `adjust` of the same
transactions shows the earlier submission, reads back its transactions from the sandbox and
says what they tell, refuses without `--resubmit` and sends again with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from filelock import FileLock

from surveyctl.cli.adjust import _interrupted
from surveyctl.cli.main import cli
from surveyctl.ops.adjust_journal import AdjustmentJournal

from ..reconcile.proxies import Proxy
from .conftest import JOURNAL, adjustment_count, configure, journal_events

ADJUSTMENTS = "/buyers/v2/adjustments"


class AdjustmentProxy(Proxy):
    """Forwards every request to the sandbox. Of each adjustment (a POST under ADJUSTMENTS),
    which the sandbox makes, it keeps the path (`posted`), runs `during()` while the answer
    is still on its way, and answers `lost_status` instead of the answer when set, or the
    answer as `edit` changed it."""

    def __init__(self, upstream: str):
        self.posted: list[str] = []
        self.during = lambda: None
        self.lost_status: int | None = None
        self.edit = lambda answer: None
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method != "POST" or not request.path.startswith(ADJUSTMENTS):
            return answer.content
        self.posted.append(request.path)
        self.during()
        if self.lost_status is not None:
            answer.status_code = self.lost_status
            headers["Content-Type"] = "text/html"
            return b"<html><body>Bad Gateway</body></html>"
        body = answer.json()
        self.edit(body)
        return json.dumps(body).encode()


@pytest.fixture
def proxy(sandbox, project):
    """The project's `local` environment aimed at an AdjustmentProxy in front of the sandbox."""
    running = AdjustmentProxy(sandbox.url)
    configure(project, running.url)
    yield running
    running.stop()


def _sent(project, ref: str) -> dict:
    """The `sending` event of the record `ref`."""
    return next(e for e in journal_events(project) if e["event"] == "sending" and e["ref"] == ref)


def _first_line(project, ref: str, ending: str) -> str:
    """The line that introduces an earlier submission, as the next `adjust` prints it."""
    sent = _sent(project, ref)
    count = len(sent["transactions"])
    return (
        f"adjustment {ref[:8]} of {sent['file']} ({count} transaction(s), sent {sent['at']}) "
        f"{ending}"
    )


def _left_sending(project, pairs, survey_path=None) -> str:
    """Journals a submission of `pairs` from a process that then ends without sending it, as
    one killed before its request left does; returns the record's reference."""
    code = (
        "import sys; from pathlib import Path\n"
        "from surveyctl.ops.adjust_journal import AdjustmentJournal\n"
        "journal = AdjustmentJournal(Path(sys.argv[1]))\n"
        "pairs = [tuple(p) for p in __import__('json').loads(sys.argv[2])]\n"
        "survey = int(sys.argv[3]) if sys.argv[3] else None\n"
        "print(journal.sending(Path('ids.csv'), pairs, survey).ref)\n"
    )
    journal = str(project.joinpath(*JOURNAL))
    survey = "" if survey_path is None else str(survey_path)
    done = subprocess.run(
        [sys.executable, "-c", code, journal, json.dumps(pairs), survey],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _write_bare(project, ids, name="bare.csv") -> str:
    (project / name).write_text("".join(f"{t}\n" for t in ids), encoding="utf-8")
    return name


def _lost(proxy, run_cli, *args: str):
    """`adjust ARGS --yes` whose adjustment the sandbox makes and whose answer the proxy
    loses (502)."""
    proxy.lost_status = 502
    result = run_cli("adjust", *args, "--yes")
    proxy.lost_status = None
    return result


# -- an answer lost on its way back ----------------------------------------------------------


def test_a_lost_answer_ends_in_one_sentence_naming_the_record(proxy, completes, run_cli, project):
    result = _lost(proxy, run_cli, "ids.csv")
    (sent, lost) = journal_events(project)
    assert result.exit_code == 1
    assert (sent["event"], lost["event"]) == ("sending", "lost")
    assert result.stderr.splitlines()[-1] == (
        f"Error: the adjustment may have been made, but its answer was lost ({lost['reason']}); "
        f"it is recorded as {sent['ref'][:8]}: `surveyctl adjustments` reads back what the "
        "service shows of it"
    )
    assert lost["reason"] == f"POST {proxy.url}{ADJUSTMENTS} answered 502: Bad Gateway"


@pytest.mark.parametrize(
    ("status", "event"),
    [(400, "refused"), (499, "refused"), (500, "lost"), (502, "lost")],
)
def test_an_answer_of_4xx_is_journalled_as_refused_and_one_of_5xx_as_lost(
    proxy, completes, run_cli, project, status, event
):
    proxy.lost_status = status
    result = run_cli("adjust", "ids.csv", "--yes")
    (sent, settled) = journal_events(project)
    assert result.exit_code == 1
    assert (sent["event"], settled["event"]) == ("sending", event)
    assert settled["reason"] == f"POST {proxy.url}{ADJUSTMENTS} answered {status}: Bad Gateway"
    assert ("may have been made" in result.stderr) == (event == "lost")


def test_an_adjustment_whose_answer_never_comes_is_journalled_as_lost(
    proxy, completes, run_cli, project
):
    proxy.during = lambda: time.sleep(2.5)  # past the command's --timeout of 1 s
    result = run_cli("--timeout", "1", "adjust", "ids.csv", "--yes")
    proxy.during = lambda: None
    (sent, lost) = journal_events(project)
    assert result.exit_code == 1
    assert (sent["event"], lost["event"]) == ("sending", "lost")
    assert lost["reason"] and lost["reason"] in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "Error: the adjustment may have been made, but its answer was lost ("
    )
    assert result.stderr.splitlines()[-1].endswith(
        f"it is recorded as {sent['ref'][:8]}: `surveyctl adjustments` reads back what the "
        "service shows of it"
    )


def test_the_next_adjust_of_a_lost_one_says_it_was_likely_made_and_sends_nothing(
    proxy, sandbox, completes, run_cli, project
):
    _lost(proxy, run_cli, "ids.csv")
    (sent, lost) = journal_events(project)
    before = adjustment_count(sandbox)

    again = run_cli("adjust", "ids.csv", "--yes")

    assert again.exit_code == 1
    assert again.stdout.splitlines() == [
        _first_line(project, sent["ref"], f"got no answer: {lost['reason']}."),
        "The service shows all 3 transaction(s) read back as reconciled: the adjustment most "
        "likely reached it.",
    ]
    assert again.stderr.splitlines()[-1] == (
        "Error: nothing submitted: 3 of these 3 transaction(s) were submitted already by 1 "
        "earlier adjustment(s) (see above); to submit them again anyway, pass --resubmit"
    )
    assert adjustment_count(sandbox) == before


def test_the_read_back_of_a_lost_adjustment_is_journalled(proxy, completes, run_cli, project):
    _lost(proxy, run_cli, "ids.csv")

    run_cli("adjust", "ids.csv", "--yes")

    checked = journal_events(project)[-1]
    assert checked["event"] == "checked"
    assert checked["check"] == {"checked": 3, "reconciled": 3, "unknown": 0, "error": ""}


def test_resubmit_sends_a_lost_adjustment_again_and_names_the_one_it_replaces(
    proxy, sandbox, completes, run_cli, project
):
    _lost(proxy, run_cli, "ids.csv")
    first = journal_events(project)[0]["ref"]
    before = adjustment_count(sandbox)

    again = run_cli("adjust", "ids.csv", "--yes", "--resubmit")

    assert again.exit_code == 0, again.output
    assert adjustment_count(sandbox) == before + 1
    resent = [e for e in journal_events(project) if e["event"] == "sending"][-1]
    assert resent["supersedes"] == [first]
    assert run_cli("adjust", "ids.csv", "--yes").stdout.startswith(
        f"adjustment {resent['ref'][:8]} of "
    )


def test_the_per_survey_path_of_a_lost_adjustment_is_used_to_read_it_back(
    proxy, completes, run_cli, project
):
    survey_id, ids = completes
    bare = _write_bare(project, ids)
    _lost(proxy, run_cli, bare, "--survey", str(survey_id))

    again = run_cli("adjust", bare, "--yes")

    assert proxy.posted == [f"{ADJUSTMENTS}/surveys/{survey_id}"]
    assert journal_events(project)[0]["survey_path"] == survey_id
    assert "The service shows all 3 transaction(s) read back as reconciled" in again.stdout


def test_an_answer_that_is_not_json_is_lost_not_refused(
    proxy, sandbox, completes, run_cli, project
):
    # A 200 whose body cannot be read comes after the adjustment was made: were it taken as
    # the service's refusal, the next adjust would send the same transactions again unasked.
    proxy.lost_status = 200
    first = run_cli("adjust", "ids.csv", "--yes")
    proxy.lost_status = None
    before = adjustment_count(sandbox)

    again = run_cli("adjust", "ids.csv", "--yes")

    assert "the adjustment may have been made, but its answer was lost" in first.stderr
    assert [e["event"] for e in journal_events(project)[:2]] == ["sending", "lost"]
    assert again.exit_code == 1
    assert "were submitted already" in again.stderr
    assert adjustment_count(sandbox) == before


# -- records left by processes that ended ----------------------------------------------------


def test_a_record_its_process_left_unsent_is_likely_not_made(completes, run_cli, project, api):
    survey_id, ids = completes
    ref = _left_sending(project, [(t, survey_id) for t in ids])

    again = run_cli("adjust", "ids.csv", "--yes")

    assert again.exit_code == 1
    assert again.stdout.splitlines() == [
        _first_line(project, ref, "got no answer (the command was stopped)."),
        "None of the 3 transaction(s) read back shows as reconciled: the adjustment most "
        "likely did not reach the service (or is still pending).",
    ]
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_a_record_whose_transactions_are_partly_reconciled_is_unclear(
    completes, run_cli, project, api
):
    survey_id, ids = completes
    api.adjust([ids[0]])  # reconciled before, by another adjustment
    ref = _left_sending(project, [(t, survey_id) for t in ids])

    again = run_cli("adjust", "ids.csv", "--yes")

    assert again.stdout.splitlines()[1] == (
        "1 of the 3 transaction(s) read back show as reconciled: the outcome is unclear (some "
        f"may have been reconciled before). It carried 3 transaction(s): {', '.join(ids)} (all "
        f"of them: `surveyctl adjustments --show {ref[:8]}`)."
    )


def test_a_record_naming_no_survey_has_an_unknown_outcome_and_names_its_ids(run_cli, project):
    ids = [f"lost-{n:02}" for n in range(1, 11)]
    ref = _left_sending(project, [(t, None) for t in ids])

    again = run_cli("adjust", _write_bare(project, ids[:1]), "--yes")

    assert again.exit_code == 1
    assert again.stdout.splitlines()[1] == (
        "Its outcome is unknown: the file named no survey for its transactions, so the service "
        f"cannot be asked about them. It carried 10 transaction(s): {', '.join(ids)} (all of "
        f"them: `surveyctl adjustments --show {ref[:8]}`)."
    )
    assert again.stderr.splitlines()[-1].startswith(
        "Error: nothing submitted: 1 of these 1 transaction(s) were submitted already by 1 "
    )


def test_past_ten_ids_the_record_names_the_first_ten(run_cli, project):
    ids = [f"lost-{n:02}" for n in range(1, 12)]
    ref = _left_sending(project, [(t, None) for t in ids])

    again = run_cli("adjust", _write_bare(project, ids[-1:]), "--yes")

    assert again.stdout.splitlines()[1].endswith(
        f"It carried 11 transaction(s): {', '.join(ids[:10])}, ... (all of them: `surveyctl "
        f"adjustments --show {ref[:8]}`)."
    )


def test_a_record_whose_reads_fail_has_an_unknown_outcome_and_says_why(
    sandbox, completes, run_cli, project
):
    survey_id, ids = completes
    gone = 999_999  # the per-survey path of a survey the service does not know
    ref = _left_sending(project, [(t, None) for t in ids], survey_path=gone)

    again = run_cli("adjust", _write_bare(project, ids), "--yes")

    error = journal_events(project)[-1]["check"]["error"]
    assert error.startswith(
        f"GET {sandbox.url}/buyers/v3/surveys/{gone}/transactions/{ids[0]} answered 404"
    )
    assert again.stdout.splitlines()[1] == (
        f"Its outcome is unknown: its transactions could not be read back ({error}). It "
        f"carried 3 transaction(s): {', '.join(ids)} (all of them: `surveyctl adjustments "
        f"--show {ref[:8]}`)."
    )


# -- a record of a process that still runs ---------------------------------------------------


def test_transactions_another_process_is_submitting_are_refused_even_with_resubmit(
    sandbox, completes, run_cli, project
):
    survey_id, ids = completes
    journal = AdjustmentJournal(project.joinpath(*JOURNAL))
    ref = journal.sending(project / "ids.csv", [(t, survey_id) for t in ids], None).ref
    before = adjustment_count(sandbox)

    again = run_cli("adjust", "ids.csv", "--yes", "--resubmit")

    assert again.exit_code == 1
    assert again.stdout == (
        _first_line(project, ref, f"is being submitted now by process {os.getpid()}.") + "\n"
    )
    assert again.stderr.splitlines()[-1] == (
        f"Error: nothing submitted: adjustment {ref[:8]} of some of these transactions is being "
        f"submitted now by process {os.getpid()}"
    )
    assert adjustment_count(sandbox) == before
    # Nothing read back or settled.
    assert [e["event"] for e in journal_events(project)] == ["sending"]


# -- signals ---------------------------------------------------------------------------------


def _signal_main_thread(number: int = signal.SIGTERM) -> None:
    signal.pthread_kill(threading.main_thread().ident, number)


def _once_adjust_handles_signals(then) -> threading.Thread:
    """A thread that runs `then()` once adjust handles SIGTERM itself (before, the signal
    would end the test's process) and has gone on to wait."""

    def wait():
        while signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            time.sleep(0.01)
        time.sleep(0.3)
        then()

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def test_a_signal_in_flight_is_told_on_stderr_and_the_answer_recorded(
    proxy, completes, project, capfd
):
    # Run as a shell runs it (not through CliRunner, whose stderr is no file), in this process.
    proxy.during = _signal_main_thread
    with pytest.raises(SystemExit) as ended:
        cli.main(["adjust", "ids.csv", "--yes"], prog_name="surveyctl")
    out, err = capfd.readouterr()

    (sent, answered) = journal_events(project)
    adjustment_id = answered["answer"]["adjustment_id"]
    assert ended.value.code == 143
    assert err.splitlines()[-3:] == [
        "",
        "SIGTERM received: the adjustment in flight is answered and recorded before surveyctl "
        "stops.",
        f"Error: adjust interrupted: the adjustment in flight was answered and recorded "
        f"({adjustment_id})",
    ]
    assert f"adjustment {adjustment_id}: status 1 (Pending)" in out


def test_a_signal_in_flight_ends_adjust_with_its_exit_code_after_the_answer(
    proxy, completes, run_cli
):
    proxy.during = _signal_main_thread
    proxy.edit = lambda answer: answer.pop("adjustment_id")

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 143
    assert result.stderr.splitlines()[-1] == (
        "Error: adjust interrupted: the adjustment in flight was answered and recorded (?)"
    )


def test_a_signal_while_the_submission_is_journalled_withdraws_it_unsent(
    sandbox, completes, run_cli, project
):
    journal = AdjustmentJournal(project.joinpath(*JOURNAL))
    journal.path.parent.mkdir(parents=True)
    held, interrupted = threading.Event(), threading.Event()

    def hold_the_guard():  # as another command journalling its own submission would
        with FileLock(str(journal.path.with_suffix(".guard"))):
            held.set()
            interrupted.wait(timeout=30)

    holder = threading.Thread(target=hold_the_guard, daemon=True)
    holder.start()
    held.wait(timeout=30)
    before = adjustment_count(sandbox)
    signaller = _once_adjust_handles_signals(lambda: (_signal_main_thread(), interrupted.set()))
    result = run_cli("adjust", "ids.csv", "--yes")
    signaller.join(timeout=30)
    holder.join(timeout=30)

    events = journal_events(project)
    assert result.exit_code == 143
    assert result.stderr.splitlines()[-1] == (
        "Error: adjust interrupted before the request was sent; nothing was submitted"
    )
    assert [e["event"] for e in events] == ["sending", "withdrawn"]
    assert events[1]["reason"] == "interrupted before it was sent"
    assert adjustment_count(sandbox) == before
    assert run_cli("adjust", "ids.csv", "--yes").exit_code == 0  # a withdrawn one blocks nothing


def test_a_signal_while_the_question_waits_stops_before_anything_is_journalled(
    sandbox, completes, run_cli, project, monkeypatch
):
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    reader, writer = os.pipe()  # an answer that never comes
    before = adjustment_count(sandbox)
    signaller = _once_adjust_handles_signals(_signal_main_thread)
    try:
        with os.fdopen(reader, "rb") as never_answered:
            result = run_cli("adjust", "ids.csv", input=never_answered)
    finally:
        signaller.join(timeout=30)
        os.close(writer)

    assert result.exit_code == 143
    assert result.stderr.splitlines()[-1] == (
        "Error: adjust interrupted before anything was sent; nothing was submitted"
    )
    assert not project.joinpath(*JOURNAL).exists()
    assert adjustment_count(sandbox) == before


def test_the_first_signal_in_flight_says_the_answer_is_awaited(capfd):
    _interrupted("SIGINT", True)
    assert capfd.readouterr().err == (
        "\nSIGINT received: the adjustment in flight is answered and recorded before surveyctl "
        "stops.\n"
    )


def test_a_second_signal_in_flight_says_it_is_still_waiting(capfd):
    _interrupted("SIGTERM", False)
    assert capfd.readouterr().err == (
        "SIGTERM received again: still waiting for the adjustment's answer.\n"
    )


# -- answers that cannot be kept -------------------------------------------------------------


def _journal_gone(project):
    """Takes the journal's place with a folder: a file can no longer be appended there."""
    journal = project.joinpath(*JOURNAL)
    journal.unlink()
    journal.mkdir()


def test_an_answer_the_journal_cannot_take_is_shown_and_the_command_exits_1(
    proxy, completes, run_cli, project
):
    proxy.during = lambda: _journal_gone(project)

    result = run_cli("adjust", "ids.csv", "--yes", "--output", "a.json")

    adjustment_id = result.stdout.split("adjustment ", 1)[1].split(":")[0]
    assert result.exit_code == 1
    assert f"adjustment {adjustment_id}: status 1 (Pending)" in result.stdout.splitlines()
    assert result.stderr.splitlines()[-1] == (
        f"Error: adjustment {adjustment_id} was submitted (see above), but its answer could not "
        f"be recorded: cannot write the adjustments journal: {project.joinpath(*JOURNAL)} is a "
        "folder where a file is expected; remove or rename it"
    )
    assert not (project / "a.json").exists()  # the error comes first; the answer is on stdout


def test_an_unrecorded_answer_without_an_id_is_named_as_unknown(proxy, completes, run_cli, project):
    proxy.during = lambda: _journal_gone(project)
    proxy.edit = lambda answer: answer.pop("adjustment_id")

    result = run_cli("adjust", "ids.csv", "--yes")

    assert "adjustment ?: status 1 (Pending)" in result.stdout.splitlines()
    assert result.stderr.splitlines()[-1].startswith(
        "Error: adjustment ? was submitted (see above), but its answer could not be recorded: "
    )


def test_an_answer_file_that_cannot_be_written_names_the_record_and_the_reason(
    proxy, completes, run_cli, project
):
    answer = project / "answer.json"
    proxy.during = answer.mkdir  # the answer file's place is taken while the request is out

    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")

    (sent, answered) = journal_events(project)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: adjustment {answered['answer']['adjustment_id']} was submitted and its answer "
        f"is recorded (surveyctl adjustments --show {sent['ref'][:8]}), but --output "
        "answer.json could not be written: is a directory"
    )


def test_an_unwritten_answer_file_without_an_id_names_it_as_unknown(
    proxy, completes, run_cli, project
):
    proxy.during = (project / "answer.json").mkdir
    proxy.edit = lambda answer: answer.pop("adjustment_id")

    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")

    assert result.stderr.splitlines()[-1].startswith(
        "Error: adjustment ? was submitted and its answer is recorded (surveyctl adjustments "
    )


# -- answers in other shapes -----------------------------------------------------------------


def test_a_status_without_a_description_is_named_from_the_known_statuses(
    proxy, completes, run_cli, project
):
    proxy.edit = lambda answer: answer.pop("statusDescription")
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")
    adjustment_id = json.loads((project / "answer.json").read_text())["adjustment_id"]
    assert f"adjustment {adjustment_id}: status 1 (Pending)" in result.stdout.splitlines()


def test_the_status_is_described_as_the_answer_describes_it(proxy, completes, run_cli, project):
    proxy.edit = lambda answer: answer.update(statusDescription="Pending (held for review)")
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")
    adjustment_id = json.loads((project / "answer.json").read_text())["adjustment_id"]
    assert f"adjustment {adjustment_id}: status 1 (Pending (held for review))" in (
        result.stdout.splitlines()
    )


def test_an_unknown_status_without_a_description_is_shown_as_unknown(
    proxy, completes, run_cli, project
):
    def unknown_status(answer):
        answer.pop("statusDescription")
        answer["status"] = 7

    proxy.edit = unknown_status
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")
    adjustment_id = json.loads((project / "answer.json").read_text())["adjustment_id"]
    assert f"adjustment {adjustment_id}: status 7 (unknown)" in result.stdout.splitlines()


def test_per_survey_cells_the_answer_leaves_out_are_shown_empty(proxy, completes, run_cli):
    def sparse(answer):
        item = answer["summary"]["summaryPerSurvey"][0]
        for name in ("surveyId", "invalid", "rejectPercentage", "validCap"):
            item.pop(name)
        answer["summary"].pop("rejectPercentage")

    proxy.edit = sparse
    result = run_cli("adjust", "ids.csv", "--yes")
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert "reject percentage" not in result.stdout
    assert lines[-3:] == [
        "per survey",
        "survey  transactions  completes  rejected  alreadyReconciled  invalid  reject %  validCap",
        "?                  3          3         0                  0",
    ]


def test_an_earlier_answer_without_id_or_status_is_shown_with_question_marks(
    proxy, completes, run_cli, project
):
    def bare(answer):
        answer.pop("adjustment_id")
        answer.pop("status")

    proxy.edit = bare
    run_cli("adjust", "ids.csv", "--yes")
    ref = journal_events(project)[0]["ref"]

    again = run_cli("adjust", "ids.csv", "--yes")

    assert again.stdout.splitlines() == [
        _first_line(project, ref, "was answered: adjustment ?, status ?.")
    ]
