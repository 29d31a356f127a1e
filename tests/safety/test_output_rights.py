"""An output the user may not write is refused before anything is sent, and what is there is
kept: a read-only file, a folder where no file can be made beside a writable one, a FIFO or
device without write access. A device the user may write (/dev/null) is written in place.

Root may write anything, so under root each check runs with the rights of user nobody, as a
user without those rights would run surveyctl."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def without_root_rights() -> Iterator[None]:
    """Under root, runs the block with user nobody's rights (real and effective ids, as
    os.access checks the real one); root's own id is kept as the saved one to return to."""
    if os.getuid() != 0:
        yield
        return
    os.setresgid(NOBODY, NOBODY, 0)
    os.setresuid(NOBODY, NOBODY, 0)
    try:
        yield
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)


def _timed_out(signum, frame):
    raise TimeoutError("the check waited for a reader")


def check_without_rights(path: Path, option: str) -> str:
    """Checks `path` as a user who has only the rights its files give; "accepted" or
    "refused: <message>". A check that waits (for a FIFO's reader) fails instead of hanging."""
    previous = signal.signal(signal.SIGALRM, _timed_out)
    signal.alarm(20)
    try:
        with without_root_rights():
            check_output_path(path, option)
    except OutputPathError as refused:
        return f"refused: {refused}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return "accepted"


@pytest.mark.parametrize(
    ("folder_mode", "file_mode"),
    [
        pytest.param(0o777, 0o644, id="a read-only file"),
        # The answer replaces the file through a new file beside it: the folder must take one.
        pytest.param(0o755, 0o666, id="a writable file in a folder where no file can be made"),
    ],
)
def test_an_existing_file_that_cannot_be_replaced_is_refused_and_kept(
    shared, folder_mode, file_mode
):
    folder = shared(folder_mode)
    answer = folder / "answer.json"
    answer.write_text(OLD_ANSWER, encoding="utf-8")
    os.chmod(answer, file_mode)
    outcome = check_without_rights(answer, "--output")
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
    outcome = check_without_rights(pipe, "--out")
    assert outcome == f"refused: cannot write --out {pipe}: permission denied"


def test_a_writable_fifo_is_accepted_without_waiting_for_a_reader(shared):
    folder = shared(0o755)
    pipe = folder / "answers.fifo"
    os.mkfifo(pipe)
    os.chmod(pipe, 0o666)  # mkfifo's mode is cut by the umask
    outcome = check_without_rights(pipe, "--out")
    assert outcome == "accepted"


def test_transactions_can_be_listed_into_dev_null(live_survey, run_cli):
    survey_id = live_survey()
    result = run_cli("transactions", "list", str(survey_id), "--output", "/dev/null")
    assert result.exit_code == 0, result.stderr
    assert "transaction(s) in 1 page(s) to /dev/null" in result.stderr
