"""The three-way merge that builds a full-overwrite update body.

The update (PUT, spec 2.2) replaces every attribute of a survey; whatever the body leaves out
is reset. So the body cannot be the manifest alone: it would wipe everything set outside
surveyctl. Like `kubectl apply`, the body is built from three sides - live, desired (the
manifest, expanded into API fields) and last applied (from state) - with the top-level field as
the unit of ownership:

1. start from the live survey reduced to update fields;
2. a field the manifest sets takes the manifest's value (a list such as `quotas` or
   `qualifications` replaces the live list as a whole);
3. a field that was in the last-applied body but that the manifest dropped is reset (left out);
4. a field the manifest never managed keeps its live value;
5. a field named in `ignore_changes` keeps its live value, whatever the manifest says;
6. group membership (`buyer_surveygroup_ref`, `buyer_surveygroup_refs`) is always the live
   value: exclusion groups are managed through ExclusionGroup resources.

Example::

    live         = {"survey_title": "Old", "buyer_message": "set by hand",
                    "offer_price": 2.0, "test_url": "https://t", "buyer_surveygroup_refs": ["g"]}
    last_applied = {"survey_title": "Old", "offer_price": 2.0, "test_url": "https://t"}
    desired      = {"survey_title": "New", "offer_price": 3.0}
    merge_survey(live, desired, last_applied, ignore_changes=["offer_price"])
    # -> {"survey_title": "New",               rule 2
    #     "buyer_message": "set by hand",      rule 4
    #     "offer_price": 2.0,                  rule 5 (test_url dropped: rule 3)
    #     "buyer_surveygroup_refs": ["g"]}     rule 6

Exclusion groups follow the same rules over the four fields of spec 2.9 (`merge_group`).
"""

from __future__ import annotations

from collections.abc import Iterable

from surveyctl.fields import GROUP_FIELDS, UPDATE_FIELDS
from surveyctl.reconcile.normalise import (
    group_update_body,
    json_copy,
    update_body,
)

# Membership is the business of ExclusionGroup resources, never of a survey's manifest.
GROUP_MEMBERSHIP_FIELDS: tuple[str, ...] = ("buyer_surveygroup_ref", "buyer_surveygroup_refs")


def merge_survey(
    live: dict,
    desired: dict,
    last_applied: dict | None,
    ignore_changes: Iterable[str] = (),
) -> dict:
    """The full PUT body for a survey: live + desired + last applied, as the rules above say.

    `live` is the GET response, `desired` the manifest's expanded API body, `last_applied`
    the body recorded in state (None for a survey never applied, e.g. just imported).
    """
    keep_live = [*ignore_changes, *GROUP_MEMBERSHIP_FIELDS]
    return _merge(update_body(live), desired, last_applied, keep_live, UPDATE_FIELDS)


def merge_group(
    live: dict,
    desired: dict,
    last_applied: dict | None,
    ignore_changes: Iterable[str] = (),
) -> dict:
    """The full PUT body for an exclusion group, by the same rules over the fields of 2.9.

    `desired` names surveys by ps_survey_id in `surveys_in_group` (the planner resolves the
    manifest's survey names first).
    """
    return _merge(group_update_body(live), desired, last_applied, ignore_changes, GROUP_FIELDS)


def _merge(
    live_body: dict,
    desired: dict,
    last_applied: dict | None,
    keep_live: Iterable[str],
    fields: tuple[str, ...],
) -> dict:
    # live_body is a fresh copy made by update_body, used only here; top-level values are
    # replaced, never changed in place, so a shallow copy keeps the live side intact for
    # rule 5, and a value taken back from it needs no copy of its own.
    body = dict(live_body)
    for name in last_applied or {}:
        if name not in desired:
            body.pop(name, None)
    for name, value in desired.items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = json_copy(value)
    for name in keep_live:
        _keep_live(body, live_body, name)
    order = {name: index for index, name in enumerate(fields)}
    # The API's field order first, anything else after: stable bodies make stable plan files.
    return dict(sorted(body.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _keep_live(body: dict, live_body: dict, name: str) -> None:
    if name in live_body:
        body[name] = live_body[name]
    else:
        body.pop(name, None)
