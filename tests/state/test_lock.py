"""The state lock: one holder at a time across threads and processes, with a clear refusal."""

from __future__ import annotations

import getpass
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from surveyctl.processes import boot_id, is_process_id, process_start_time
from surveyctl.signals import Stopped
from surveyctl.state import FileStateStore
from surveyctl.state.file.lock import StateLock, force_unlock, lock_file, read_lock
from surveyctl.state.lock import (
    LockError,
    LockHeld,
    LockLost,
    LockWaitInterrupted,
    lock_lost,
    wait_interrupted,
    waiting_note,
)

from .conftest import held_elsewhere

pytestmark = pytest.mark.usefixtures("hangup_fails_the_test")

# A separate process that takes the lock, says so, and holds it until told (or crashes).
HOLDER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from surveyctl.state.file.lock import StateLock
    state, ready, hold, mode = sys.argv[1:5]
    lock = StateLock(Path(state), "apply", timeout=float(sys.argv[5]) if len(sys.argv) > 5 else 0)
    try:
        lock.acquire()
    except Exception as exc:
        print("REFUSED", exc, flush=True)
        sys.exit(3)
    Path(ready + ".tmp").write_text(lock.info.id)
    os.replace(ready + ".tmp", ready)  # whole: the test reads it as soon as it exists
    if mode == "crash":
        os._exit(0)  # dies without releasing, like a killed apply
    if mode == "until":  # hold until the file named by `hold` appears
        while not Path(hold).exists():
            time.sleep(0.02)
    else:
        deadline = time.monotonic() + float(hold)
        while time.monotonic() < deadline:
            time.sleep(0.02)
    lock.release()
    print("HELD", flush=True)
    """
)


@pytest.fixture
def state_path(tmp_path) -> Path:
    return tmp_path / "state" / "staging.json"


def start_holder(state_path: Path, tmp_path: Path, hold: float, mode: str = "hold", tag="a"):
    ready = tmp_path / f"ready-{tag}"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(state_path), str(ready), str(hold), mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not ready.exists():
        assert process.poll() is None or mode == "crash", "the holder process failed"
        assert time.monotonic() < deadline, "the holder process never took the lock"
        time.sleep(0.02)
    return process, ready.read_text()


def test_lock_records_who_when_what_and_an_id(state_path):
    with StateLock(state_path, "import") as lock:
        on_disk = json.loads(lock_file(state_path).read_text())
        assert on_disk["operation"] == "import"
        assert on_disk["id"] == lock.info.id
        assert "@" in on_disk["who"] and on_disk["pid"] > 0 and on_disk["created"]
    assert read_lock(state_path) is None


def test_second_process_is_refused_at_once_with_the_holders_details(state_path, tmp_path):
    process, lock_id = start_holder(state_path, tmp_path, hold=30)
    try:
        started = time.monotonic()
        with pytest.raises(LockHeld) as refused:
            StateLock(state_path, "apply", environment="staging").acquire()
        waited = time.monotonic() - started
        assert waited < 2.0, f"refusal took {waited:.2f}s"  # no waiting, even on a busy machine
        message = str(refused.value)
        assert f"pid {process.pid}" in message, message
        assert "'apply'" in message, message
        assert f"surveyctl --env staging force-unlock {lock_id}" in message
        assert refused.value.holder.id == lock_id
    finally:
        process.kill()
        process.wait()


def test_waiter_gets_the_lock_when_the_holder_releases_within_the_timeout(state_path, tmp_path):
    process, _ = start_holder(state_path, tmp_path, hold=0.5)
    with StateLock(state_path, "apply", timeout=15) as lock:
        assert read_lock(state_path).id == lock.info.id
    assert process.wait(timeout=10) == 0


def test_waiter_gives_up_after_the_timeout_naming_the_wait(state_path, tmp_path):
    process, _ = start_holder(state_path, tmp_path, hold=30)
    try:
        started = time.monotonic()
        with pytest.raises(LockHeld, match=r"after waiting 0\.5s"):
            StateLock(state_path, "apply", timeout=0.5).acquire()
        assert 0.5 <= time.monotonic() - started < 3
    finally:
        process.kill()
        process.wait()


def test_of_processes_racing_for_the_lock_exactly_one_wins(state_path, tmp_path):
    state_path.parent.mkdir(parents=True)
    release = tmp_path / "release"
    racers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                HOLDER,
                str(state_path),
                str(tmp_path / f"r{i}"),
                str(release),
                "until",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    # The winner holds until released, so however slowly the others start, they find it held.
    deadline = time.monotonic() + 60
    while sum(racer.poll() is not None for racer in racers) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    release.write_text("go")
    outputs = [racer.communicate(timeout=60)[0] for racer in racers]
    assert sum("HELD" in out for out in outputs) == 1, outputs
    assert sum("REFUSED" in out for out in outputs) == 3, outputs


def test_of_threads_racing_for_the_lock_exactly_one_wins(state_path):
    barrier = threading.Barrier(6)
    results: list[str] = []
    others_done = threading.Semaphore(0)

    def contend():
        lock = StateLock(state_path, "apply")
        barrier.wait()
        try:
            lock.acquire()
        except LockHeld:
            results.append("refused")
            others_done.release()
            return
        results.append("held")
        for _ in range(5):  # hold until every other thread has tried
            others_done.acquire(timeout=10)
        lock.release()

    threads = [threading.Thread(target=contend) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["held"] + ["refused"] * 5


def test_lock_of_a_dead_process_on_this_host_is_taken_over_with_a_note(state_path, tmp_path):
    process, lock_id = start_holder(state_path, tmp_path, hold=0, mode="crash")
    process.wait(timeout=10)
    notes: list[str] = []
    with StateLock(state_path, "apply", environment="staging", on_note=notes.append) as lock:
        assert read_lock(state_path).id == lock.info.id != lock_id
    (note,) = notes
    assert "took over the state lock of environment 'staging' left by" in note
    assert f"(pid {process.pid})" in note and lock_id in note
    assert "no longer running on this host" in note


def test_leftover_temporary_lock_records_are_removed(state_path):
    state_path.parent.mkdir(parents=True)
    leftover = state_path.parent / ".staging.lock.json.4242.abc.tmp"
    leftover.write_text("{half")
    with StateLock(state_path, "apply"):
        assert not leftover.exists()


def test_force_unlock_with_the_right_id_frees_the_lock(state_path, tmp_path):
    process, lock_id = start_holder(state_path, tmp_path, hold=0, mode="crash")
    process.wait(timeout=10)
    removed = force_unlock(state_path, lock_id)
    assert removed.id == lock_id and removed.operation == "apply"
    with StateLock(state_path, "apply") as lock:
        assert lock.info.id != lock_id


def test_force_unlock_refuses_the_lock_of_a_holder_still_running_on_this_host(state_path):
    with StateLock(state_path, "apply") as lock:
        holder = lock.info
        with pytest.raises(LockError) as refused:
            force_unlock(state_path, holder.id)
        assert read_lock(state_path).id == holder.id
    assert str(refused.value) == (
        f"{lock_file(state_path)}: the lock is held by {holder.describe()}, which is still "
        f"running on this host; let it finish or stop it (kill {os.getpid()}): a command that "
        "ends removes its lock, and one killed leaves a lock the next command takes over"
    )


def test_a_holder_killed_and_not_yet_collected_by_its_parent_is_not_running(state_path, tmp_path):
    process, lock_id = start_holder(state_path, tmp_path, hold=60)
    process.kill()
    time.sleep(0.2)  # dead, but not waited for: a zombie until `wait`
    try:
        assert read_lock(state_path).holder_alive() is False
        assert force_unlock(state_path, lock_id).id == lock_id
    finally:
        process.wait(timeout=10)


def test_force_unlock_with_another_id_leaves_the_lock(state_path):
    with StateLock(state_path, "apply") as lock:
        with pytest.raises(LockError, match=f"the lock has ID {lock.info.id}, not wrong-id"):
            force_unlock(state_path, "wrong-id")
        assert read_lock(state_path).id == lock.info.id


def test_force_unlock_without_a_lock_says_so(state_path):
    with pytest.raises(LockError, match="not locked"):
        force_unlock(state_path, "any")


def test_release_after_a_force_unlock_does_not_remove_the_next_holders_lock(state_path):
    first = StateLock(state_path, "apply")
    first.acquire()
    held_elsewhere(state_path)
    force_unlock(state_path, first.info.id)
    with StateLock(state_path, "state rm") as second:
        first.release()
        assert read_lock(state_path).id == second.info.id


def _remote_record(state_path: Path) -> None:
    """A lock record of a holder on another host, which this host cannot check."""
    state_path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "id": "remote-1",
        "operation": "apply",
        "who": "ci@runner-7",
        "host": "runner-7.invalid",
        "pid": 999999,
        "created": "2026-01-01T00:00:00+00:00",
    }
    lock_file(state_path).write_text(json.dumps(record))


def test_holder_on_another_host_is_not_called_dead(state_path):
    _remote_record(state_path)
    with pytest.raises(LockHeld) as refused:
        StateLock(state_path, "apply").acquire()
    assert "ci@runner-7 (pid 999999)" in str(refused.value)
    assert "on host runner-7.invalid" in str(refused.value)
    assert "force-unlock remote-1" in str(refused.value)


def test_unreadable_lock_record_is_reported_with_its_path(state_path):
    state_path.parent.mkdir(parents=True)
    lock_file(state_path).write_text("{not json")
    with pytest.raises(LockError, match=r"staging\.lock\.json: the lock record is unreadable"):
        StateLock(state_path, "apply").acquire()


def _refusal(state_path: Path) -> str:
    """The sentence an apply's lock at `state_path` is refused with."""
    with pytest.raises(LockError) as refused:
        StateLock(state_path, "apply").acquire()
    return str(refused.value)


@pytest.mark.parametrize("pid", [99999999999, 0, -1], ids=["beyond-pid_t", "zero", "negative"])
def test_a_lock_record_whose_pid_names_no_single_process_is_unreadable(state_path, pid):
    # Refused, not taken over: whoever wrote it may still run.
    _record_of(state_path, pid=pid)
    assert _refusal(state_path) == (
        f"{lock_file(state_path)}: the lock record is unreadable (pid {pid} is not a process "
        "ID); if no surveyctl command is running, delete that file"
    )


@pytest.mark.parametrize(
    ("pid", "one_process"),
    [(1, True), (2**31 - 1, True), (2**31, False), (0, False), (-1, False)],
    ids=["init", "largest-pid_t", "past-pid_t", "zero", "negative"],
)
def test_a_lock_record_may_name_any_process_from_pid_1_to_the_largest_pid_t(pid, one_process):
    assert is_process_id(pid) is one_process


@pytest.mark.parametrize("missing", ["operation", "pid"], ids=["text", "number"])
def test_a_lock_record_without_a_field_names_the_field(state_path, missing):
    _record_of(state_path)
    record = json.loads(lock_file(state_path).read_text())
    del record[missing]
    lock_file(state_path).write_text(json.dumps(record))
    assert _refusal(state_path) == (
        f"{lock_file(state_path)}: the lock record is unreadable (it has no {missing!r}); if no "
        "surveyctl command is running, delete that file"
    )


@pytest.mark.parametrize(
    ("content", "holds"),
    [
        ("null", "null"),
        ("true", "true"),
        ("[]", "a list"),
        ('"apply"', "a string"),
        ("42", "a number"),
    ],
    ids=["null", "true", "list", "string", "number"],
)
def test_a_lock_record_that_is_not_a_json_object_says_what_it_holds(state_path, content, holds):
    state_path.parent.mkdir(parents=True)
    lock_file(state_path).write_text(content)
    assert _refusal(state_path) == (
        f"{lock_file(state_path)}: the lock record is unreadable (it holds {holds}, not an "
        "object with the holder's details); if no surveyctl command is running, delete that file"
    )


@pytest.mark.parametrize(
    ("pid", "holds"),
    [("12a", "a string"), ({"pid": 12}, "an object"), (True, "true"), (12.5, "a number")],
    ids=["string", "object", "true", "fraction"],
)
def test_a_lock_record_whose_pid_is_not_a_number_names_the_field(state_path, pid, holds):
    _record_of(state_path, pid=pid)
    assert _refusal(state_path) == (
        f"{lock_file(state_path)}: the lock record is unreadable (its 'pid' is {holds}, not a "
        "whole number); if no surveyctl command is running, delete that file"
    )


def test_a_lock_record_that_is_not_json_says_so(state_path):
    state_path.parent.mkdir(parents=True)
    lock_file(state_path).write_text("{not json")
    assert "(it is not JSON)" in _refusal(state_path)


def test_a_lock_record_that_is_not_utf8_is_one_sentence(state_path):
    state_path.parent.mkdir(parents=True)
    lock_file(state_path).write_bytes(b"\xff\xfe{}")
    assert _refusal(state_path) == (
        f"{lock_file(state_path)}: the lock record is unreadable (it is not UTF-8 text); if no "
        "surveyctl command is running, delete that file"
    )


def test_a_holder_whose_name_has_a_line_break_is_named_on_one_line(state_path):
    _record_of(state_path, who="ci\nError: forged line", host="runner-7.invalid")
    message = _refusal(state_path)
    assert "\n" not in message and "ci\\u000aError: forged line" in message


def _record_of(state_path: Path, **fields) -> None:
    """Writes a lock record of this host, as a holder would, with `fields` replaced."""
    state_path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "id": "earlier-1",
        "operation": "apply",
        "who": "ci@container",
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "created": "2026-01-01T00:00:00+00:00",
        "started": process_start_time(os.getpid()),
        "boot_id": boot_id(),
        **fields,
    }
    lock_file(state_path).write_text(json.dumps(record))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_live_pid_with_another_start_time_is_not_the_holder_and_its_lock_is_taken_over(
    state_path,
):
    # A container restarted with the same host name: the dead holder's PID is now this
    # process's own, started later than the record says.
    _record_of(state_path, started=process_start_time(os.getpid()) - 1)
    notes: list[str] = []
    with StateLock(state_path, "apply", on_note=notes.append) as lock:
        assert read_lock(state_path).id == lock.info.id != "earlier-1"
    (note,) = notes
    assert "took over the state lock left by ci@container" in note


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_record_from_an_earlier_boot_of_this_host_is_taken_over(state_path):
    _record_of(state_path, boot_id="00000000-0000-0000-0000-000000000000")
    with StateLock(state_path, "apply", on_note=lambda note: None) as lock:
        assert read_lock(state_path).id == lock.info.id


def test_a_live_pid_with_the_recorded_start_time_still_holds_the_lock(state_path):
    _record_of(state_path)
    with pytest.raises(LockHeld, match="locked by ci@container"):
        StateLock(state_path, "apply").acquire()


def test_the_lock_records_its_holders_start_time_and_boot(state_path):
    with StateLock(state_path, "apply"):
        record = json.loads(lock_file(state_path).read_text())
    assert record["started"] == process_start_time(os.getpid())
    assert record["boot_id"] == boot_id()


def test_a_lock_leaves_only_its_guard_beside_the_state(state_path):
    with StateLock(state_path, "apply"):
        pass
    assert sorted(p.name for p in state_path.parent.iterdir()) == ["staging.lock.guard"]


def test_the_lock_record_is_indented_json_with_one_field_a_line(state_path):
    with StateLock(state_path, "apply"):
        lines = lock_file(state_path).read_text().splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert '  "operation": "apply",' in lines


def test_the_lock_record_says_since_when_in_utc(state_path):
    with StateLock(state_path, "apply"):
        record = json.loads(lock_file(state_path).read_text())
    assert record["created"].endswith("+00:00")


def test_a_user_without_a_name_holds_the_lock_as_unknown(state_path, monkeypatch):
    def no_name():
        raise KeyError("getpwuid(): uid not found: 4242")  # a container user without an entry

    monkeypatch.setattr(getpass, "getuser", no_name)
    with StateLock(state_path, "apply"):
        record = json.loads(lock_file(state_path).read_text())
    assert record["who"] == f"unknown@{socket.gethostname()}"


def test_a_lock_taken_for_an_actor_is_refused_to_others_naming_that_actor(state_path):
    # $SURVEYCTL_ACTOR: a CI runner's account alone says nobody whom to ask.
    account = f"{getpass.getuser()}@{socket.gethostname()}"
    with StateLock(state_path, "apply", actor="alice"):
        refusal = _refusal(state_path)
    assert refusal.startswith(f"the state is locked by alice on {account} (pid {os.getpid()})")


@pytest.mark.parametrize("actor", [None, "", "account"], ids=["none", "empty", "the-account"])
def test_a_lock_taken_without_another_actor_names_the_account_alone(state_path, actor):
    account = f"{getpass.getuser()}@{socket.gethostname()}"
    with StateLock(state_path, "apply", actor=account if actor == "account" else actor):
        assert read_lock(state_path).who == account


def test_the_lock_makes_the_state_folders_it_needs(tmp_path):
    state_path = tmp_path / ".surveyctl" / "state" / "staging.json"
    with StateLock(state_path, "apply") as lock:
        assert read_lock(state_path).id == lock.info.id


def test_a_lock_taken_twice_by_one_command_is_refused(state_path):
    with StateLock(state_path, "apply") as lock:
        with pytest.raises(LockError, match="this lock is already held by this command"):
            lock.acquire()


def test_a_released_lock_can_be_taken_again(state_path):
    lock = StateLock(state_path, "apply")
    lock.acquire()
    lock.release()
    assert lock.acquire().id == read_lock(state_path).id
    lock.release()


def test_asking_whether_the_holder_runs_leaves_it_running(state_path, tmp_path):
    release = tmp_path / "release"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(state_path), str(tmp_path / "ready"), str(release)]
        + ["until"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "ready").exists():
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        with pytest.raises(LockHeld):
            StateLock(state_path, "apply").acquire()
        time.sleep(0.3)
        assert process.poll() is None, "the holder was stopped by the check"
        release.write_text("go")
        assert "HELD" in process.communicate(timeout=20)[0]
    finally:
        process.kill()
        process.wait()


def test_a_refusal_without_a_timeout_waits_for_nothing_and_says_nothing(state_path):
    _remote_record(state_path)
    notes: list[str] = []
    started = time.monotonic()
    with pytest.raises(LockHeld):
        StateLock(state_path, "apply", on_note=notes.append).acquire()
    assert notes == []
    assert time.monotonic() - started < 0.5


def test_a_refusal_names_the_environment_and_since_when_the_lock_is_held(state_path):
    _remote_record(state_path)
    with pytest.raises(LockHeld) as refused:
        StateLock(state_path, "apply", environment="staging").acquire()
    message = str(refused.value)
    assert message.startswith("the state of environment 'staging' is locked by ci@runner-7")
    assert "since 2026-01-01T00:00:00+00:00 for 'apply'" in message


def test_a_refusal_without_an_environment_names_the_plain_force_unlock(state_path):
    _remote_record(state_path)
    with pytest.raises(LockHeld) as refused:
        StateLock(state_path, "apply").acquire()
    assert str(refused.value).startswith("the state is locked by ci@runner-7")
    assert "run `surveyctl force-unlock remote-1`" in str(refused.value)


def test_a_refusal_by_a_holder_on_this_host_names_no_host(state_path, tmp_path):
    process, lock_id = start_holder(state_path, tmp_path, hold=30)
    try:
        with pytest.raises(LockHeld) as refused:
            StateLock(state_path, "apply").acquire()
        assert f"(lock ID {lock_id}); wait for it" in str(refused.value)
        assert " on host " not in str(refused.value)
    finally:
        process.kill()
        process.wait()


def test_a_wait_for_the_lock_is_announced_once_naming_the_holder(state_path):
    _remote_record(state_path)
    notes: list[str] = []
    with pytest.raises(LockHeld):
        StateLock(
            state_path, "apply", timeout=0.5, environment="staging", on_note=notes.append
        ).acquire()
    assert notes == [
        "waiting up to 0.5s for the state lock of environment 'staging', held by ci@runner-7 "
        "(pid 999999) since 2026-01-01T00:00:00+00:00 for 'apply' (lock ID remote-1)"
    ]


def test_a_wait_for_a_holder_not_known_yet_is_announced_without_one():
    # The PostgreSQL backend, whose holder's row may not be written yet, says it so.
    assert waiting_note("staging", None, 30) == (
        "waiting up to 30s for the state lock of environment 'staging'"
    )


@pytest.mark.parametrize(
    "stop, how, code",
    [
        (KeyboardInterrupt(), "interrupted", 130),
        (Stopped(signal.SIGTERM), "stopped by SIGTERM", 143),
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_a_wait_for_the_lock_that_is_stopped_says_so_and_changes_nothing(
    state_path, stop, how, code
):
    _remote_record(state_path)

    def stopped(note):  # the signal arrives as the wait begins
        raise stop

    lock = StateLock(state_path, "apply", timeout=30, environment="staging", on_note=stopped)
    with pytest.raises(LockWaitInterrupted) as interrupted:
        lock.acquire()
    assert str(interrupted.value) == (
        f"{how} while waiting for the state lock of environment 'staging' (held by "
        "ci@runner-7 (pid 999999) since 2026-01-01T00:00:00+00:00 for 'apply' (lock ID "
        "remote-1)); nothing was changed"
    )
    assert interrupted.value.exit_code == code
    assert read_lock(state_path).id == "remote-1"


def test_an_interrupted_wait_for_a_holder_not_known_yet_names_none():
    interrupted = wait_interrupted("staging", None, KeyboardInterrupt())
    assert str(interrupted) == (
        "interrupted while waiting for the state lock of environment 'staging'; nothing was changed"
    )


def test_a_write_after_the_lock_was_force_unlocked_is_refused_in_one_sentence(state_path):
    store = FileStateStore(state_path, "staging")
    with pytest.raises(LockLost) as lost:
        with store.locked("apply") as held:
            held_elsewhere(state_path)  # a teammate's force-unlock
            force_unlock(state_path, held.id)
            store.journal_create("Survey/brand-tracker", {})
    assert str(lost.value) == (
        f"this command lost the state lock of environment 'staging' in {state_path} (a "
        "`force-unlock`, or the end of the session that held it: a database restart or a "
        "dropped connection), so its state write was refused and it starts no further change; "
        "run `surveyctl plan` to see what is left to do"
    )


def test_a_check_before_a_change_after_a_force_unlock_says_no_state_write_was_refused(
    state_path,
):
    # The applier's check before each marketplace write: no write was refused, and saying so
    # would send a person looking for one.
    store = FileStateStore(state_path, "staging")
    with pytest.raises(LockLost) as lost:
        with store.locked("apply") as held:
            held_elsewhere(state_path)
            force_unlock(state_path, held.id)
            store.check_lock()
    assert str(lost.value) == (
        f"this command lost the state lock of environment 'staging' in {state_path} (a "
        "`force-unlock`, or the end of the session that held it: a database restart or a "
        "dropped connection), so it starts no further change; run `surveyctl plan` to see what "
        "is left to do"
    )


def test_a_lost_lock_said_without_more_is_a_refused_state_write():
    # How PostgreSQL's store says it when a state write finds its session's lock gone.
    assert str(lock_lost("staging", "PostgreSQL db.example/surveys (schema surveyctl)")) == (
        "this command lost the state lock of environment 'staging' in PostgreSQL "
        "db.example/surveys (schema surveyctl) (a `force-unlock`, or the end of the session that "
        "held it: a database restart or a dropped connection), so its state write was refused "
        "and it starts no further change; run `surveyctl plan` to see what is left to do"
    )


def test_force_unlock_after_the_lock_was_released_says_there_is_nothing_to_unlock(state_path):
    with StateLock(state_path, "apply") as lock:
        lock_id = lock.info.id
    with pytest.raises(LockError) as refused:
        force_unlock(state_path, lock_id)
    assert str(refused.value) == (
        f"{lock_file(state_path)}: the state is not locked, so there is nothing to unlock"
    )


def test_an_unreadable_lock_record_says_to_delete_it_when_no_command_runs(state_path):
    state_path.parent.mkdir(parents=True)
    lock_file(state_path).write_text("{not json")
    with pytest.raises(LockError) as refused:
        StateLock(state_path, "apply").acquire()
    assert str(refused.value).endswith("; if no surveyctl command is running, delete that file")


def test_a_file_where_the_state_folder_should_be_refuses_the_lock_in_one_sentence(state_path):
    state_path.parent.write_text("not a folder")
    expected = f"{state_path.parent} is a file where a folder is expected"
    with pytest.raises(LockError, match=f"^cannot take the state lock: {expected}$"):
        StateLock(state_path, "apply").acquire()
    with pytest.raises(LockError, match=f"^cannot read the state lock: {expected}$"):
        read_lock(state_path)


def test_a_folder_where_the_lock_record_should_be_is_one_sentence(state_path):
    lock_file(state_path).mkdir(parents=True)
    assert _refusal(state_path) == (
        f"cannot read the state lock: {lock_file(state_path)} is a folder where a file is "
        "expected; remove or rename it"
    )


def test_a_folder_where_the_lock_guard_should_be_is_named_in_one_sentence(state_path):
    guard = state_path.parent / "staging.lock.guard"
    guard.mkdir(parents=True)
    expected = f"{guard} is a folder where a file is expected; remove or rename it"
    with pytest.raises(LockError) as refused:
        StateLock(state_path, "apply").acquire()
    assert str(refused.value) == f"cannot take the state lock: {expected}"
    with pytest.raises(LockError) as refused:
        force_unlock(state_path, "any")
    assert str(refused.value) == f"cannot remove the state lock: {expected}"


def test_a_release_the_file_system_refuses_is_one_sentence_naming_the_file(state_path):
    guard = state_path.parent / "staging.lock.guard"
    lock = StateLock(state_path, "apply")
    lock.acquire()
    guard.unlink()
    guard.mkdir()  # replaced by hand while the command ran
    with pytest.raises(LockError) as refused:
        lock.release()
    assert str(refused.value) == (
        f"cannot release the state lock: {guard} is a folder where a file is expected; "
        "remove or rename it"
    )


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_live_pid_recorded_with_a_later_processs_start_time_is_not_the_holder(state_path):
    later = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _record_of(state_path, started=process_start_time(later.pid))
        with StateLock(state_path, "apply", on_note=lambda note: None) as lock:
            assert read_lock(state_path).id == lock.info.id != "earlier-1"
    finally:
        later.kill()
        later.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("name", ["a) b", "prüfung"], ids=["parenthesis", "not-ascii"])
def test_the_start_time_of_a_process_of_any_name_is_read(tmp_path, name):
    program = tmp_path / name
    program.symlink_to(sys.executable)
    process = subprocess.Popen([str(program), "-c", "import time; time.sleep(30)"])
    try:
        stat = Path(f"/proc/{process.pid}/stat")
        deadline = time.monotonic() + 20
        while name.encode()[:15] not in stat.read_bytes():  # until the program is running
            assert time.monotonic() < deadline
            time.sleep(0.02)
        fields = stat.read_bytes().rsplit(b")", 1)[1].split()
        assert process_start_time(process.pid) == int(fields[19])
    finally:
        process.kill()
        process.wait()


def test_a_lock_record_that_cannot_be_written_is_named_in_the_refusal(tmp_path):
    # A name that leaves the guard within the system's limit but not the record's temporary
    # file: the refusal names the record, not the guard that was taken.
    state_path = tmp_path / "state" / ("e" * 235 + ".json")
    with pytest.raises(LockError) as refused:
        StateLock(state_path, "apply").acquire()
    assert str(refused.value) == (
        f"cannot take the state lock at {lock_file(state_path)}: File name too long"
    )
