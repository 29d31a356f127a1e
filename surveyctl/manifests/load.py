"""Reading manifest files: YAML documents whose every mapping and list remembers its place.

Each mapping becomes a `MarkedDict` and each list a `MarkedList`; both carry the Location of
the node and of each key or item, so that any later check can point at the exact line.
Duplicate keys, non-text keys, invalid YAML, non-UTF-8 bytes, empty documents and documents
that are not mappings become diagnostics here rather than exceptions.

Folders are read recursively (`*.yaml`, `*.yml`, sorted). While walking a folder the loader
skips hidden entries (`.git`, `.surveyctl`, ...), folders named `ci` (CI workflow examples)
and the project configuration `surveyctl.yaml`; a file named explicitly is always read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics

SUFFIXES = (".yaml", ".yml")
SKIPPED_FILES = frozenset({"surveyctl.yaml", "surveyctl.yml"})
SKIPPED_FOLDERS = frozenset({"ci"})
# Deeper than any real manifest.
MAX_DEPTH = 32
# libyaml composes recursively on the C stack, which a few ten thousand nested levels
# overflow (a crash, not an exception). Text whose nesting cannot exceed this bound is
# composed directly; other text is first walked as events, which libyaml does iteratively.
_SAFE_NESTING = 2000

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class MarkedDict(dict):
    """A mapping from YAML with the Location of itself and of each of its keys."""

    location: Location
    # (line, column) per key, 1-based; Locations are made only when asked for, which keeps
    # loading a thousand manifests fast.
    _marks: dict[str, tuple[int, int]]

    def where(self, key: str) -> Location:
        """The line of `key`, or of the mapping when the key is absent."""
        mark = getattr(self, "_marks", {}).get(key)
        if mark is None:
            return self.location
        return Location(self.location.file, mark[0], mark[1])


class MarkedList(list):
    """A list from YAML with the Location of itself and of each item."""

    location: Location
    _marks: list[tuple[int, int]]

    def where(self, index: int) -> Location:
        marks = getattr(self, "_marks", [])
        if 0 <= index < len(marks):
            return Location(self.location.file, marks[index][0], marks[index][1])
        return self.location


@dataclass
class Document:
    """One YAML document of a file: its data (a MarkedDict) and where it starts."""

    data: MarkedDict
    location: Location
    index: int  # 1-based position of the document in its file


def location_of(value: Any, fallback: Location) -> Location:
    """The Location a loaded value carries, or `fallback` for scalars."""
    return getattr(value, "location", fallback)


def _mark(filename: str, mark: Any) -> Location:
    if mark is None:
        return Location(filename, 1, 1)
    return Location(filename, mark.line + 1, mark.column + 1)


class _StructureError(yaml.constructor.ConstructorError):
    """A well-formed YAML document that no manifest can be (duplicate or non-text keys)."""


class _MarkedLoader(_BaseLoader):
    filename = "<string>"

    def construct_marked_mapping(self, node: yaml.MappingNode):
        data = MarkedDict()
        data.location = _mark(self.filename, node.start_mark)
        data._marks = marks = {}
        yield data
        own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
        self.flatten_mapping(node)
        merged = len(node.value) - own
        explicit: dict[str, int] = {}
        for position, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _StructureError(
                    None, None, f"Keys must be text, found {_short(key)}", key_node.start_mark
                )
            start = key_node.start_mark
            if position >= merged:  # keys brought in by a merge (<<) may be overridden
                if key in explicit:
                    raise _StructureError(
                        None,
                        None,
                        f"Duplicate key {key!r} (first given on line {explicit[key]})",
                        key_node.start_mark,
                    )
                explicit[key] = start.line + 1
            data[key] = self.construct_object(value_node, deep=True)
            marks[key] = (start.line + 1, start.column + 1)

    def construct_marked_sequence(self, node: yaml.SequenceNode):
        data = MarkedList()
        data.location = _mark(self.filename, node.start_mark)
        data._marks = [(c.start_mark.line + 1, c.start_mark.column + 1) for c in node.value]
        yield data
        data.extend(self.construct_object(child, deep=True) for child in node.value)


_MarkedLoader.add_constructor("tag:yaml.org,2002:map", _MarkedLoader.construct_marked_mapping)
_MarkedLoader.add_constructor("tag:yaml.org,2002:seq", _MarkedLoader.construct_marked_sequence)


def discover(paths: Iterable[str | Path], diagnostics: Diagnostics) -> list[Path]:
    """The manifest files under `paths`, in a stable order; missing paths are errors."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(_walk(path))
        else:
            diagnostics.error(f"No such file or folder: {path}")
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path, None)
    return list(unique)


def _walk(folder: Path) -> list[Path]:
    files: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.name not in SKIPPED_FOLDERS:
                files.extend(_walk(entry))
        elif entry.suffix in SUFFIXES and entry.name not in SKIPPED_FILES:
            files.append(entry)
    return files


def load_file(path: Path, diagnostics: Diagnostics) -> list[Document]:
    """The documents of one file; every problem found becomes a diagnostic."""
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        diagnostics.error(f"Cannot read {name}: {exc.strerror or exc}", Location(name, 1))
        return []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        diagnostics.error(
            f"The file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            Location(name, line, 1),
        )
        return []
    return load_text(text, name, diagnostics)


def load_text(text: str, filename: str, diagnostics: Diagnostics) -> list[Document]:
    """The documents of YAML `text` read as file `filename`."""
    if _nesting_bound(text) > _SAFE_NESTING and not _shallow_enough(text, filename, diagnostics):
        return []
    loader = _MarkedLoader(text)
    loader.filename = filename
    documents: list[Document] = []
    index, before = 0, len(diagnostics)
    try:
        while loader.check_node():
            node = loader.get_node()
            index += 1
            where = _mark(filename, node.start_mark)
            if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
                diagnostics.error(f"Document {index} is empty", where)
                continue
            data = loader.construct_document(node)
            problem = _too_deep(data, budget=10 * len(text) + 1000)
            if problem is not None:
                diagnostics.error(problem[0], problem[1] or where)
                continue
            if not isinstance(data, MarkedDict):
                kind = "a list" if isinstance(data, list) else f"the value {_short(data)}"
                diagnostics.error(f"Document {index} must be a mapping, not {kind}", where)
                continue
            documents.append(Document(data, where, index))
    except _StructureError as exc:
        diagnostics.error(str(exc.problem), _error_location(exc, filename))
    except yaml.YAMLError as exc:
        diagnostics.error(f"Invalid YAML: {_yaml_problem(exc)}", _error_location(exc, filename))
    except RecursionError:
        diagnostics.error("The YAML nests too deeply to be a manifest", Location(filename, 1))
    finally:
        loader.dispose()
    if index == 0 and len(diagnostics) == before:
        diagnostics.error("The file holds no YAML document", Location(filename, 1))
    return documents


def _nesting_bound(text: str) -> int:
    """An upper bound of the nesting depth: every level opens on a new line or with one of
    these indicators (a flow sequence may hold an implicit single-pair mapping: twice '[')."""
    return (
        text.count("\n")
        + text.count("-")
        + 2 * text.count("[")
        + text.count("{")
        + text.count("?")
        + 1
    )


def _too_deep(data: Any, budget: int) -> tuple[str, Location | None] | None:
    """Why the document cannot be a manifest: nesting deeper than MAX_DEPTH, or more
    collections than `budget` (aliases repeated into a huge expansion); None when fine."""
    stack = [(data, 1)] if isinstance(data, (dict, list)) else []
    while stack:
        value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            return "The YAML expands to too many values (repeated aliases?)", None
        if depth > MAX_DEPTH:
            return f"The YAML nests deeper than {MAX_DEPTH} levels", getattr(
                value, "location", None
            )
        items = value.values() if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items if isinstance(item, (dict, list)))
    return None


def _shallow_enough(text: str, filename: str, diagnostics: Diagnostics) -> bool:
    """Walks the event stream (iterative in libyaml) before composing, which recurses."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    diagnostics.error(
                        f"The YAML nests deeper than {MAX_DEPTH} levels",
                        _mark(filename, event.start_mark),
                    )
                    return False
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        diagnostics.error(f"Invalid YAML: {_yaml_problem(exc)}", _error_location(exc, filename))
        return False
    return True


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        return f"{problem} ({context})" if context else str(problem)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _error_location(exc: yaml.YAMLError, filename: str) -> Location:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return _mark(filename, mark)
    return Location(filename, 1, 1)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
