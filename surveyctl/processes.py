"""Whether a process of this host still runs, asked of a record that names it: a lock's
holder, an adjustment's submitter.

A PID alone does not name a process: a container restarted with the same host name starts a
new PID namespace, where the dead holder's PID soon belongs to another process (often the
next surveyctl itself). So a record also keeps the process's start time (clock ticks since
boot, from /proc) and the kernel's boot ID: a live process with the recorded PID but another
start time, or a record from an earlier boot, is not the recorded process. Where /proc is
absent, or in records written before these fields, the PID alone decides. A process that has
ended but not been collected by its parent (a zombie) runs no more.

Kept apart from the locks that ask: these are questions to the operating system, the same for
every record that names a process.
"""

from __future__ import annotations

import os
from pathlib import Path

# A pid_t is a C int; os.kill overflows past it, and 0 or below names a process group, which
# would answer for a holder that is no process at all.
_PID_MAX = 2**31 - 1


def is_process_id(pid: int) -> bool:
    """Whether `pid` can be the ID of one process, and so be asked whether it runs."""
    return 1 <= pid <= _PID_MAX


def process_running(pid: int, started: int | None, boot: str | None) -> bool:
    """Whether the process of this host that had `pid`, start time `started` and ran under
    kernel boot `boot` still runs (None for what was not recorded: not checked)."""
    if boot is not None and boot_id() not in (None, boot):
        return False  # the host was restarted since: nothing of that boot still runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if _zombie(pid):
        return False  # killed, its exit not yet collected by its parent: it runs no more
    if started is not None:
        now = process_start_time(pid)
        if now is not None and now != started:
            return False  # the PID was reused by another process
    return True


def _stat_fields(pid: int) -> list[str]:
    """The fields of `/proc/PID/stat` after the command name, field 3 (the state) first; empty
    where that cannot be read (no such process, or no /proc). The command name (field 2) is in
    parentheses and may hold spaces and parentheses: the fields start after the last `)`."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return text[text.rindex(")") + 2 :].split()
    except (OSError, ValueError):
        return []


def _zombie(pid: int) -> bool:
    """Whether process `pid` has ended and waits for its parent to collect it (Linux /proc,
    state Z); False where that cannot be read."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] == "Z"


def process_start_time(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (Linux /proc, field 22); None
    elsewhere."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19])
    except (ValueError, IndexError):
        return None


def boot_id() -> str | None:
    """The ID of the running kernel boot (Linux); None elsewhere."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return None
