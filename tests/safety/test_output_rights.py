"""An output the user may not write is refused before anything is sent, and what is there is
kept: a read-only file, a folder where no file can be made beside a writable one, a FIFO or
device without write access. A device the user may write (/dev/null) is written in place.

Root may write anything, so under root each check runs in a child process with the rights of
user nobody, as a user without those rights would run surveyctl."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from surveyctl.safety import OutputPathError, check_output_path

NOBODY = 65534
OLD_ANSWER = '{"adjustment_id": 7}\n'


@pytest.fixture
def shared(tmp_path):
    """`shared(mode)`: a folder owned by this user with `mode`, that user nobody can reach
    (pytest's own temporary folders are private)."""
    made: list[str] = []

    def make(mode: int) -> Path:
        folder = tempfile.mkdtemp(prefix="surveyctl-rights-")
        made.append(folder)
        os.chmod(folder, mode)
        return Path(folder)

    yield make
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def _outcome(check: Callable[[], None]) -> str:
    try:
        check()
    except OutputPathError as refused:
        return f"refused: {refused}"
    except Exception as exc:  # noqa: BLE001 - reported to the test, which then fails
        return f"error: {exc!r}"
    return "accepted"


def as_user_without_rights(check: Callable[[], None]) -> str:
    """Runs `check` as a user who has only the rights the files give (nobody under root);
    returns "accepted", "refused: <message>" or "error: <exception>"."""
    if os.getuid() != 0:
        return _outcome(check)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, check, report through the pipe
        try:
            os.close(read)
            signal.alarm(20)  # a check that waits (for a FIFO's reader) fails, not hangs
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write, _outcome(check).encode("utf-8"))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as pipe:
        outcome = pipe.read()
    os.waitpid(pid, 0)
    return outcome


def test_an_existing_file_the_user_may_not_write_is_refused_and_kept(shared):
    folder = shared(0o777)
    answer = folder / "answer.json"
    answer.write_text(OLD_ANSWER, encoding="utf-8")
    os.chmod(answer, 0o644)
    outcome = as_user_without_rights(lambda: check_output_path(answer, "--output"))
    assert outcome == (
        f"refused: cannot write --output {answer}: a file cannot be written in {folder} "
        "(permission denied)"
    )
    assert answer.read_text(encoding="utf-8") == OLD_ANSWER


def test_a_writable_file_in_a_folder_where_no_file_can_be_made_is_refused(shared):
    # The answer replaces the file through a new file beside it, so the folder must take one.
    folder = shared(0o755)
    answer = folder / "answer.json"
    answer.write_text(OLD_ANSWER, encoding="utf-8")
    os.chmod(answer, 0o666)
    outcome = as_user_without_rights(lambda: check_output_path(answer, "--output"))
    assert outcome == (
        f"refused: cannot write --output {answer}: a file cannot be written in {folder} "
        "(permission denied)"
    )
    assert answer.read_text(encoding="utf-8") == OLD_ANSWER


def test_a_fifo_the_user_may_not_write_is_refused_without_waiting_for_a_reader(shared):
    folder = shared(0o755)
    pipe = folder / "answers.fifo"
    os.mkfifo(pipe)
    os.chmod(pipe, 0o644)
    outcome = as_user_without_rights(lambda: check_output_path(pipe, "--out"))
    assert outcome == f"refused: cannot write --out {pipe}: permission denied"


def test_a_writable_fifo_is_accepted_without_waiting_for_a_reader(shared):
    folder = shared(0o755)
    pipe = folder / "answers.fifo"
    os.mkfifo(pipe)
    os.chmod(pipe, 0o666)  # mkfifo's mode is cut by the umask
    outcome = as_user_without_rights(lambda: check_output_path(pipe, "--out"))
    assert outcome == "accepted"


def test_transactions_can_be_listed_into_dev_null(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli("transactions", "list", str(survey_id), "--output", "/dev/null")
    assert result.exit_code == 0, result.stderr
    assert "transaction(s) in 1 page(s) to /dev/null" in result.stderr
