"""The canonical layout of a manifest file, as `surveyctl fmt` writes it, comments kept.

The layout: two-space indentation, list items indented under their key (`  - item`), the
top-level keys of each document in the order kind, name, spec, lifecycle, one newline at the
end, lines never wrapped. Everything else is kept as written: comments, quotes (`"111"` stays a
string), flow or block style, the order of the fields under `spec`, anchors. ruamel.yaml's
round trip does this; formatting a formatted file changes nothing.
"""

from __future__ import annotations

import io

from surveyctl.errors import Location, SurveyctlError

TOP_LEVEL_ORDER = ("kind", "name", "spec", "lifecycle")
_NEVER_WRAP = 4096


class LayoutError(SurveyctlError):
    """A file that is not YAML cannot be laid out; the message names its file and line."""


def canonical(text: str, file: str = "<text>") -> str:
    """`text` in the canonical layout (the same text when it already is)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = _NEVER_WRAP
    try:
        documents = list(yaml.load_all(text))
    except (
        YAMLError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
        TypeError,
        OverflowError,
    ) as exc:
        # Said as `validate` says it, by the project's own reader: ruamel.yaml words a syntax
        # error otherwise, and of a scalar its explicit tag cannot read (`!!int abc`) it says
        # neither what nor where.
        problem = _reader_problem(text, file) or f"{file}: Invalid YAML: {exc}"
        raise LayoutError(problem) from None
    if all(document is None for document in documents):
        return text  # nothing but comments (or nothing): nothing to lay out
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
    yaml.explicit_start = text.lstrip().startswith("---")
    out = io.StringIO()
    yaml.dump_all(documents, out)
    return out.getvalue().rstrip("\n") + "\n"


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
