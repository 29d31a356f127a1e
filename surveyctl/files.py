"""Writing a file so that a reader sees the old content or the new, never half of either.

The text goes to a temporary file in the same folder, which is then renamed over the target;
the temporary file is removed if anything fails. `durable=True` also flushes the data and the
folder entry to disk before the command says the file is written, for files whose loss after
a power cut would lose work: the state, a saved plan, an export, the manifests `import`
writes, the files of `init` and of `fmt`, a conformance report (without it, a power cut a
few seconds after the rename can leave an empty file, or none, where the command reported
one). Caches (parsed manifests, the attribute catalogue) are only whole or absent: a cache
lost is read afresh. A file written so has mode 0600, whatever the umask, unless the caller
names another (`init` and `fmt` write files of the project, 0644 or the file's own mode): the
mode is set before the rename, so the file never shows with another. `open_private` gives
files appended to mode 0600, and `append_lines` appends whole lines or none.
`shown_path` is how paths of the project appear in findings and plans; `os_error_message` is
one sentence for what the file system refused (a file where a folder should be, a folder where
a file should be, a read-only folder, a full disk, a quota or a limit on a file's size).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TextIO

# The mode of every file surveyctl writes with the account's data in it: its owner's alone.
PRIVATE_MODE = 0o600


def write_atomically(
    path: Path, data: str | bytes, *, durable: bool = False, mode: int = PRIVATE_MODE
) -> None:
    """Replaces `path` with `data` (text, written as UTF-8, or bytes) in one step, with file
    mode `mode`; OSError when it cannot."""
    opened = "wb" if isinstance(data, bytes) else "w"
    with _replacing(path, opened, durable=durable, newline=None, mode=mode) as out:
        out.write(data)


@contextmanager
def replacing(path: Path, *, durable: bool = False, newline: str | None = None) -> Iterator[TextIO]:
    """A text file written as the block goes, that replaces `path` in one step when the block
    ends without an error; on an error `path` stays as it was and the written part is removed
    (an export stopped half-way leaves no partial file that could pass for a whole one).

    A device or a pipe (`--out /dev/stdout`) is written in place: replaced, it would become a
    regular file, and as root a rename replaces even /dev/null.
    """
    with _replacing(path, "w", durable=durable, newline=newline, mode=PRIVATE_MODE) as out:
        yield out


@contextmanager
def _replacing(
    path: Path, opened: str, *, durable: bool, newline: str | None, mode: int
) -> Iterator[IO]:
    """`replacing`, for a file opened as `opened` ("w" for text, "wb" for bytes), whose file
    mode is `mode`."""
    path = Path(path)
    encoding = None if "b" in opened else "utf-8"
    if path.exists() and not path.is_file() and not path.is_dir():
        with open(path, opened, encoding=encoding, newline=newline) as out:
            yield out
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, mode)  # mkstemp's 0600 less the umask's bits: `mode` exactly
        with os.fdopen(handle, opened, encoding=encoding, newline=newline) as out:
            yield out
            if durable:
                # The data reaches the disk before the rename makes it the file: a power cut
                # after the rename then finds the new content, not an empty file.
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            Path(temporary).unlink(missing_ok=True)
        except OSError:
            pass  # a folder turned read-only: the error that stopped the write says more
        raise
    if durable:
        fsync_directory(path.parent)  # the rename itself, else the old file may come back


def open_private(path: Path, flags: int) -> int:
    """A descriptor of `path` opened with `flags` (os.O_CREAT among them), whose mode is 0600
    whatever the umask, also when an earlier surveyctl made it readable by others: the file
    holds the account's data (state, its change log and history, journals)."""
    descriptor = os.open(path, flags, PRIVATE_MODE)
    try:
        os.fchmod(descriptor, PRIVATE_MODE)
    except OSError:
        pass  # another user's file, writable by this one: its owner decides its mode
    return descriptor


def append_lines(path: Path, data: bytes) -> None:
    """Appends `data`, whole lines, to `path` (created 0600), starting on a line of its own,
    and syncs it; OSError when it cannot. A file system that takes only a part (a full disk
    takes what fits, then refuses the rest) finds the file cut back to what it held: a journal
    never ends in half a line of this write."""
    descriptor = open_private(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.lseek(descriptor, 0, os.SEEK_END)
        if size and os.pread(descriptor, 1, size - 1) != b"\n":
            data = b"\n" + data  # a line cut short by a kill stays a line of its own
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = view[written:]
            os.fsync(descriptor)
        except OSError:
            try:
                os.ftruncate(descriptor, size)
            except OSError:
                pass  # the half line stays; readers skip a line that is not whole
            raise
    finally:
        os.close(descriptor)


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
    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        # A full disk, a quota or a limit on the size of a file: the file being written is
        # what does not fit, and naming it (not its folder) says which write failed.
        reason = (exc.strerror or os.strerror(exc.errno)).lower()
        subject = "the file" if str(path) in action else str(path)
        return f"cannot {action}: {subject} does not fit ({reason}); free some space"
    return f"cannot {action} at {path}: {exc.strerror or exc}"


def file_in_the_way(path: Path) -> Path | None:
    """The first folder on the way to `path` that exists as something else than a folder."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
        if not parent.exists():
            return None
    return None
