"""Bounds on what a YAML file may make the reader do, checked before the work is done.

- nesting and the number of values are counted on libyaml's event stream (iterative, and
  keeping no tree) whenever the text is long or deep enough to exceed them: libyaml composes
  recursively on the C stack, and a composed tree costs memory per value;
- expansion by aliases (`*a`) and merge keys (`<<`) is measured on the composed graph, where
  an alias is the node it names, so each node is visited once: PyYAML copies merged keys into
  every mapping that merges them, and nested `<<: [*m, *m]` double the work at each level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from surveyctl.errors import Location
from surveyctl.yamlsafe.marked import (
    MERGE_TAG,
    BaseLoader,
    error_location,
    location,
    yaml_problem,
)

# libyaml composes recursively on the C stack, which a few ten thousand nested levels
# overflow (a crash, not an exception). Text whose nesting cannot exceed this bound is
# composed directly; other text is first walked as events, which libyaml does iteratively.
SAFE_NESTING = 2000
# Aliases and merge keys may repeat what is written; a document may expand to this many
# values per character of its file (plus a floor for tiny files) before it is refused.
_EXPANSION_PER_CHARACTER = 10
_EXPANSION_FLOOR = 10_000


@dataclass(frozen=True)
class Limits:
    """How much one file may make the reader do; `what` names the file in messages."""

    what: str
    max_bytes: int
    max_values: int
    max_depth: int = 32

    def needs_event_walk(self, text: str) -> bool:
        """Whether `text` could hold more values or deeper nesting than composing may face
        (a value takes at least half a character)."""
        return 2 * len(text) + 2 > self.max_values or nesting_bound(text) > SAFE_NESTING

    def expansion_budget(self, text: str) -> int:
        """How many values a document of `text` may expand to."""
        return min(self.max_values, _EXPANSION_PER_CHARACTER * len(text) + _EXPANSION_FLOOR)


def nesting_bound(text: str) -> int:
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


def within_limits(
    text: str, filename: str, limits: Limits, report: Callable[[str, Location], None]
) -> bool:
    """Walks the event stream (iterative in libyaml, and keeping no tree) before composing:
    counts the values and the nesting, which composing could not survive unbounded."""
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=BaseLoader):
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
        if _too_deep_for_libyaml(exc):
            # libyaml (in PyYAML's wheels from 6.0.4) refuses nesting far deeper than any of
            # our limits, before the events could show it: ours is the sentence that applies.
            report(
                f"The YAML nests deeper than {limits.max_depth} levels",
                error_location(exc, filename),
            )
        else:
            report(f"Invalid YAML: {yaml_problem(exc, text)}", error_location(exc, filename))
        return False
    return True


def _too_deep_for_libyaml(exc: yaml.YAMLError) -> bool:
    return "maximum nesting depth" in str(getattr(exc, "problem", None) or "")


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def expansion_problem(
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
                if key_node.tag == MERGE_TAG:
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
            if merge_mark is not None and any(k.tag == MERGE_TAG for k, _ in node.value):
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
