"""YAML that anyone may have written, read with bounded work and every value's line kept.

Manifests arrive in pull requests and `surveyctl.yaml` with any checkout, so a few bytes must
not make the reader work for minutes. Before anything is expanded the reader bounds:

- the size of the file (`Limits.max_bytes`);
- the number of values in it (`Limits.max_values`), counted on libyaml's event stream, which
  keeps no tree, whenever the text is long enough to hold that many;
- nesting (`Limits.max_depth`), on the same event stream where deeper nesting is possible,
  because libyaml composes recursively on the C stack;
- expansion by aliases (`*a`) and merge keys (`<<`): each node of the composed graph is
  visited once to compute the size of the document once expanded; a document that would
  grow past its budget is refused before it is constructed (PyYAML copies merged keys into
  every mapping that merges them, so nested `<<: [*m, *m]` double the work at each level).

Each mapping becomes a `MarkedDict` and each list a `MarkedList`, which carry the Location of
themselves and of each key or item. Problems are reported as (summary, Location) pairs
through a callback, so that callers decide whether one problem ends the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from surveyctl.errors import Location

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NULL_TAG = "tag:yaml.org,2002:null"
# libyaml composes recursively on the C stack, which a few ten thousand nested levels
# overflow (a crash, not an exception). Text whose nesting cannot exceed this bound is
# composed directly; other text is first walked as events, which libyaml does iteratively.
_SAFE_NESTING = 2000
# Aliases and merge keys may repeat what is written; a document may expand to this many
# values per character of its file (plus a floor for tiny files) before it is refused.
_EXPANSION_PER_CHARACTER = 10
_EXPANSION_FLOOR = 10_000

Report = Callable[[str, Location], None]


@dataclass(frozen=True)
class Limits:
    """How much one file may make the reader do; `what` names the file in messages."""

    what: str
    max_bytes: int
    max_values: int
    max_depth: int = 32


class YamlProblem(Exception):
    """A file that cannot be read as bounded YAML: one sentence and where."""

    def __init__(self, summary: str, location: Location):
        super().__init__(summary)
        self.summary = summary
        self.location = location


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
class Loaded:
    """One document of a file: its data (None when empty) and where it starts."""

    data: Any
    location: Location
    index: int  # 1-based position of the document in its file


def read_text(path: Path, limits: Limits, name: str | None = None) -> str:
    """The UTF-8 text of `path`, refused (YamlProblem) when larger than `limits` allow;
    `name` is the file's name in messages (default: the path)."""
    name = name or str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limits.max_bytes + 1)
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


def location(filename: str, mark: Any) -> Location:
    """The 1-based Location of a YAML mark."""
    if mark is None:
        return Location(filename, 1, 1)
    return Location(filename, mark.line + 1, mark.column + 1)


class _StructureError(yaml.constructor.ConstructorError):
    """A well-formed YAML document that no configuration can be (duplicate or non-text keys)."""


class _MarkedLoader(_BaseLoader):
    filename = "<string>"

    def construct_marked_mapping(self, node: MappingNode):
        data = MarkedDict()
        data.location = location(self.filename, node.start_mark)
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
                    None, None, f"Keys must be text, found {short(key)}", key_node.start_mark
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

    def construct_marked_sequence(self, node: SequenceNode):
        data = MarkedList()
        data.location = location(self.filename, node.start_mark)
        data._marks = [(c.start_mark.line + 1, c.start_mark.column + 1) for c in node.value]
        yield data
        data.extend(self.construct_object(child, deep=True) for child in node.value)


_MarkedLoader.add_constructor("tag:yaml.org,2002:map", _MarkedLoader.construct_marked_mapping)
_MarkedLoader.add_constructor("tag:yaml.org,2002:seq", _MarkedLoader.construct_marked_sequence)


def load_documents(text: str, filename: str, limits: Limits, report: Report) -> list[Loaded]:
    """The documents of YAML `text` read as file `filename`; each problem goes to `report`.

    A document that is too deep or too large is reported and left out, and the next one
    read; invalid YAML ends the file. An empty document is returned with data None.
    """
    if (
        2 * len(text) + 2 > limits.max_values or _nesting_bound(text) > _SAFE_NESTING
    ) and not _within_limits(text, filename, limits, report):
        return []
    loader = _MarkedLoader(text)
    loader.filename = filename
    budget = min(limits.max_values, _EXPANSION_PER_CHARACTER * len(text) + _EXPANSION_FLOOR)
    documents: list[Loaded] = []
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            index += 1
            where = location(filename, node.start_mark)
            if isinstance(node, ScalarNode) and node.tag == _NULL_TAG:
                documents.append(Loaded(None, where, index))
                continue
            problem = _expansion_problem(node, budget, limits.max_depth, filename)
            if problem is not None:
                report(problem[0], problem[1] or where)
                continue
            documents.append(Loaded(loader.construct_document(node), where, index))
    except _StructureError as exc:
        report(str(exc.problem), error_location(exc, filename))
    except yaml.YAMLError as exc:
        report(f"Invalid YAML: {yaml_problem(exc)}", error_location(exc, filename))
    except RecursionError:
        report(f"The YAML nests too deeply to be a {limits.what}", Location(filename, 1))
    finally:
        loader.dispose()
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


def _within_limits(text: str, filename: str, limits: Limits, report: Report) -> bool:
    """Walks the event stream (iterative in libyaml, and keeping no tree) before composing:
    counts the values and the nesting, which composing could not survive unbounded."""
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                values += 1
                if depth > limits.max_depth:
                    report(
                        f"The YAML nests deeper than {limits.max_depth} levels",
                        location(filename, event.start_mark),
                    )
                    return False
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                values += 1
            if values > limits.max_values:
                report(
                    f"The file holds more than {limits.max_values:,} values; a {limits.what} "
                    "may hold at most that many",
                    location(filename, event.start_mark),
                )
                return False
    except yaml.YAMLError as exc:
        report(f"Invalid YAML: {yaml_problem(exc)}", error_location(exc, filename))
        return False
    return True


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def _expansion_problem(
    root: Node, budget: int, max_depth: int, filename: str
) -> tuple[str, Location | None] | None:
    """Why the composed document cannot be constructed, or None.

    Every node of the composed graph is visited once (an alias is the node it names), and
    for each the size and depth it has once expanded is computed from its children's, the
    way PyYAML will build it: a merge key adds the merged mapping's keys. So a document that
    would expand to a billion values is refused after a few thousand steps.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    merge_at: dict[int, Any] = {}  # node -> the mark of a merge key inside it, if any
    merged_total = 0  # key-value pairs PyYAML copies while flattening merges
    active: set[int] = set()  # on the path from the root: a cycle, which PyYAML refuses
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if not finished:
            if key in size or key in active:
                continue
            if isinstance(node, ScalarNode):
                size[key], height[key] = 1, 0
                continue
            active.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
            continue
        active.discard(key)
        total, deepest, flat, merge_mark = 1, 0, 0, None
        if isinstance(node, SequenceNode):
            for child in node.value:
                total += size.get(id(child), 1)
                deepest = max(deepest, height.get(id(child), 0))
                merge_mark = merge_mark or merge_at.get(id(child))
        else:
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    merge_mark = merge_mark or key_node.start_mark
                    sources = (
                        value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                    )
                    for source in sources:
                        if isinstance(source, MappingNode):
                            # The merged keys sit at this level: they add no depth.
                            total += size.get(id(source), 1) - 1
                            flat += len(source.value)
                            deepest = max(deepest, height.get(id(source), 1) - 1)
                    continue
                flat += 1
                for child in (key_node, value_node):
                    total += size.get(id(child), 1)
                    deepest = max(deepest, height.get(id(child), 0))
                    merge_mark = merge_mark or merge_at.get(id(child))
            if merge_mark is not None and any(k.tag == _MERGE_TAG for k, _ in node.value):
                merged_total += flat
        size[key], height[key], merge_at[key] = total, deepest + 1, merge_mark
        if merge_mark is not None and (total > budget or merged_total > budget):
            return (
                f"The merge keys (<<) expand this mapping to more than {budget:,} values "
                "(merges of merges?)",
                location(filename, merge_mark),
            )
        if total > budget:
            return "The YAML expands to too many values (repeated aliases?)", None
    if height.get(id(root), 0) > max_depth:
        return f"The YAML nests deeper than {max_depth} levels", _too_deep_at(
            root, height, max_depth, filename
        )
    return None


def _too_deep_at(root: Node, height: dict[int, int], max_depth: int, filename: str) -> Location:
    """The first collection nested one level deeper than allowed, down the deepest branch."""
    node = root
    for _ in range(max_depth):
        children = _children(node)
        if not children:
            break
        node = max(children, key=lambda child: height.get(id(child), 0))
    return location(filename, node.start_mark)


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's problem in one sentence, without its multi-line context."""
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        return f"{problem} ({context})" if context else str(problem)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def error_location(exc: yaml.YAMLError, filename: str) -> Location:
    """Where PyYAML found its problem."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return location(filename, mark)
    return Location(filename, 1, 1)


def short(value: Any) -> str:
    """A value shown in a message, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
