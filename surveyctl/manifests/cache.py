"""Manifest files read before, kept by their content: a file whose bytes are those of a clean
read is not parsed again.

Parsing YAML is most of the time `validate`, `plan` and `apply` spend on their manifests (about
1.4 ms of 2.2 ms a file on a slow 2-core machine); the values a clean read produced come back
from the cache in a fraction of that. An entry is found by the SHA-256 of the file's text and
the reader's limits, in a pack whose name is the SHA-256 of the manifests' folders and of
everything else that decides what a read makes of a text: the reader's own source files,
PyYAML's version and whether libyaml parses, and Python's version. A changed byte, or another
surveyctl, finds no entry and reads the file afresh.

One pack holds the entries of one set of manifest paths (`plan`'s `manifests:`, say): it is
read once, and written once at the end of a load that parsed a file or left an entry unused,
with exactly the entries that load used. Packs not used for 30 days are removed.

Only reads that reported nothing are kept, and only documents built straight from the parser's
nodes (no aliases, no merge keys, every number finite), with values that JSON carries exactly;
an error, or a document of another kind, is read afresh every time, so every problem still
comes from the reader itself (the warnings a clean read makes are made again from its values).

The cache lives in the user's cache folder (`$SURVEYCTL_CACHE_DIR`, else
`$XDG_CACHE_HOME/surveyctl`, else `~/.cache/surveyctl`), never in the project: a pull request
cannot plant an entry that would make a manifest read as something its text does not say. The
folder is used only when it belongs to the user and no one else may write to it. Packs are
JSON, read with bounded size and checked shape: an entry cut short, altered or not understood
is a miss, and the file is read afresh.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import yaml

from surveyctl.errors import Location
from surveyctl.files import write_atomically
from surveyctl.yamlsafe import Limits, Loaded, MarkedDict, MarkedList, load_documents
from surveyctl.yamlsafe import marked as _marked_module

log = logging.getLogger("surveyctl.manifests")

# Bumped when the layout of a pack changes (the reader's sources are in its name already).
FORMAT = b"surveyctl parsed manifests 3"
MAX_PACK_BYTES = 512_000_000  # a pack past this is not read (1,000 surveys: about 5 MB)
UNUSED_DAYS = 30  # a pack no load used for this long is removed
# Only what JSON carries exactly: a date would be written as text, and read back as text.
_EXACTLY = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


class Malformed(Exception):
    """An entry that is not what this module writes: it is read as no entry (a miss), so it
    carries no message; each place it is raised says why in a comment."""


class ParsedCache:
    """The packs of one folder; `pack(paths)` is the pack of one set of manifest paths."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._fingerprint: bytes | None = None

    @classmethod
    def at(cls, folder: Path) -> ParsedCache | None:
        """The cache in `folder` (made, private to the user, when missing); None when the folder
        cannot be made or may be written by another user."""
        return cls(folder) if own_folder(folder) else None

    def pack(self, paths: Iterable[str | Path]) -> Pack:
        """The pack of the manifests under `paths` (as given to load_manifests)."""
        digest = hashlib.sha256(self._reader_fingerprint())
        for path in sorted(os.path.abspath(path) for path in paths):
            digest.update(os.fsencode(path) + b"\0")
        return Pack(self.folder / f"{digest.hexdigest()}.json")

    def _reader_fingerprint(self) -> bytes:
        """What decides how a text is read, besides the text: computed once a process."""
        if self._fingerprint is None:
            digest = hashlib.sha256(FORMAT)
            digest.update(f"{sys.version}|{yaml.__version__}|{yaml.__with_libyaml__}".encode())
            for source in _reader_sources():
                digest.update(source.read_bytes())
            self._fingerprint = digest.digest()
        return self._fingerprint


class Pack:
    """The entries of one set of manifest paths: `load` is `load_documents` with the pack in
    front of it, `save` keeps what the loads used for the next run."""

    def __init__(self, path: Path):
        self.path = path
        self._found: dict[str, Any] | None = None  # the pack as read, by entry key
        # The entries this run's loads used: as read from the pack, or encoded (JSON bytes).
        self._used: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0

    def load(self, text: str, filename: str, limits: Limits, report) -> list[Loaded]:
        """The documents of `text` as `load_documents` reads them, from the pack when this
        text was read cleanly before."""
        key = _key(text, limits)
        entry = self._entry(key)
        if entry is not None:
            try:
                loaded = _decode(entry, filename)
            except (Malformed, ValueError, TypeError, IndexError, KeyError, RecursionError):
                loaded = None
            if loaded is not None:
                self.hits += 1
                self._used[key] = entry
                return loaded
        self.misses += 1
        problems: list[str] = []

        def noted(summary: str, where: Location) -> None:
            problems.append(summary)
            report(summary, where)

        loaded = load_documents(text, filename, limits, noted)
        if not problems and loaded and all(item.finite is True for item in loaded):
            try:
                self._used[key] = orjson.dumps([_encode(i) for i in loaded], option=_EXACTLY)
            except (TypeError, ValueError, KeyError):
                pass  # orjson's JSONEncodeError: a date, bytes, an integer past 64 bits
        return loaded

    def save(self) -> None:
        """Writes the entries this run used, when it parsed a file or left an entry unused;
        a folder that cannot be written just leaves the next run to parse again."""
        if self._found is None:
            return  # nothing was loaded
        log.debug(
            "> %d manifest file(s) read from the cache, %d parsed (%s)",
            self.hits,
            self.misses,
            self.path,
        )
        if not self.misses and self._found.keys() == self._used.keys():
            _touch(self.path)  # used: not to be removed as unused
            return
        entries = b",".join(
            orjson.dumps(key) + b":" + (entry if type(entry) is bytes else orjson.dumps(entry))
            for key, entry in self._used.items()
        )
        try:
            # Whole or absent, mode 0600, no temporary file left; not durable: a pack lost to
            # a power cut is a miss, and the next run parses again.
            write_atomically(self.path, b'{"entries":{' + entries + b"}}")
        except OSError:
            return  # what matters is the command: the next run parses again
        _remove_unused(self.path.parent)

    def _entry(self, key: str) -> Any:
        if self._found is None:
            self._found = _read_pack(self.path)
        entry = self._used.get(key)
        if type(entry) is bytes:  # the same text twice in one load
            return orjson.loads(entry)
        return entry if entry is not None else self._found.get(key)


def _key(text: str, limits: Limits) -> str:
    digest = hashlib.sha256(repr(limits).encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _read_pack(path: Path) -> dict[str, Any]:
    """The entries of the pack at `path`; none when it is missing, too large or not a pack."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_PACK_BYTES + 1)
    except OSError:
        return {}
    if len(raw) > MAX_PACK_BYTES:
        return {}
    try:
        pack = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    entries = pack.get("entries") if type(pack) is dict else None
    return entries if type(entries) is dict else {}


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _remove_unused(folder: Path) -> None:
    """Removes the packs no load used for UNUSED_DAYS (and temporary files left by a run that
    was killed while writing); the pack just written is new."""
    oldest = time.time() - UNUSED_DAYS * 86400
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith((".json", ".tmp")):
                if entry.stat().st_mtime < oldest:
                    os.unlink(entry.path)
    except OSError:
        pass


def _reader_sources() -> list[Path]:
    """The source files of the reader and of this cache."""
    folder = Path(_marked_module.__file__).parent
    return [*sorted(folder.glob("*.py")), Path(__file__)]


def own_folder(folder: Path) -> bool:
    """Whether `folder` exists (made, private to the user, when missing) and no one else may
    write to it: what a cache folder must be before a pack in it is trusted."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return _private(folder)
    except OSError:
        return False


def _private(folder: Path) -> bool:
    """Whether `folder` is the user's own and no one else may write to it (always so where the
    system has no user ids)."""
    if not hasattr(os, "getuid"):
        return True
    info = os.stat(folder)
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


# -- entries ---------------------------------------------------------------------------------
# An entry is a list of documents: [line, column, index, value, marks, [[line, column, text,
# number], ...]] (its start, its place in the file, its value, its marks, the numbers YAML
# reads otherwise than they show). The value is plain JSON: orjson builds its mappings and
# lists in C, and reading one back only wraps them. The marks are one flat list of 0-based
# lines and columns: for each mapping or list, in the order a walk of the value meets them
# (the outer before the inner), its own and then those of each key or item. A mapping or list
# read back keeps its place in that list as its packed marks (surveyctl.yamlsafe.marked), made
# into marks only when asked for; the list is checked whole, at once, when the entry is read.

_CONTAINERS = (MarkedDict, MarkedList)
_JSON_CONTAINERS = (dict, list)  # what orjson reads a mapping and a list as
_PLACES = {int}  # the type of every mark: a bool or a fraction is not a place


def _encode(item: Loaded) -> list[Any]:
    reread = [[where.line, where.column, text, number] for where, text, number in item.reread]
    marks: list[int] = []
    value = _encoded(item.data, marks)
    start = item.location
    return [start.line, start.column, item.index, value, marks, reread]


def _encoded(value: Any, marks: list[int]) -> Any:
    """`value` as plain JSON values, its marks added to `marks` in the order _decoded reads
    them. Scalars are left to orjson, which refuses what JSON cannot carry exactly. (The reader
    makes every mapping and list marked, with one mark per key or item; were one not, its
    entry's marks would not add up, and the entry would be a miss.)"""
    kind = type(value)
    if kind is MarkedDict:
        start, own = value._start, value._marks
        marks += (start.line, start.column)
        for key in value:
            marks += (own[key].line, own[key].column)
        return {key: _encoded(item, marks) for key, item in value.items()}
    if kind is MarkedList:
        start = value._start
        marks += (start.line, start.column)
        for mark in value._marks:
            marks += (mark.line, mark.column)
        return [_encoded(item, marks) for item in value]
    return value


def _decode(entry: Any, filename: str) -> list[Loaded]:
    if type(entry) is not list or not entry:
        raise Malformed  # not a list of documents
    loaded = []
    for document in entry:
        line, column, index, value, marks, reread = document
        if type(marks) is not list:
            raise Malformed  # no marks
        if marks and (not set(map(type, marks)) <= _PLACES or min(marks) < 0):
            raise Malformed  # a mark that is not a place
        where = Location(filename, _count(line), _count(column))
        rereads = tuple(
            (Location(filename, _count(at), _count(col)), _text(text), _number(number))
            for at, col, text, number in reread
        )
        data, used = _decoded(value, filename, marks)
        if used != len(marks):
            raise Malformed  # marks missing, or left over
        loaded.append(Loaded(data, where, _count(index), True, rereads))
    return loaded


def _decoded(value: Any, filename: str, marks: list[int]) -> tuple[Any, int]:
    """`value` with each mapping a MarkedDict and each list a MarkedList, their marks packed
    (their places in `marks`), and how many marks they take."""
    at = 0

    def wrapped(value: dict[str, Any] | list[Any]) -> MarkedDict | MarkedList:
        nonlocal at
        if type(value) is dict:
            out: MarkedDict | MarkedList = MarkedDict(value)
            out._file, out._packed = filename, (marks, at, tuple(value))
            items = value.items()
        else:
            out = MarkedList(value)
            out._file, out._packed = filename, (marks, at, len(value))
            items = enumerate(value)
        at += 2 + 2 * len(value)  # its own line and column, and those of its keys or items
        for key, item in items:
            if type(item) in _JSON_CONTAINERS:
                out[key] = wrapped(item)
        return out

    if type(value) in _JSON_CONTAINERS:
        return wrapped(value), at
    return value, 0


def _count(value: Any) -> int:
    if type(value) is not int or value < 1:
        raise Malformed  # not a line, column or index (each counted from 1)
    return value


def _text(value: Any) -> str:
    if type(value) is not str:
        raise Malformed  # a text that is not one
    return value


def _number(value: Any) -> int | float:
    if type(value) not in (int, float):
        raise Malformed  # a number that is not one
    return value
