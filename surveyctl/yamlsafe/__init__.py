"""YAML that anyone may have written, read with bounded work and every value's line kept.

Manifests arrive in pull requests and `surveyctl.yaml` with any checkout, so a few bytes must
not make the reader work for minutes. Before anything is expanded the reader bounds
(`bounds`): the size of the file, the number of values in it, nesting, and the expansion by
aliases (`*a`) and merge keys (`<<`), measured on the composed graph where each node is
visited once.

Each mapping becomes a `MarkedDict` and each list a `MarkedList` (`marked`), which carry the
Location of themselves and of each key or item. The values are exactly those of PyYAML's safe
loader (YAML 1.1: `yes` is true, `017` is 15); the common documents are built from the nodes
directly, the others by PyYAML's constructor. Problems are reported as (summary, Location)
pairs through a callback, so that callers decide whether one problem ends the file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from surveyctl.errors import Location
from surveyctl.yamlsafe.bounds import Limits, expansion_problem, within_limits
from surveyctl.yamlsafe.marked import (
    NULL_TAG,
    MarkedDict,
    MarkedList,
    MarkedLoader,
    NotPlain,
    PlainBuilder,
    StructureError,
    error_location,
    location,
    short,
    undefined_alias,
    yaml_problem,
)

__all__ = [
    "Limits",
    "Loaded",
    "MarkedDict",
    "MarkedList",
    "YamlProblem",
    "load_documents",
    "location",
    "read_text",
    "short",
    "special_file_kind",
]

Report = Callable[[str, Location], None]


class YamlProblem(Exception):
    """A file that cannot be read as bounded YAML: one sentence and where."""

    def __init__(self, summary: str, location: Location):
        super().__init__(summary)
        self.summary = summary
        self.location = location


@dataclass
class Loaded:
    """One document of a file: its data (None when empty) and where it starts."""

    data: Any
    location: Location
    index: int  # 1-based position of the document in its file
    # True when every number is finite (no .inf, .nan or 1e999); None when not known.
    finite: bool | None = None
    # (where, text, value) of each number YAML 1.1 reads as another than it shows (010 is 8).
    reread: tuple[tuple[Location, str, Any], ...] = ()


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_file_kind(path: Path, mode: int | None = None) -> str | None:
    """What `path` is when it is a FIFO, socket or device ("a FIFO (named pipe)"), else None
    (a regular file, a folder, nothing). Links are followed."""
    if mode is None:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return None
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), None)


def read_text(path: Path, limits: Limits, name: str | None = None) -> str:
    """The UTF-8 text of `path`, refused (YamlProblem) when larger than `limits` allow or
    when it is not a regular file; `name` is the file's name in messages (default: the path)."""
    name = name or str(path)
    try:
        # Opened without waiting: opening a FIFO for reading would wait for a writer forever.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        info = os.fstat(descriptor)
        special = special_file_kind(path, info.st_mode)
        if special is not None:
            os.close(descriptor)
            raise YamlProblem(
                f"{name} is {special}, not a regular file: only files are read",
                Location(name, 1),
            )
        with open(descriptor, "rb") as handle:
            # Asked for the size the file has, not the limit: a read of the limit sets the
            # limit's memory aside for every file (8 MB for a manifest of a few kilobytes).
            wanted = min(info.st_size, limits.max_bytes) + 1
            raw = handle.read(wanted)
            if len(raw) == wanted:  # it grew since, or its system reports no size (/proc)
                raw += handle.read(limits.max_bytes + 1 - len(raw))
            if len(raw) > limits.max_bytes:
                handle.seek(0, 2)
                size = handle.tell()
                raise YamlProblem(
                    f"The file is {_megabytes(size)}, larger than the "
                    f"{_megabytes(limits.max_bytes)} a {limits.what} may be",
                    Location(name, 1),
                )
    except OSError as exc:
        raise YamlProblem(f"Cannot read {name}: {exc.strerror or exc}", Location(name, 1)) from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlProblem(
            f"The file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            Location(name, line, 1),
        ) from exc


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size % 1_000_000 else f"{size // 1_000_000} MB"


def load_documents(text: str, filename: str, limits: Limits, report: Report) -> list[Loaded]:
    """The documents of YAML `text` read as file `filename`; each problem goes to `report`.

    A document that is too deep or too large is reported and left out, and the next one
    read; invalid YAML ends the file. An empty document is returned with data None.
    """
    if limits.needs_event_walk(text) and not within_limits(text, filename, limits, report):
        return []
    loader = MarkedLoader(text)
    loader.filename = filename
    budget = limits.expansion_budget(text)
    documents: list[Loaded] = []
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            index += 1
            where = location(filename, node.start_mark)
            if isinstance(node, ScalarNode) and node.tag == NULL_TAG:
                documents.append(Loaded(None, where, index))
                continue
            builder = PlainBuilder(loader, limits.max_depth)
            try:
                data = builder.build(node)
                reread = tuple(
                    (location(filename, mark), text, value) for mark, text, value in builder.reread
                )
                documents.append(Loaded(data, where, index, builder.finite, reread))
            except NotPlain:
                problem = expansion_problem(node, budget, limits.max_depth, filename)
                if problem is not None:
                    report(problem[0], problem[1] or where)
                    continue
                documents.append(Loaded(loader.construct_document(node), where, index))
    except StructureError as exc:
        report(str(exc.problem), error_location(exc, filename))
    except yaml.YAMLError as exc:
        alias = undefined_alias(exc, text)
        problem = alias or f"Invalid YAML: {yaml_problem(exc, text)}"
        report(problem, error_location(exc, filename))
    except RecursionError:
        report(f"The YAML nests too deeply to be a {limits.what}", Location(filename, 1))
    finally:
        loader.dispose()
    return documents
