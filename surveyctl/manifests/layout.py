"""The canonical layout of a manifest file, as `surveyctl fmt` writes it, comments kept.

The layout: two-space indentation, list items indented under their key (`  - item`), the
top-level keys of each document in the order kind, name, spec, lifecycle, one newline at the
end, lines never wrapped. Everything else is kept as written: comments, quotes (`"111"` stays a
string), flow or block style, the order of the fields under `spec`, anchors, the document
markers `---` and `...` (with the anchor or tag after a `---`) and what stands between
documents. ruamel.yaml's round trip does this, one document at a time; formatting a formatted
file changes nothing. A file that would lose a comment all the same is refused with the
comment's line, and left as it is.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import TYPE_CHECKING

from surveyctl.errors import Location, SurveyctlError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

TOP_LEVEL_ORDER = ("kind", "name", "spec", "lifecycle")
_NEVER_WRAP = 4096


class LayoutError(SurveyctlError):
    """A file that is not YAML cannot be laid out; the message names its file and line."""


def canonical(text: str, file: str = "<text>") -> str:
    """`text` in the canonical layout (the same text when it already is)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = _NEVER_WRAP
    pieces: list[str] = []
    laid_out_any = False
    for line, piece, is_document in _pieces(text):
        try:
            laid_out = _lay_out(piece, yaml) if is_document else None
        except _NotAManifest as exc:
            raise LayoutError(
                f"{file}:{line}: a document that is not a mapping (kind, name, spec...) is no "
                f"manifest, here {exc}; the file is left as it is"
            ) from None
        except _unreadable() as exc:
            raise LayoutError(_problem(text, file, line, exc)) from None
        laid_out_any = laid_out_any or laid_out is not None
        # ruamel.yaml ends every line with a newline alone; the lines kept as written follow.
        pieces.append(piece.replace("\r\n", "\n") if laid_out is None else laid_out)
    if not laid_out_any:
        return text  # nothing but comments (or nothing): nothing to lay out
    formatted = "".join(pieces).rstrip("\n") + "\n"
    _refuse_to_lose_a_comment(text, formatted, file)
    return formatted


def _unreadable() -> tuple[type[Exception], ...]:
    """What ruamel.yaml raises reading a text that is not YAML it can lay out."""
    from ruamel.yaml.error import YAMLError

    return (YAMLError, ValueError, KeyError, IndexError, AttributeError, TypeError, OverflowError)


# A line that is a document marker (`---`, `...`), and one with at most a comment after it.
# YAML allows neither inside a scalar or a flow collection, so in a file that reads, such a
# line always separates documents.
_MARKER = re.compile(r"(?:---|\.\.\.)(?:[ \t\r\n]|$)")
_BARE_MARKER = re.compile(r"(?:---|\.\.\.)(?:[ \t]+(?:#.*)?)?\r?\n?")
# A start marker with the root node's anchor or tag after it (`--- &base`, `--- !!map`): the
# round trip drops both, so the marker and its properties are kept as written, on a line of
# their own, and the document after them is laid out.
_PROPERTIES_MARKER = re.compile(r"---(?:[ \t]+[&!][^ \t\r\n,\[\]{}]*)+[ \t]*")
# A line with nothing to lay out: blank, a comment, or a directive (`%YAML 1.2`).
_NOTHING_TO_LAY_OUT = re.compile(r"[ \t]*(?:#.*)?\r?\n?|%.*\n?")


def _pieces(text: str) -> list[tuple[int, str, bool]]:
    """`text` cut at its document markers: each piece's first line, its text, and whether it
    may hold a document to lay out (a marker line with at most a comment holds none).

    ruamel.yaml drops the comments before a document's `---` and after its `...`, and writes
    an empty document (`---` then only comments) as `--- null`, comments gone: so the markers
    and what lies between them are kept as written, and each document is laid out on its own.
    """
    pieces: list[tuple[int, str, bool]] = []
    start, body = 1, []
    for number, line in enumerate(_lines(text), 1):
        if _MARKER.match(line):
            pieces.append((start, "".join(body), True))
            properties = _PROPERTIES_MARKER.match(line)
            if _BARE_MARKER.fullmatch(line):
                pieces.append((number, line, False))
                start, body = number + 1, []
            elif properties and _NOTHING_TO_LAY_OUT.fullmatch(line[properties.end() :]):
                pieces.append((number, line, False))  # `--- &base  # a comment`
                start, body = number + 1, []
            elif properties:  # `--- !!map {a: 1}`: the document goes on the next line
                pieces.append((number, line[: properties.end()].rstrip(" \t") + "\n", False))
                start, body = number, [line[properties.end() :]]
            else:
                start, body = number, [line]  # a document begun on its marker: `--- {a: 1}`
        else:
            body.append(line)
    pieces.append((start, "".join(body), True))
    return pieces


def _lay_out(piece: str, yaml: YAML) -> str | None:
    """The document in `piece` in the canonical layout; None when there is none to lay out."""
    if all(_NOTHING_TO_LAY_OUT.fullmatch(line) for line in _lines(piece)):
        return None
    documents = list(yaml.load_all(piece))
    if all(document is None for document in documents):
        return None  # `null` or `~` as written
    for document in documents:
        # A text file named by mistake reads as one YAML scalar: laid out, it would gain a
        # `...` line. `validate` calls such a document an error; fmt leaves it alone.
        if document is not None and not isinstance(document, dict):
            raise _NotAManifest(_kind_of(document))
    for document in documents:
        if hasattr(document, "move_to_end") and document:
            last = next(reversed(document))
            for key in reversed(TOP_LEVEL_ORDER):
                if key in document:
                    document.move_to_end(key, last=False)
            if next(reversed(document)) != last:
                # The blank lines that ended the document belong to the last key's comment;
                # moved up, they would open a gap in the middle and be kept there for good.
                _drop_trailing_blank_lines(document, last)
    yaml.explicit_start = piece.startswith("---")
    out = io.StringIO()
    yaml.dump_all(documents, out)
    return out.getvalue()


class _NotAManifest(Exception):
    """A document that is a value or a list, not a mapping: what it is instead."""


def _kind_of(document: object) -> str:
    """How a message names a document that is not a mapping."""
    if isinstance(document, list):
        return "a list"
    shown = str(document)
    return f"the value {shown[:40] + '...' if len(shown) > 40 else shown!r}"


def _drop_trailing_blank_lines(node: object, key: object) -> None:
    """Strip the blank lines after `node[key]`, and after the last entry within it."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    while isinstance(node, (CommentedMap, CommentedSeq)):
        # ruamel.yaml keeps the comment after a mapping value at [2], after a list item at [0].
        slot = 2 if isinstance(node, CommentedMap) else 0
        comments = node.ca.items.get(key)
        token = comments[slot] if comments else None
        if token is not None:
            token.value = token.value.rstrip() + "\n"
        node = node[key]
        if isinstance(node, CommentedMap) and node:
            key = next(reversed(node))
        elif isinstance(node, CommentedSeq) and node:
            key = len(node) - 1
        else:
            return


# Where a comment may begin: a `#` that starts its line or follows a blank.
_COMMENT_START = re.compile(r"(?:^|(?<=[ \t]))#")


def _refuse_to_lose_a_comment(text: str, formatted: str, file: str) -> None:
    """Raise LayoutError, naming its line, for a comment of `text` that `formatted` lacks.

    ruamel.yaml keeps no comment inside a flow collection written over several lines, for one;
    a file is better left as it is than laid out without a comment someone wrote.
    """
    kept = Counter(comment for _, comment in _comments(formatted))
    for line, comment in _comments(text):
        if kept[comment] == 0:
            raise LayoutError(
                f"{file}:{line}: laid out, the file would lose the comment {comment!r}, "
                "so fmt leaves it as it is"
            )
        kept[comment] -= 1


def _comments(text: str) -> list[tuple[int, str]]:
    """Each line's text from its first `#` that could begin a comment, with its line number.

    A `#` in a quoted value counts too: the value comes out as written, so it is found again.
    """
    found = []
    for number, line in enumerate(_lines(text), 1):
        start = _COMMENT_START.search(line)
        if start is not None:
            found.append((number, line[start.start() :].rstrip()))
    return found


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its end; only a newline ends one, as in YAML."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _problem(text: str, file: str, line: int, exc: Exception) -> str:
    """Why `text` cannot be laid out, with file:line; `exc` is what a piece of it raised."""
    from ruamel.yaml import YAML

    # Said as `validate` says it, by the project's own reader: ruamel.yaml words a syntax
    # error otherwise, and of a scalar its explicit tag cannot read (`!!int abc`) it says
    # neither what nor where.
    problem = _reader_problem(text, file)
    if problem is not None:
        return problem
    try:
        list(YAML(typ="rt").load_all(text))
    except _unreadable() as whole:
        return f"{file}: Invalid YAML: {whole}"
    # The file reads, but a document of it does not on its own: it needs a `%TAG` before it.
    reason = getattr(exc, "problem", None) or exc
    return (
        f"{file}:{line}: fmt cannot lay out a document apart from the directives before its "
        f"`---` ({reason}), so it leaves the file as it is"
    )


def _reader_problem(text: str, file: str) -> str | None:
    """The first problem the project's own YAML reader finds in `text`, with file:line."""
    from surveyctl.manifests.load import LIMITS
    from surveyctl.yamlsafe import load_documents

    problems: list[tuple[str, Location]] = []
    load_documents(text, file, LIMITS, lambda summary, where: problems.append((summary, where)))
    if not problems:
        return None
    summary, where = problems[0]
    return f"{where}: {summary}"
