"""Manifest files `fmt` found in the canonical layout before, kept by their content: a file whose
text is one found formatted is not laid out again.

Laying a file out is ruamel.yaml's round trip (reading it with its comments and writing it
again), pure Python: about 7.5 ms of CPU a manifest of 2 quotas on a slow 2-core machine, 65 %
of it reading and 30 % writing; what `fmt` does around it is under 0.2 ms. A `fmt --check` (the
pre-commit hook, a CI job that keeps the cache folder) mostly meets files it has seen formatted
before, and each of them came out unchanged then: the SHA-256 of such a text is kept, and
found again in a fraction of a millisecond.

Only a text that the layout was seen to give back unchanged is kept: not a file `fmt` rewrote,
nor one it could not lay out, so every "would reformat" and every error comes from the layout
itself. A pack is named by the SHA-256 of everything that decides the layout besides the text
(the layout's source file, ruamel.yaml's version, Python's version) and of the paths given:
another surveyctl or another ruamel.yaml lays every file out afresh. It holds the texts of the
last run over those paths that were found formatted, and is written only when that set
changed. It lives beside the cache of manifests read before (`surveyctl.manifests.cache`), in
the user's own cache folder under `formatted/`, never in the project, and is read with bounded
size and checked shape: a pack that is not understood is no pack.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import orjson

from surveyctl.files import write_atomically
from surveyctl.manifests.cache import _remove_unused, _touch, own_folder

FORMAT = b"surveyctl formatted manifests 1"
MAX_PACK_BYTES = 64_000_000  # 65 bytes an entry: about a million files
_DIGEST_LENGTH = 64


class FormattedCache:
    """The texts of one set of manifest paths found formatted by the last `fmt` over them."""

    def __init__(self, path: Path):
        self.path = path
        self._found = _read_pack(path)
        self._kept: set[str] = set()
        self.hits = 0

    @classmethod
    def at(cls, folder: Path, paths: Iterable[str | Path]) -> FormattedCache | None:
        """The pack of `paths` in `folder` (made, private to the user, when missing); None when
        the folder cannot be made or may be written by another user."""
        if not own_folder(folder):
            return None
        digest = hashlib.sha256(_layout_fingerprint())
        for path in sorted(os.path.abspath(path) for path in paths):
            digest.update(os.fsencode(path) + b"\0")
        return cls(folder / f"{digest.hexdigest()}.json")

    def formatted(self, text: str) -> bool:
        """Whether `text` was found formatted before (then it is kept for the next run)."""
        key = _key(text)
        if key in self._found:
            self._kept.add(key)
            self.hits += 1
            return True
        return False

    def found_formatted(self, text: str) -> None:
        """Keeps `text`, which the layout gave back unchanged."""
        self._kept.add(_key(text))

    def save(self) -> None:
        """Writes the texts found formatted in this run when they are not those of the pack; a
        folder that cannot be written leaves the next run to lay the files out again."""
        if self._kept == self._found:
            _touch(self.path)  # used: not to be removed as unused
            return
        try:
            # Whole or absent, mode 0600, no temporary file left; not durable: a pack lost to
            # a power cut lays the files out again.
            write_atomically(self.path, orjson.dumps(sorted(self._kept)))
        except OSError:
            return  # what matters is the command: the next run lays the files out again
        _remove_unused(self.path.parent)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _layout_fingerprint() -> bytes:
    """What decides the layout of a text besides the text."""
    from ruamel.yaml import __version__ as ruamel_version

    from surveyctl.manifests import layout

    digest = hashlib.sha256(FORMAT)
    digest.update(f"{sys.version}|{ruamel_version}".encode())
    digest.update(Path(layout.__file__).read_bytes())
    return digest.digest()


def _read_pack(path: Path) -> set[str]:
    """The digests in the pack at `path`; none when it is missing, too large or not a pack."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_PACK_BYTES + 1)
    except OSError:
        return set()
    if len(raw) > MAX_PACK_BYTES:
        return set()
    try:
        keys = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return set()
    if type(keys) is not list:
        return set()
    return {key for key in keys if type(key) is str and len(key) == _DIGEST_LENGTH}
