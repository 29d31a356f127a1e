"""The file that keeps the service's answer to a write that moves money (`adjust --output`).

Once an adjustment is submitted its answer (the adjustment id and summary) cannot be asked
for again, so the file must be able to take it before anything is sent. `AnswerFile.reserve`
checks that the target is (or will be) a regular file, creates a temporary file beside it and
allocates room for the answer there, synced: a full file system, a read-only folder, a device
such as /dev/full or a FIFO with no reader is refused while nothing has been sent yet.
`write` then fills the reserved file and renames it over the target in one step, so an
existing answer file is never truncated by a write that fails half-way.

It keeps its own write and rename rather than `files.write_atomically`: there the temporary
file is made, filled and renamed in one call, while here it must exist, with its room taken,
before the request is sent, and be filled only once the answer came. What it gives is the
same: the file is whole or absent, mode 0600, and durable (data and folder entry synced).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from tempfile import mkstemp

from surveyctl.files import PRIVATE_MODE, fsync_directory
from surveyctl.redacting import redacted
from surveyctl.safety import OutputPathError, check_output_path
from surveyctl.yamlsafe import special_file_kind

_BLOCK = 64 * 1024


class AnswerFile:
    """An output file reserved before a write to the service; `write` once the answer came,
    `discard` in any case (the reservation is removed when the answer was not written)."""

    def __init__(self, path: Path, option: str, temporary: Path):
        self.path = path
        self.option = option
        self._temporary: Path | None = temporary

    @classmethod
    def reserve(cls, path: Path, option: str, size: int) -> AnswerFile:
        """Checks `path` and reserves `size` bytes beside it; OutputPathError when it cannot
        take an answer of that size."""
        shown = f"{option} {path}"
        special = special_file_kind(path)
        if special is not None:
            raise OutputPathError(
                f"cannot write {shown}: it is {special}, not a regular file, and the service's "
                "answer could be lost there; name a file"
            )
        check_output_path(path, option)
        try:
            handle, temporary = mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        except OSError as exc:
            raise OutputPathError(f"cannot write {shown}: {_reason(exc)}") from exc
        try:
            _allocate(handle, size)
        except OSError as exc:
            os.close(handle)
            Path(temporary).unlink(missing_ok=True)
            raise OutputPathError(
                f"cannot write {shown}: room for the answer cannot be reserved in "
                f"{path.parent} ({_reason(exc)})"
            ) from exc
        os.close(handle)
        return cls(path, option, Path(temporary))

    def write(self, text: str) -> None:
        """Writes `text` into the reserved file and renames it over the target; OSError when
        the file system still refuses (the target is then left as it was)."""
        if self._temporary is None:
            raise RuntimeError("the answer file was written or discarded already")
        # The service's answer is kept for people to read and pass on: redacted as all output.
        data = redacted(text).encode("utf-8")
        descriptor = os.open(self._temporary, os.O_WRONLY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
            os.ftruncate(descriptor, len(data))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.chmod(self._temporary, PRIVATE_MODE)  # the account's adjustment: its owner's alone
        os.replace(self._temporary, self.path)
        self._temporary = None
        fsync_directory(self.path.parent)

    def discard(self) -> None:
        """Removes the reservation (nothing was written to the target)."""
        if self._temporary is not None:
            try:
                self._temporary.unlink(missing_ok=True)
            except OSError:
                pass  # a file system turned read-only: the reservation stays, harmless
            self._temporary = None


def _allocate(descriptor: int, size: int) -> None:
    """Makes the file hold `size` bytes on disk, synced: ENOSPC now rather than later."""
    try:
        os.posix_fallocate(descriptor, 0, size)
    except (AttributeError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        # No fallocate here (or on this file system): write the bytes themselves.
        remaining = size
        while remaining > 0:
            remaining -= os.write(descriptor, b"\0" * min(remaining, _BLOCK))
    os.fsync(descriptor)


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()
