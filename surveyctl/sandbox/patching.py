"""JSON Patch (RFC 6902) for the sandbox's partial updates, applied with the `jsonpatch` library.

A patch works on the resource as the service answers it (the survey of GET, the quota with its
current_target), so `replace` finds every field the buyer sees, null ones included. What the
patch changed is then checked: fields the buyer cannot set are refused, and the result must be a
valid body like any other write.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from surveyctl.sandbox.errors import PATCH_REFUSED, conflict


def apply(document: dict, operations: list[dict]) -> dict:
    """The document after the operations (the original is left as it was); 409 when an
    operation cannot be applied to it (a missing path, a failed test, a bad pointer)."""
    try:
        patched = jsonpatch.JsonPatch(operations).apply(document)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise conflict(PATCH_REFUSED, f"the patch cannot be applied: {exc}") from None
    if not isinstance(patched, dict):
        raise conflict(PATCH_REFUSED, "the patch must leave an object")
    return patched


def changed_fields(before: dict, after: dict) -> set[str]:
    """The top-level fields the patch added, removed or changed."""
    names = set(before) | set(after)
    return {name for name in names if _differs(before.get(name, _ABSENT), after.get(name, _ABSENT))}


def refuse_fixed(changed: set[str], allowed: tuple[str, ...] | set[str], what: str) -> None:
    """409 naming the first changed field that is not among `allowed`."""
    fixed = sorted(changed - set(allowed))
    if fixed:
        raise conflict(PATCH_REFUSED, f"{fixed[0]} of the {what} cannot be changed by a patch")


_ABSENT = object()


def _differs(old: Any, new: Any) -> bool:
    # True == 1 in Python; a patch that turns false into 0 changes the value's type.
    return old is not new and (type(old) is not type(new) or old != new)
