"""Writing a file so that a reader sees the old content or the new, never half of either.

The text goes to a temporary file in the same folder, which is then renamed over the target;
the temporary file is removed if anything fails. `durable=True` also flushes the data and the
folder entry to disk, for files whose loss after a crash would lose work (state).
`shown_path` is how paths of the project appear in findings and plans.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str, *, durable: bool = False) -> None:
    """Replaces `path` with `text` in one step; OSError when it cannot."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if durable:
        fsync_directory(path.parent)


def fsync_directory(folder: Path) -> None:
    """Makes the folder's entries (a rename) durable."""
    # The rename is durable only once the directory entry is on disk; not every OS allows it.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def shown_path(path: Path) -> Path:
    """`path` relative to the current folder when it lies inside it, as findings and plans
    name manifests."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd())
    except ValueError:  # outside the current folder: the whole path says where
        return path
