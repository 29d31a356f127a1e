"""Changing one place of a document (a manifest, surveyctl.yaml), for the tests that compare
what each change gets: `changed(document, path, new)` is a deep copy with the value at `path`
replaced by `new` (a copy of it), or removed when `new` is REMOVED; an empty path replaces the
whole document. `paths_of(document)` gives every path to a value in it, the whole's first."""

from __future__ import annotations

import copy
from typing import Any

REMOVED = object()


def changed(document: Any, path: tuple, new: Any) -> Any:
    if not path:
        return copy.deepcopy(new)
    document = copy.deepcopy(document)
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    if new is REMOVED:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(new)
    return document


def paths_of(value: Any, prefix: tuple = ()):
    """Every path to a value inside a loaded document, the document's own (`()`) first."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_of(item, (*prefix, index))
