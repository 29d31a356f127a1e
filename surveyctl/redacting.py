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

import atexit
import codecs
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

_SECRETS_MODULE = "surveyctl.api.secrets"


def redacted(text: str) -> str:
    """`text` without any secret this process holds (as it is when it holds none)."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.holds_any():
        return text
    return secrets.redact(text)


def _redacted_open(text: str) -> tuple[str, str]:
    """`text` redacted, without and with its last characters that could begin a secret."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.holds_any():
        return text, ""
    return secrets.redact_open(text)


class RedactingWriter:
    """A text stream that writes what it is given to `stream`, redacted.

    A secret is only found whole, and writers hand text over in pieces (a line written in
    parts, `print(a, b)`, rich's segments, a page of an export), so a piece is passed on
    redacted together with what came before it, except for its last characters when they could
    be the beginning of a secret (a key starting `sk-`, a piece ending `... sk-`): those wait
    for the next piece, which shows whether the rest of the secret follows. So does a secret
    whole at the very end that the next piece may spell longer (a key ending in `%`, and the
    next piece beginning `25`): redacted at once, it would leave that `25` after
    "[redacted]". Text that could begin no secret, which is nearly all, goes out at once.
    `flush` keeps them waiting too (click and rich flush after every call); they go out,
    redacted, on `close`, when the process ends (`atexit`), and while a question waits for its
    answer (`nothing_held`).

    Its `buffer`, where click writes bytes (the shell completion's script), takes bytes into
    the same text: a character split between two writes of bytes is decoded whole.
    """

    def __init__(self, stream: IO[str]):
        self.stream = stream
        # What may begin a secret, redacted already but for a secret whole at its end that
        # the next piece may lengthen (`redact_open`): every way out redacts it again.
        self._held = ""
        self._decoder: codecs.IncrementalDecoder | None = None  # made by `buffer`
        self._bytes: _RedactingBuffer | None = None
        self._lock = threading.Lock()  # progress lines come from apply's worker threads

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            # click asks a stream whether it takes bytes by writing b"" to it.
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._pass_on(self._held + text, hold=not _ASKING)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Passes on the stream's own buffer; what may begin a secret still waits (`close`)."""
        if _ASKING:
            self.release()
        else:
            self.stream.flush()

    def release(self) -> None:
        """Writes what waits, redacted, and flushes: the end of the output, or a question."""
        with self._lock:
            rest = self._decoder.decode(b"", final=True) if self._decoder else ""
            self._pass_on(self._held + rest, hold=False)
        self.stream.flush()

    def close(self) -> None:
        """Writes what waits; the stream itself belongs to whoever gave it."""
        self.release()

    def _pass_on(self, text: str, *, hold: bool) -> None:
        shown, self._held = _redacted_open(text) if hold else (redacted(text), "")
        if self._held:
            _HOLDING.add(self)  # kept until it is written, though its owner let it go
        else:
            _HOLDING.discard(self)
        if shown:
            self._emit(shown)

    def _emit(self, text: str) -> None:
        try:
            self.stream.write(text)
        except UnicodeEncodeError:
            # Bytes that were not UTF-8, from `buffer`: written back as the bytes they were.
            target = getattr(self.stream, "buffer", None)
            if target is None:
                raise
            self.stream.flush()
            target.write(text.encode(self.stream.encoding or "utf-8", "surrogateescape"))

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
        if self._bytes is None:
            self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
            self._bytes = _RedactingBuffer(self, self._decoder)
        return self._bytes

    def __getattr__(self, name: str) -> Any:
        stream = self.__dict__.get("stream")  # None while being made, or copied
        if stream is None:
            raise AttributeError(name)
        return getattr(stream, name)


class _RedactingBuffer:
    """The bytes side of a RedactingWriter: bytes as UTF-8 text for the writer (bytes that are
    not UTF-8 kept as they are), held and redacted with the text written around them."""

    def __init__(self, writer: RedactingWriter, decoder: codecs.IncrementalDecoder):
        self._writer, self._decoder = writer, decoder

    def write(self, data: bytes) -> int:
        self._writer.write(self._decoder.decode(bytes(data)))
        return len(data)

    def flush(self) -> None:
        self._writer.flush()


# The writers that hold text, so that it is written at the end and before a question.
_HOLDING: set[RedactingWriter] = set()
_ASKING = False


def release_all() -> None:
    """Writes what every writer holds, redacted (at exit, before a question): a line without
    its end is not lost, and a question's last characters are seen before the answer is
    read. A writer whose reader went away is passed over: nothing more can reach it."""
    for writer in list(_HOLDING):
        try:
            writer.release()
        except (OSError, ValueError):
            pass


@contextmanager
def nothing_held() -> Iterator[None]:
    """While a question waits for its answer, every writer passes all it is given on at once,
    redacted, and what was held goes out first: a question whose last characters could begin a
    secret must still be read whole before the person answers. The person's answer, typed
    between the question and what follows, splits what is written before from what after."""
    global _ASKING
    release_all()
    asking, _ASKING = _ASKING, True
    try:
        yield
    finally:
        _ASKING = asking


atexit.register(release_all)


def holds_secret(value: Any) -> bool:
    """Whether `value` (text, or data as JSON holds it) carries a secret this process holds,
    in any spelling `redact` knows."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.holds_any():
        return False
    import json  # here: the standard streams' wrapper, loaded by every start, needs none

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return secrets.redact(text) != text
