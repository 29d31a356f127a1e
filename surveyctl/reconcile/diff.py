"""Field-level differences between two survey (or group) bodies, and what kind of write they need.

`diff_survey(before, after)` normalises both bodies (see `normalise`) and lists what differs
as `FieldChange`s whose paths name items by identity, not by position:

    survey_title                            a plain field
    quotas[male].required_count             a field of the quota whose buyer_quota_id is male
    quotas[female-18-34]                    a whole quota added or removed (old or new is None)
    qualifications[211].condition_codes     a list is reported whole, never item by item
    qlc.multiple_quotas.enable              a nested object's field

The list is sorted by the API's field order, then by path, so plans are stable. `classify`
says which write a list of changes needs: nothing, per-quota PUTs (only `required_count` or
`criteria` of quotas present on both sides changed), or a full update.
`quota_update_bodies` gives the per-quota PUT bodies of a quota update.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from surveyctl.fields import GROUP_FIELDS, UPDATE_FIELDS
from surveyctl.reconcile.normalise import (
    KEYED_COLLECTIONS,
    group_update_body,
    normalise_group,
    normalise_survey,
)
from surveyctl.reconcile.plan import FieldChange

__all__ = [
    "PER_QUOTA_FIELDS",
    "FieldChange",
    "classify",
    "diff_group",
    "diff_normalised",
    "diff_survey",
    "drift",
    "drift_normalised",
    "group_drift",
    "quota_update_bodies",
]

Classification = Literal["no-op", "quota-update", "update"]
# The fields of a quota that a per-quota PUT (spec 2.4) can change; any other difference
# needs a full update.
PER_QUOTA_FIELDS = frozenset({"required_count", "criteria"})


def diff_survey(before: dict, after: dict) -> list[FieldChange]:
    """Changes from `before` to `after` (survey bodies in API form, e.g. live and PUT body)."""
    return diff_normalised(normalise_survey(before), normalise_survey(after))


def diff_normalised(before: dict, after: dict) -> list[FieldChange]:
    """`diff_survey` of bodies already normalised by `normalise_survey`: a planner that needs
    the live body for both the diff and the drift normalises it once."""
    return _diff(before, after, UPDATE_FIELDS)


def diff_group(before: dict, after: dict) -> list[FieldChange]:
    """Changes between two exclusion group bodies (2.9)."""
    return _diff(normalise_group(before), normalise_group(after), GROUP_FIELDS)


def group_drift(live: dict, last_applied: dict | None) -> list[FieldChange]:
    """Managed fields of a group (those of its last-applied body) whose live value differs.
    A managed field the live body no longer carries is drift too (removed)."""
    if not last_applied:
        return []
    live_body = group_update_body(live)
    managed = {name: value for name, value in live_body.items() if name in last_applied}
    return diff_group(last_applied, managed)


def drift(live: dict, last_applied: dict | None) -> list[FieldChange]:
    """Managed fields (those of the last-applied body) whose live value differs: changed
    outside surveyctl since the last apply. `old` is the applied value, `new` the live one."""
    return drift_normalised(normalise_survey(live), last_applied)


def drift_normalised(live: dict, last_applied: dict | None) -> list[FieldChange]:
    """`drift` with the live body already normalised by `normalise_survey`."""
    if not last_applied:
        return []
    managed = set(last_applied)
    live_managed = {name: value for name, value in live.items() if name in managed}
    return _diff(normalise_survey(last_applied), live_managed, UPDATE_FIELDS)


def classify(changes: list[FieldChange]) -> Classification:
    """no-op, quota-update (per-quota PUTs suffice) or update (a full PUT)."""
    if not changes:
        return "no-op"
    if all(_is_quota_field_change(change) for change in changes):
        return "quota-update"
    return "update"


def quota_update_bodies(after: dict, changes: list[FieldChange]) -> dict[str, dict]:
    """buyer_quota_id -> `{"required_count", "criteria"}` PUT body, for each changed quota.

    `after` is the desired body in API form (the merged PUT body); the bodies are taken from
    its quotas, so they carry the manifest's own spelling of criteria.
    """
    if classify(changes) != "quota-update":
        raise ValueError("these changes need a full update, not per-quota updates")
    changed = {str(change.parts[1]) for change in changes}
    bodies: dict[str, dict] = {}
    for quota in after.get("quotas") or []:
        quota_id = str(quota.get("buyer_quota_id"))
        if quota_id in changed:
            bodies[quota_id] = {
                "required_count": quota.get("required_count"),
                "criteria": list(quota.get("criteria") or []),
            }
    return dict(sorted(bodies.items()))


def _is_quota_field_change(change: FieldChange) -> bool:
    parts = change.parts
    return len(parts) >= 3 and parts[0] == "quotas" and parts[2] in PER_QUOTA_FIELDS


def _diff(before: dict, after: dict, field_order: tuple[str, ...]) -> list[FieldChange]:
    if _identical(before, after):
        return []  # most surveys of most plans: skip DeepDiff's much slower walk
    # Imported on first use: importing deepdiff takes about 0.1 s (it brings pydantic and
    # asyncio), which a no-op plan and every other command need not pay.
    from deepdiff import DeepDiff

    tree = DeepDiff(before, after, view="tree")
    found: dict[tuple, FieldChange] = {}
    for report in tree.values():
        for level in report:
            parts = _leaf_parts(before, after, tuple(level.path(output_format="list")))
            for leaf in _expand(parts, _at(before, parts), _at(after, parts)):
                found.setdefault(leaf.parts, leaf)
    order = {name: index for index, name in enumerate(field_order)}
    return sorted(
        found.values(),
        key=lambda change: (
            order.get(change.parts[0], len(order)),
            str(change.parts[0]),
            change.path,
        ),
    )


def _identical(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout (== alone says True == 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and _all_identical(a.values(), map(b.__getitem__, a))
    if isinstance(a, list):
        return len(a) == len(b) and _all_identical(a, b)
    return a == b


def _all_identical(values: Iterable, others: Iterable) -> bool:
    for value, other in zip(values, others, strict=True):
        kind = type(value)
        if kind is not type(other):
            return False
        # Scalars are compared here: a call for each leaf is most of the cost of a no-op plan.
        if kind in _SCALARS:
            if value != other:
                return False
        elif not _identical(value, other):
            return False
    return True


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _expand(parts: tuple, old: Any, new: Any) -> list[FieldChange]:
    """A plain object that appears or goes is reported field by field; an identified item
    (a quota, a qualification, a criterion) or a list stays whole."""
    objects = isinstance(old, dict) or isinstance(new, dict)
    if not objects or _is_item_key(parts, len(parts) - 1):
        return [
            FieldChange(
                path=_render(parts),
                old=_api_form(parts, old),
                new=_api_form(parts, new),
                parts=parts,
            )
        ]
    old_map = old if isinstance(old, dict) else {}
    new_map = new if isinstance(new, dict) else {}
    changes: list[FieldChange] = []
    for key in sorted(set(old_map) | set(new_map), key=str):
        if old_map.get(key) != new_map.get(key):
            changes.extend(_expand((*parts, key), old_map.get(key), new_map.get(key)))
    return changes


def _api_form(parts: tuple, value: Any) -> Any:
    """A normalised value with its keyed collections turned back into lists, for display."""
    if not isinstance(value, dict):
        return value
    if _is_item_key((*parts, None), len(parts)):
        return [_api_form((*parts, key), item) for key, item in value.items()]
    return {key: _api_form((*parts, key), item) for key, item in value.items()}


def _leaf_parts(before: dict, after: dict, parts: tuple) -> tuple:
    """The path cut at the first list: a list is reported as a whole, never by index."""
    for length in range(1, len(parts) + 1):
        if isinstance(_at(before, parts[:length]), list) or isinstance(
            _at(after, parts[:length]), list
        ):
            return parts[:length]
    return parts


def _at(body: Any, parts: tuple) -> Any:
    from deepdiff.helper import NotPresent  # only after _diff has imported deepdiff

    for part in parts:
        if isinstance(body, dict) and part in body:
            body = body[part]
        else:
            return None
    return None if isinstance(body, NotPresent) else body


def _render(parts: tuple) -> str:
    text = str(parts[0])
    for index in range(1, len(parts)):
        text += f"[{parts[index]}]" if _is_item_key(parts, index) else f".{parts[index]}"
    return text


def _is_item_key(parts: tuple, index: int) -> bool:
    if index < 1:
        return False
    # Keyed collections sit at the top (quotas, qualifications) or inside a quota (criteria);
    # checking the position keeps a quota named "criteria" from confusing the rendering.
    if index == 1:
        return parts[0] in KEYED_COLLECTIONS
    return index == 3 and parts[0] == "quotas" and parts[2] == "criteria"
