"""Text on its way to a person or to a file a person shares, with the process's secrets taken out.

`surveyctl.api.secrets` holds the secrets (the API key every client registers, the state
database's DSN and password) and `redact`. This module applies it where text leaves surveyctl,
once for every writer rather than at each call site: the CLI wraps stdout and stderr in a
`RedactingWriter` for the whole command (`surveyctl.cli.streams.redacting`), and the writers of
exports and answer files wrap the file they write.

It imports nothing but the standard library: `surveyctl --help` must stay light, and importing
`surveyctl.api` loads the HTTP stack. No secret can be held before that module is imported, so
until then text passes as it is, at the cost of one dictionary look-up a write.
"""

from __future__ import annotations

import sys
import threading
from typing import IO, Any

_SECRETS_MODULE = "surveyctl.api.secrets"


def redacted(text: str) -> str:
    """`text` without any secret this process holds (as it is when it holds none)."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.holds_any():
        return text
    return secrets.redact(text)


class RedactingWriter:
    """A text stream that writes what it is given to `stream`, redacted.

    A secret is only found whole, so text is passed on a line at a time: what follows the last
    line end of a write waits for the next one, or for `flush` (a prompt, a progress line
    redrawn in place, the end of the command). A secret split over two writes with a flush
    between them is not found; every writer of surveyctl writes a value in one piece.

    Its `buffer`, where click writes bytes (the shell completion's script), redacts as well.
    """

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self._pending = ""
        self._lock = threading.Lock()  # progress lines come from apply's worker threads

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            # click asks a stream whether it takes bytes by writing b"" to it.
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            data = self._pending + text
            cut = data.rfind("\n") + 1
            self._pending = data[cut:]
            if cut:
                self.stream.write(redacted(data[:cut]))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                self.stream.write(redacted(self._pending))
                self._pending = ""
        self.stream.flush()

    def close(self) -> None:
        """Writes what waits; the stream itself belongs to whoever gave it."""
        self.flush()

    @property
    def closed(self) -> bool:
        return self.stream.closed

    @property
    def encoding(self) -> str | None:
        return getattr(self.stream, "encoding", None)

    @property
    def errors(self) -> str | None:
        return getattr(self.stream, "errors", None)

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def readable(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    @property
    def buffer(self) -> _RedactingBuffer:
        return _RedactingBuffer(self)

    def __getattr__(self, name: str) -> Any:
        stream = self.__dict__.get("stream")  # None while being made, or copied
        if stream is None:
            raise AttributeError(name)
        return getattr(stream, name)


class _RedactingBuffer:
    """The bytes side of a RedactingWriter: each write is UTF-8 text for the writer (bytes
    that are not UTF-8 kept as they are), redacted whole."""

    def __init__(self, writer: RedactingWriter):
        self._writer = writer

    def write(self, data: bytes) -> int:
        text = bytes(data).decode("utf-8", "surrogateescape")
        self._writer.flush()  # text written before comes first
        target = getattr(self._writer.stream, "buffer", None)
        if target is None:
            self._writer.stream.write(redacted(text))
        else:
            target.write(redacted(text).encode("utf-8", "surrogateescape"))
        return len(data)

    def flush(self) -> None:
        self._writer.flush()
        target = getattr(self._writer.stream, "buffer", None)
        if target is not None:
            target.flush()


def holds_secret(value: Any) -> bool:
    """Whether `value` (text, or data as JSON holds it) carries a secret this process holds,
    in any spelling `redact` knows."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.holds_any():
        return False
    import json  # here: the standard streams' wrapper, loaded by every start, needs none

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return secrets.redact(text) != text
