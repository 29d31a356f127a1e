"""Canonical forms of survey and group bodies, so that only real changes show up in a plan.

Diff noise is a bug. The service answers with more fields than it accepts, in its own order,
and with numbers and codes spelled its own way; a manifest says the same things differently.
`normalise_survey` maps both onto one form, for comparison only (never send it):

- only update fields (2.2) are compared: response-only fields (2.5 fields that are not 2.2
  update fields, `ps_quota_id` inside quotas) and fields the documentation shows the service
  adding (`mod_on`, `crtd_on`, ...) are dropped;
- numbers the service sends as text (`"from": "21"`, `"offer_price": "1.30"`) are numbers, and
  a numeric field sent as `""` is absent (public facts);
- null, "", [] and {} are the same as absent (the update resets what it does not carry);
- inside `qlc`, false is the same as absent (2.7: every option defaults to false, and the
  response always carries the full object);
- numbers compare by value (5 == 5.0), booleans stay booleans;
- `condition_codes` are a set of strings, `range_sets` a set of ranges; so are the other
  lists whose order means nothing (`subscriber_emails`, `buyer_surveygroup_refs`,
  `qbp.quota_ids`, `feasibility_exclusions.criteriaSurveys` and `.statuses`);
- `qualifications` are keyed by qualification_code, `quotas` by buyer_quota_id and each
  quota's `criteria` by qualification_code (a keyed collection must have unique keys; the
  manifest rules check that before planning).

`update_body(live)` is different: it turns a live response into a body the update (PUT, 2.2)
accepts, in the API's own list form, because the service rejects unknown fields; numbers sent
as text go back as numbers.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from surveyctl.fields import (
    GROUP_FIELDS,
    QUOTA_UPDATE_FIELDS,
    UNMANAGED_FIELDS,
    UPDATE_FIELDS,
)
from surveyctl.numbers import as_number

# Collections whose items have an identity: the key each item is filed under.
KEYED_COLLECTIONS: dict[str, str] = {
    "qualifications": "qualification_code",
    "quotas": "buyer_quota_id",
    "criteria": "qualification_code",
}

# Lists whose order carries no meaning; compared as sets.
_UNORDERED_LISTS = frozenset(
    {
        "condition_codes",
        "range_sets",
        "subscriber_emails",
        "buyer_surveygroup_refs",
        "quota_ids",
        "criteriaSurveys",
        "statuses",
        "surveys_in_group",
    }
)
_STRING_SETS = frozenset({"condition_codes"})

# Fields whose value is a number (or a list of numbers), at any depth of a survey or group
# body. The service may spell them as text (public facts: range bounds "21", "1.30"); they are
# read as numbers, and "" as absent. Every other string stays a string (condition codes,
# titles, ids).
NUMERIC_FIELDS = frozenset(
    {
        "survey_category_code", "completes_required", "expected_ir", "expected_loi",
        "offer_price", "field_time", "survey_pause_threshold", "incl_excl", "click_balancing",
        "global_flexibility", "template_id", "qualification_code", "from", "to", "units",
        "child_age_unit", "required_count", "interval", "exclusion_period", "hours", "minutes",
    }
)  # fmt: skip
NUMERIC_LISTS = frozenset({"surveys_in_group", "criteriaSurveys", "statuses", "days"})


def update_body(live_response: dict) -> dict:
    """The live survey as an update body (2.2): update fields only, API list form, no nulls,
    numbers sent as text turned back into numbers; a copy that shares nothing with
    `live_response`."""
    body: dict[str, Any] = {}
    for name in UPDATE_FIELDS:
        value = _numbers(name, live_response.get(name))
        if value is None:
            continue
        if name == "quotas":
            body[name] = [_quota_update(quota) for quota in value if isinstance(quota, dict)]
        else:
            body[name] = json_copy(value)
            if name in UNMANAGED_FIELDS and isinstance(value, dict):
                unmanaged = UNMANAGED_FIELDS[name]
                body[name] = {k: v for k, v in body[name].items() if k not in unmanaged}
    return body


def _quota_update(quota: dict) -> dict:
    return {
        name: json_copy(quota[name]) for name in QUOTA_UPDATE_FIELDS if quota.get(name) is not None
    }


def group_update_body(live_group: dict) -> dict:
    """The live exclusion group reduced to the four fields of 2.9, without nulls."""
    return {
        name: json_copy(value)
        for name in GROUP_FIELDS
        if (value := _numbers(name, live_group.get(name))) is not None
    }


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value. Bodies hold only dicts, lists and scalars, so this skips
    what makes `copy.deepcopy` four times slower (the memo of shared and cyclic objects, the
    dispatch on every type); anything else still goes through `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {
            key: item if type(item) in _SCALARS else json_copy(item) for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _SCALARS else json_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def normalise_survey(body: dict) -> dict:
    """The canonical form of a survey body (request or response), for comparison only."""
    kept = {name: value for name, value in body.items() if name in UPDATE_FIELDS}
    return _normalise_mapping(kept, parent=None)


def normalise_group(body: dict) -> dict:
    """The canonical form of an exclusion group body, for comparison only."""
    return _normalise_mapping({k: v for k, v in body.items() if k in GROUP_FIELDS}, parent=None)


def is_empty(value: Any) -> bool:
    """Whether a value means "not set": null, "", [] or {}."""
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


def _normalise_mapping(mapping: dict, parent: str | None) -> dict:
    result: dict[str, Any] = {}
    for name, value in mapping.items():
        if parent == "quota" and name not in QUOTA_UPDATE_FIELDS:
            continue
        if name in UNMANAGED_FIELDS.get(parent or "", ()):
            continue
        kind = type(value)
        # Most values are plain strings and integers, their own normal form: no calls for them
        # (a string of a numeric field may be a number the service sent as text; so may the
        # one number `days` of a duration, a name of NUMERIC_LISTS).
        if kind is str and name not in NUMERIC_FIELDS and name not in NUMERIC_LISTS:
            if not value:
                continue
            normal = value
        elif kind is int or kind is bool:
            normal = value
        else:
            normal = _normalise_field(name, _numbers(name, value, deep=False), parent)
            if is_empty(normal):
                continue
        if parent == "qlc" and normal is False:
            continue
        result[name] = normal
    return result


def _normalise_field(name: str, value: Any, parent: str | None) -> Any:
    if name in KEYED_COLLECTIONS and isinstance(value, list):
        key = KEYED_COLLECTIONS[name]
        item_parent = "quota" if name == "quotas" else name
        return {
            _scalar(_numbers(key, item.get(key))): _normalise_mapping(item, item_parent)
            for item in value
            if isinstance(item, dict)
        }
    if isinstance(value, dict):
        # qlc's nested multiple_quotas shares qlc's false-means-absent default.
        child_parent = "qlc" if name == "qlc" or parent == "qlc" else name
        return _normalise_mapping(value, child_parent)
    if isinstance(value, list):
        items = [item if type(item) in _PLAIN else _normalise_value(item) for item in value]
        if name in _STRING_SETS:
            items = [str(item) for item in items]
        if name in _UNORDERED_LISTS:
            return _sorted_set(items)
        return items
    return _scalar(value)


# Values that are their own normal form (exact types: a subclass takes the long way).
_PLAIN = frozenset({str, int, bool, type(None)})


def _normalise_value(value: Any) -> Any:
    if isinstance(value, dict):
        return _normalise_mapping(value, parent=None)
    if isinstance(value, list):
        return [_normalise_value(item) for item in value]
    return _scalar(value)


def _numbers(name: str, value: Any, deep: bool = True) -> Any:
    """`value` with the numbers of numeric fields read from text ("21" -> 21, "" -> None);
    with `deep`, at every level below too (for bodies that are sent, not compared)."""
    if name in NUMERIC_FIELDS:
        return as_number(value)
    if name in NUMERIC_LISTS:  # a list of numbers; `days` of a duration is one number
        return [as_number(item) for item in value] if isinstance(value, list) else as_number(value)
    if not deep:
        return value
    if isinstance(value, dict):
        return {key: _numbers(key, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers(name, item) for item in value]
    return value


def _scalar(value: Any) -> Any:
    # 5.0 and 5 are the same number to the service; bool is an int subclass and must stay bool.
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        return int(value)
    return value


def _sorted_set(items: list) -> list:
    if len(items) < 2:
        return items
    if all(type(item) is str for item in items):
        return sorted(set(items))  # the common case (codes, emails, refs), as _sort_key orders
    unique: dict[tuple, Any] = {}
    for item in items:
        unique.setdefault(_sort_key(item), item)
    return [unique[key] for key in sorted(unique)]


def _sort_key(item: Any) -> tuple:
    # Numbers sort as numbers, then strings, then anything else by its JSON text.
    if isinstance(item, int | float) and not isinstance(item, bool):
        return (0, item, "")
    if isinstance(item, str):
        return (1, 0, item)
    return (2, 0, _KEY_ENCODER.encode(item))


# json.dumps(item, sort_keys=True, default=str), without making an encoder for each item.
_KEY_ENCODER = json.JSONEncoder(sort_keys=True, default=str)
