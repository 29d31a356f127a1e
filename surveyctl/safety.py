"""The safety model every command that writes to the service or moves money follows.

- Output paths are checked before the first request (`check_output_path`): an adjustment
  submitted and then lost to a missing folder is money moved with no record of it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from surveyctl.errors import SurveyctlError


class OutputPathError(SurveyctlError):
    """An output file named on the command line cannot be written."""


def check_output_path(path: Path, option: str, *, make_folders: bool = False) -> None:
    """Refuses an output path that cannot be written, before anything is sent.

    The folder is probed by creating (and removing) a file in it, which is what the write
    itself does (an atomic write creates a temporary file beside the target): so read-only
    mounts, permissions and pseudo file systems such as /proc are judged as the kernel judges
    them, also for root. With `make_folders` the missing folders will be created by the
    command, so the nearest existing one is probed.
    """
    shown = f"{option} {path}"
    if path.is_dir():
        raise OutputPathError(f"cannot write {shown}: it is a folder, not a file")
    folder = path.parent
    if make_folders:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    if not folder.exists():
        raise OutputPathError(f"cannot write {shown}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise OutputPathError(f"cannot write {shown}: {folder} is not a folder")
    if path.exists() and not path.is_file():
        # A device or pipe (/dev/stdout, /dev/null) is written in place, never replaced.
        if os.access(path, os.W_OK):
            return
        raise OutputPathError(f"cannot write {shown}: permission denied")
    try:
        if path.exists():
            open(path, "ab").close()  # opened for writing, not changed
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".surveyctl-", suffix=".probe")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise OutputPathError(
            f"cannot write {shown}: a file cannot be written in {folder} ({reason})"
        ) from exc
