"""One sentence for what the file system refused: a file where a folder should be, a folder
where a file should be, a read-only folder, a full disk."""

from __future__ import annotations

import errno
from pathlib import Path


def os_error_message(exc: OSError, path: Path, action: str) -> str:
    """Why `action` on `path` failed, in words a user can act on."""
    path = Path(path)
    blocker = file_in_the_way(path)
    if blocker is not None:
        return f"cannot {action}: {blocker} is a file where a folder is expected"
    if isinstance(exc, IsADirectoryError) or exc.errno == errno.EISDIR:
        return f"cannot {action}: {path} is a folder where a file is expected; remove or rename it"
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"cannot {action}: permission denied in {path.parent} (the folder or the file is "
            "read-only for this user)"
        )
    if exc.errno == errno.ENOSPC:
        return f"cannot {action}: no space left on the device holding {path.parent}"
    return f"cannot {action} at {path}: {exc.strerror or exc}"


def file_in_the_way(path: Path) -> Path | None:
    """The first folder on the way to `path` that exists as something else than a folder."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
        if not parent.exists():
            return None
    return None
