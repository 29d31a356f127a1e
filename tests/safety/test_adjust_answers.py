"""An adjustment is never sent only to lose its answer: `--output` must be a regular file that
can take the answer before anything is sent, an existing answer file is replaced only by a
whole answer, and when the answer still cannot be written its id and summary reach stdout
first and the command exits 1."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import adjustment_count, fill_file_system
from .test_adjust_in_flight import _adjust, _in_flight

OLD_ANSWER = '{"adjustment_id": "earlier"}\n'


def test_adjust_refuses_dev_full_before_sending(sandbox, completes, run_cli):
    before = adjustment_count(sandbox)
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "/dev/full")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: cannot write --output /dev/full: it is a character device, not a regular "
        "file, and the service's answer could be lost there; name a file"
    )
    assert adjustment_count(sandbox) == before


def test_adjust_refuses_a_fifo_with_no_reader_before_sending(sandbox, completes, project):
    os.mkfifo(project / "answer.json")
    before = adjustment_count(sandbox)
    command = [sys.executable, "-m", "surveyctl", "adjust", "ids.csv", "--yes"]
    result = subprocess.run(
        [*command, "--output", "answer.json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,  # the old code waited for a reader forever, after sending
    )
    assert result.returncode == 1
    assert "cannot write --output answer.json: it is a FIFO (named pipe)" in result.stderr
    assert adjustment_count(sandbox) == before


def test_on_a_full_file_system_nothing_is_sent_and_the_old_answer_is_kept(
    sandbox, completes, run_cli, small_mount
):
    answer = small_mount / "answer.json"
    answer.write_text(OLD_ANSWER)
    fill_file_system(small_mount)
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes", "--output", str(answer))

    assert result.exit_code == 1
    assert f"cannot write --output {answer}: room for the answer cannot be reserved" in (
        result.stderr
    )
    assert "no space left on device" in result.stderr
    assert answer.read_text() == OLD_ANSWER
    assert adjustment_count(sandbox) == before


def test_an_answer_that_cannot_be_written_after_sending_is_shown_first_and_exits_1(
    project, slow_market, small_mount
):
    answer = small_mount / "answer.json"
    answer.write_text(OLD_ANSWER)
    process = _adjust(project, "ids.csv", "--yes", "--output", str(answer))
    _in_flight(project, process)
    # The file system turns read-only while the request is in flight.
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1, out + err
    assert out.startswith("3 transaction(s) will be submitted")
    assert "status 1 (Pending)" in out and "reject percentage:" in out
    assert f"--output {answer} could not be written: read-only file system" in err
    assert "Traceback" not in err
    assert answer.read_text() == OLD_ANSWER
    assert slow_market.adjustments() == 1


def test_an_existing_answer_file_is_replaced_whole(sandbox, completes, run_cli, project):
    (project / "answer.json").write_text(OLD_ANSWER)
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")
    assert result.exit_code == 0, result.output
    text = (project / "answer.json").read_text()
    assert '"adjustment_id": "earlier"' not in text and '"summary"' in text
    assert not [p for p in project.iterdir() if p.name.startswith(".answer.json.")]
