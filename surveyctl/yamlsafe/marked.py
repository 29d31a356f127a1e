"""Marked YAML values, and the two ways of building them from libyaml's composed nodes.

Each mapping becomes a `MarkedDict` and each list a `MarkedList`, which keep the parser's mark
of themselves and of each key or item and make a Location only when one is asked for.

Documents that use no more of YAML than manifests usually do (no aliases of collections, no
merge keys, no tags on collections, keys that are plain distinct text) are built straight from
the nodes by `PlainBuilder`, with implicit tags and scalar values memoised by their text; this
is the common case and costs about a third of PyYAML's constructor. Every other document is
built by PyYAML's own constructor (`MarkedLoader.construct_document`), so the values, the YAML
1.1 meaning of plain scalars and every error are exactly those of PyYAML's safe loader.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from surveyctl.errors import Location
from surveyctl.suggest import suggest

BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MERGE_TAG = "tag:yaml.org,2002:merge"
NULL_TAG = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MEMO_SIZE = 100_000  # entries per memo of scalars; cleared when full
# What PyYAML's scalar constructors raise for a text their explicit tag cannot read
# (`!!int abc`, `!!float ""`, `!!timestamp soon`, `!!bool maybe`): not YAMLErrors.
_BAD_SCALAR = (ValueError, KeyError, IndexError, AttributeError, TypeError, OverflowError)


@dataclass(frozen=True, slots=True)
class Mark:
    """A place in a file as a parser's mark gives it (0-based line and column), for marks that
    no parser made: a read kept in the cache, a value a program's expansion adds."""

    line: int
    column: int


def location(filename: str, mark: Any) -> Location:
    """The 1-based Location of a YAML mark."""
    if mark is None:
        return Location(filename, 1, 1)
    return Location(filename, mark.line + 1, mark.column + 1)


class _PackedMarks:
    """Marks made when first asked for, from the packed form a value read from the cache of
    files read before has (surveyctl.manifests.cache): `_packed` is (marks, at, members), where
    `marks` is one flat list of 0-based lines and columns for a whole document, `at` the place
    of this value's own line and column in it, followed by those of each key or item, and
    `members` the keys (of a mapping) or the number of items (of a list) as read. Most marks
    are never asked for; a finding asks for the few it points at."""

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute not set: the marks of a value built from the parser's
        # nodes are set, and so are those of one whose marks were made already.
        packed = self.__dict__.get("_packed")
        if packed is None or name not in ("_start", "_marks"):
            raise AttributeError(name)
        marks, at, members = packed
        if name == "_start":
            value = Mark(marks[at], marks[at + 1])
        else:
            value = self._unpacked(marks, at + 2, members)
        setattr(self, name, value)
        return value

    @staticmethod
    def _unpacked(marks: list[int], at: int, members: Any) -> Any:
        raise NotImplementedError

    def _packed_members(self) -> Any:
        """The keys or the number of items of a value whose marks are still packed, else
        None."""
        packed = self.__dict__.get("_packed")
        return None if packed is None or "_marks" in self.__dict__ else packed[2]

    def _packed_place(self, position: int) -> Location:
        """The Location of the key or item at `position`, read from the packed marks without
        unpacking them: a manifest's builder asks for the place of every quota's criteria."""
        marks, at, _ = self._packed
        at += 2 + 2 * position
        return Location(self._file, marks[at] + 1, marks[at + 1] + 1)


class MarkedDict(_PackedMarks, dict):
    """A mapping from YAML with the Location of itself and of each of its keys.

    It keeps the marks (0-based line and column) of itself and of each key, and makes a
    Location only when one is asked for, which keeps loading a thousand manifests fast. Read
    from the cache of files read before, it has them packed (`_packed`) as the cache holds
    them, and makes the marks (`_start`, `_marks`) when first asked for.
    """

    _file: str
    _start: Any
    _marks: dict[str, Any]

    @staticmethod
    def _unpacked(marks: list[int], at: int, keys: tuple[str, ...]) -> dict[str, Mark]:
        return {key: Mark(marks[at + 2 * i], marks[at + 2 * i + 1]) for i, key in enumerate(keys)}

    @property
    def location(self) -> Location:
        return Location(self._file, self._start.line + 1, self._start.column + 1)

    def where(self, key: str) -> Location:
        """The line of `key`, or of the mapping when the key is absent."""
        keys = self._packed_members()
        if keys is not None:
            return self._packed_place(keys.index(key)) if key in keys else self.location
        mark = getattr(self, "_marks", {}).get(key)
        if mark is None:
            return self.location
        return Location(self._file, mark.line + 1, mark.column + 1)


class MarkedList(_PackedMarks, list):
    """A list from YAML with the Location of itself and of each item (kept as marks)."""

    _file: str
    _start: Any
    _marks: list[Any]

    @staticmethod
    def _unpacked(marks: list[int], at: int, count: int) -> list[Mark]:
        return [Mark(marks[i], marks[i + 1]) for i in range(at, at + 2 * count, 2)]

    @property
    def location(self) -> Location:
        return Location(self._file, self._start.line + 1, self._start.column + 1)

    def where(self, index: int) -> Location:
        """The line of item `index`, or of the list when there is no such item."""
        count = self._packed_members()
        if count is not None:
            return self._packed_place(index) if 0 <= index < count else self.location
        marks = getattr(self, "_marks", [])
        if 0 <= index < len(marks):
            mark = marks[index]
            return Location(self._file, mark.line + 1, mark.column + 1)
        return self.location


class StructureError(yaml.constructor.ConstructorError):
    """Well-formed YAML that surveyctl does not read: duplicate keys, keys that are not text."""


def tag_error(node: ScalarNode) -> StructureError:
    """The problem of a scalar that its explicit tag cannot read, at the scalar's place."""
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    return StructureError(
        None, None, f"The value {short(node.value)} cannot be read as {tag}", node.start_mark
    )


class MarkedLoader(BaseLoader):
    """PyYAML's safe loader (libyaml's parser when available) that builds marked values;
    `filename` names the file in their Locations."""

    filename = "<string>"
    # Plain scalar text -> its implicit tag: the resolver tries up to a dozen regular
    # expressions per scalar, for the same few hundred texts in every manifest.
    _plain_tags: dict[str, str] = {}

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is MappingNode:
            return _MAP_TAG
        if kind is SequenceNode:
            return _SEQ_TAG
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR_TAG  # quoted: always text (SafeLoader has no path resolvers)
            tag = self._plain_tags.get(value)
            if tag is None:
                if len(self._plain_tags) > _MEMO_SIZE:
                    self._plain_tags.clear()
                tag = self._plain_tags[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _BAD_SCALAR as exc:
            if isinstance(node, ScalarNode):
                raise tag_error(node) from exc
            raise

    def construct_marked_mapping(self, node: MappingNode):
        data = MarkedDict()
        data._file, data._start, data._marks = self.filename, node.start_mark, {}
        marks = data._marks
        yield data
        own = sum(1 for key_node, _ in node.value if key_node.tag != MERGE_TAG)
        self.flatten_mapping(node)
        merged = len(node.value) - own
        explicit: dict[str, int] = {}
        for position, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise StructureError(
                    None, None, f"Keys must be text, found {short(key)}", key_node.start_mark
                )
            start = key_node.start_mark
            if position >= merged:  # keys brought in by a merge (<<) may be overridden
                if key in explicit:
                    raise StructureError(
                        None,
                        None,
                        f"Duplicate key {key!r} (first given on line {explicit[key]})",
                        key_node.start_mark,
                    )
                explicit[key] = start.line + 1
            data[key] = self.construct_object(value_node, deep=True)
            marks[key] = start

    def construct_marked_sequence(self, node: SequenceNode):
        data = MarkedList()
        data._file, data._start = self.filename, node.start_mark
        data._marks = [child.start_mark for child in node.value]
        yield data
        data.extend(self.construct_object(child, deep=True) for child in node.value)


MarkedLoader.add_constructor(_MAP_TAG, MarkedLoader.construct_marked_mapping)
MarkedLoader.add_constructor(_SEQ_TAG, MarkedLoader.construct_marked_sequence)


class NotPlain(Exception):
    """The document uses what only PyYAML's own constructor handles exactly: aliases of
    collections, merge keys, keys that are not plain text, duplicate keys, tags on
    collections, or nesting past the limit. It is constructed (or refused) that way."""


# (tag, text) -> the constructed scalar: int, float, bool, None, date, bytes, all immutable.
_scalars: dict[tuple[str, str], Any] = {}


class PlainBuilder:
    """Builds MarkedDicts and MarkedLists straight from the composed nodes of a document
    that uses no more of YAML than manifests usually do (the common case); the result equals
    PyYAML's safe loader's, marks included, at about a third of the cost."""

    def __init__(self, loader: MarkedLoader, max_depth: int):
        self.loader = loader
        self.file = loader.filename
        self.max_depth = max_depth
        self.seen: set[Node] = set()
        self.finite = True
        # (mark, text, value) of each number YAML 1.1 reads as another than it shows.
        self.reread: list[tuple[Any, str, Any]] = []

    def build(self, node: Node, depth: int = 1) -> Any:
        kind = type(node)
        if kind is ScalarNode:
            return node.value if node.tag == _STR_TAG else self.scalar(node)
        if depth > self.max_depth or node in self.seen:
            raise NotPlain  # too deep, or an alias (PyYAML shares it; expansion is bounded)
        self.seen.add(node)
        if kind is MappingNode and node.tag == _MAP_TAG:
            data = MarkedDict()
            data._file, data._start, data._marks = self.file, node.start_mark, {}
            marks, build, depth = data._marks, self.build, depth + 1
            for key_node, value_node in node.value:
                if type(key_node) is not ScalarNode or key_node.tag != _STR_TAG:
                    raise NotPlain  # merge keys, and keys that are not text
                key = key_node.value
                if key in data:
                    raise NotPlain  # the duplicate is reported by the constructor
                if type(value_node) is ScalarNode and value_node.tag == _STR_TAG:
                    data[key] = value_node.value  # the most common value, without a call
                else:
                    data[key] = build(value_node, depth)
                marks[key] = key_node.start_mark
            return data
        if kind is SequenceNode and node.tag == _SEQ_TAG:
            build, depth = self.build, depth + 1
            items = MarkedList([build(child, depth) for child in node.value])
            items._file, items._start = self.file, node.start_mark
            items._marks = [child.start_mark for child in node.value]
            return items
        raise NotPlain

    def scalar(self, node: ScalarNode) -> Any:
        key = (node.tag, node.value)
        value = _scalars.get(key, _scalars)
        if value is _scalars:
            constructor = self.loader.yaml_constructors.get(node.tag)
            if constructor is None or node.tag in (_MAP_TAG, _SEQ_TAG):
                raise NotPlain
            try:
                value = constructor(self.loader, node)
            except yaml.YAMLError as exc:
                raise NotPlain from exc
            except _BAD_SCALAR as exc:
                raise tag_error(node) from exc
            if len(_scalars) > _MEMO_SIZE:
                _scalars.clear()
            _scalars[key] = value
        if type(value) is float and not math.isfinite(value):
            self.finite = False
        if node.tag in _NUMBER_TAGS and reads_otherwise(node.tag, node.value):
            self.reread.append((node.start_mark, node.value, value))
        return value


_NUMBER_TAGS = frozenset({_INT_TAG, _FLOAT_TAG})


def reads_otherwise(tag: str, text: str) -> bool:
    """Whether YAML 1.1 reads the plain number `text` as another number than it shows: a
    leading 0 makes an integer octal (010 is 8, 011 is 9) and 0x and 0b hexadecimal and
    binary, and a colon makes it base 60 (1:30 is 90), integers and fractions alike."""
    digits = text.lstrip("+-")
    if ":" in digits:
        return True
    return tag == _INT_TAG and len(digits) > 1 and digits[0] == "0"


def yaml_problem(exc: yaml.YAMLError, text: str | None = None) -> str:
    """PyYAML's problem in one sentence, without its multi-line context; in words of its own
    for the two a person meets most: a quote never closed, and a tab (given the `text`)."""
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if _unclosed_quote(exc):
        return "a quoted value starts here and its closing quote is missing"
    if text is not None and _character_at(text, getattr(exc, "problem_mark", None)) == "\t":
        return "a tab character: YAML indents with spaces only; replace the tab with spaces"
    opened = _quote_run_to(text, getattr(exc, "problem_mark", None)) if text else None
    if opened is not None and problem:
        # `title: "Coffee` with its closing quote missing reads on to the next quote, lines
        # below, where PyYAML then stops, naming neither the quote nor its line.
        return (
            f"{problem}; the quoted value opened on line {opened} runs on to this line: "
            f"close its quote on line {opened}"
        )
    if problem == _KEY_IN_A_VALUE:
        # PyYAML's words name no cause; these two are nearly always it.
        return (
            "a 'key: value' where only a value can be: this line is indented deeper than the "
            "key above it (so YAML reads it as the rest of that key's value), or a value holds "
            "': ' and needs quotes"
        )
    if problem:
        return f"{problem} ({context})" if context else str(problem)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


# PyYAML's problem for a `key:` met where it reads a plain value: `  a: 1` followed by
# `   b: 2`, one space deeper, continues the value `1`.
_KEY_IN_A_VALUE = "mapping values are not allowed in this context"


def error_location(exc: yaml.YAMLError, filename: str) -> Location:
    """Where PyYAML found its problem; for a quote never closed, where the quote opens (the
    end of the file, where PyYAML notices it, says nothing)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if _unclosed_quote(exc):
        mark = exc.context_mark
    if mark is not None:
        return location(filename, mark)
    return Location(filename, 1, 1)


def undefined_alias(exc: yaml.YAMLError, text: str) -> str | None:
    """For an alias that no anchor defines (`*typo`), the sentence that names the field and
    the alias, else None. libyaml's composer says only "found undefined alias"; the alias is
    read back from the events (or the text) at the error's mark, with the path of keys to it
    and the anchors defined before it in its document, the closest of which is suggested."""
    problem = str(getattr(exc, "problem", None) or "")
    mark = getattr(exc, "problem_mark", None)
    if not problem.startswith("found undefined alias") or mark is None:
        return None
    name, path, anchors = _alias_at(text, mark.line, mark.column)
    if name is None:
        name = _alias_text(text, mark)
    if not name:
        return None
    field = f"{path}: " if path else ""
    return (
        f'{field}undefined alias "*{name}": no anchor &{name} comes before it in this '
        f"document{suggest('*' + name, ['*' + anchor for anchor in anchors])}"
    )


def _alias_at(text: str, line: int, column: int) -> tuple[str | None, str, list[str]]:
    """The name of the alias that starts at (line, column), the path of keys and items to it
    (`spec.quotas[1].criteria`), and the anchors defined before it in its document; found by
    walking libyaml's events, which do not check aliases (composing does)."""
    # Each open collection: [is_mapping, key or index, whether a mapping awaits its key]
    stack: list[list[Any]] = []
    anchors: list[str] = []

    def node_starts() -> None:
        if stack and stack[-1][0] and stack[-1][2]:
            return  # a key: the path stays the mapping's own
        if stack and not stack[-1][0]:
            stack[-1][1] += 1

    def node_ends(value: Any) -> None:
        if stack and stack[-1][0]:
            if stack[-1][2]:
                stack[-1][1] = value
            stack[-1][2] = not stack[-1][2]

    try:
        for event in yaml.parse(text, Loader=BaseLoader):
            kind = type(event)
            if kind is yaml.DocumentStartEvent:
                stack, anchors = [], []
                continue
            if kind not in _NODE_EVENTS:
                if kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent) and stack:
                    stack.pop()
                    node_ends(None)
                continue
            node_starts()
            start = event.start_mark
            if kind is yaml.AliasEvent and (start.line, start.column) == (line, column):
                # An alias used as a key has its mapping's path.
                parts = [part for is_map, part, awaits_key in stack if not (is_map and awaits_key)]
                return event.anchor, _dotted(parts), anchors
            if getattr(event, "anchor", None) and kind is not yaml.AliasEvent:
                anchors.append(event.anchor)
            if kind is yaml.MappingStartEvent:
                stack.append([True, None, True])
            elif kind is yaml.SequenceStartEvent:
                stack.append([False, -1, False])
            else:
                node_ends(event.value if kind is yaml.ScalarEvent else None)
    except yaml.YAMLError:
        pass
    return None, "", anchors


_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)


def _dotted(parts: list[Any]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _alias_text(text: str, mark: Any) -> str:
    """The name of the alias written at `mark` (`*name`, up to a space or flow indicator)."""
    lines = text.splitlines()
    if mark.line >= len(lines):
        return ""
    found = re.match(r"\*([^\s,\[\]{}]+)", lines[mark.line][mark.column :])
    return found.group(1) if found else ""


def _quote_run_to(text: str, mark: Any) -> int | None:
    """The 1-based line of a quoted value that opens on an earlier line and ends on the line
    of `mark`, the last before it, or None. Only the text up to that line is scanned, once a
    file has failed to parse."""
    if mark is None:
        return None
    head = "".join(text.splitlines(keepends=True)[: mark.line + 1])
    found = None
    try:
        for token in yaml.scan(head, Loader=yaml.SafeLoader):
            if token.start_mark.line > mark.line:
                break
            quoted = isinstance(token, yaml.ScalarToken) and token.style in ('"', "'")
            if quoted and token.start_mark.line < token.end_mark.line == mark.line:
                found = token.start_mark.line + 1
    except yaml.YAMLError:
        pass  # the scan meets the same error: what it passed before that is what counts
    return found


def _unclosed_quote(exc: yaml.YAMLError) -> bool:
    return (
        getattr(exc, "context", None) == "while scanning a quoted scalar"
        and "end of stream" in str(getattr(exc, "problem", ""))
        and getattr(exc, "context_mark", None) is not None
    )


def _character_at(text: str, mark: Any) -> str:
    """The character at a PyYAML mark (the C parser's marks carry no buffer), or ''."""
    if mark is None:
        return ""
    lines = text.splitlines()
    if mark.line >= len(lines) or mark.column >= len(lines[mark.line]):
        return ""
    return lines[mark.line][mark.column]


def short(value: Any) -> str:
    """A value shown in a message, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
