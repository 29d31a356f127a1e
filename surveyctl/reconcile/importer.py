"""Import: adopt a live survey or exclusion group into manifests and state.

The manifest written is the live resource reduced to what a person would write: update
fields only (response-only fields dropped), no nulls, no settings left at their defaults, and
no group membership (that belongs to ExclusionGroup manifests). The state records the ids and
no last-applied body: nothing was applied by surveyctl yet, so the three-way merge keeps every
live field the manifest does not set, and a plan right after the import shows no changes
whether the written manifest or one the user already had is used. An import also resolves a
create left unresolved in the journal, which is how a lost create answer is adopted.
"""

from __future__ import annotations

from typing import Any

import yaml

from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.merge import GROUP_MEMBERSHIP_FIELDS
from surveyctl.reconcile.normalise import group_update_body, update_body
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, address, check_name, name_of
from surveyctl.state import GroupRecord, StateBackend, SurveyRecord


def import_survey(client: Marketplace, store: StateBackend, survey_id: int, name: str) -> dict:
    """Records live survey `survey_id` as `Survey/<name>`; returns its manifest."""
    target = _free_address(store, SURVEY, name)
    for other, record in store.current().resources.items():
        if isinstance(record, SurveyRecord) and record.ps_survey_id == survey_id:
            raise SurveyctlError(f"survey {survey_id} is already managed as {other}")
    live = client.get_survey(survey_id)
    spec = {
        key: value
        for key, value in update_body(live).items()
        if key not in GROUP_MEMBERSHIP_FIELDS and not _is_default(value)
    }
    quota_ids = {
        q["buyer_quota_id"]: q["ps_quota_id"]
        for q in live.get("quotas") or []
        if q.get("buyer_quota_id") and q.get("ps_quota_id")
    }
    store.resolve_create(target, SurveyRecord(int(live["ps_survey_id"]), quota_ids, None))
    return {"kind": SURVEY, "name": name, "spec": spec}


def import_group(client: Marketplace, store: StateBackend, ref: str, name: str) -> dict:
    """Records live exclusion group `ref` as `ExclusionGroup/<name>`; returns its manifest.

    Its surveys must already be managed here, so that the manifest can name them."""
    target = _free_address(store, EXCLUSION_GROUP, name)
    for other, record in store.current().resources.items():
        if isinstance(record, GroupRecord) and record.buyer_surveygroup_ref == ref:
            raise SurveyctlError(f"exclusion group {ref} is already managed as {other}")
    live = group_update_body(client.get_group(ref))
    names = {
        record.ps_survey_id: name_of(survey_address)
        for survey_address, record in store.current().resources.items()
        if isinstance(record, SurveyRecord)
    }
    ids = list(live.get("surveys_in_group") or [])
    unmanaged = [i for i in ids if i not in names]
    if unmanaged:
        raise SurveyctlError(
            f"group {ref} holds survey(s) {', '.join(map(str, unmanaged))} that surveyctl does "
            f"not manage in this environment; import them first with "
            f"`surveyctl import {unmanaged[0]} --name NAME`"
        )
    spec: dict[str, Any] = {
        "buyer_surveygroup_ref": live["buyer_surveygroup_ref"],
        "name": live.get("name", ""),
    }
    if live.get("exclusion_period") is not None:
        spec["exclusion_period"] = live["exclusion_period"]
    spec["surveys"] = [names[i] for i in ids]
    store.resolve_create(target, GroupRecord(ref, ids, None))
    return {"kind": EXCLUSION_GROUP, "name": name, "spec": spec}


def manifest_yaml(manifest: dict, source: str) -> str:
    header = f"# Imported by surveyctl from {source}.\n"
    return header + yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100)


def _free_address(store: StateBackend, kind: str, name: str) -> str:
    """The address the import will record; refused when the name breaks the manifests' rule
    (its manifest would then fail `validate`) or the address is already managed."""
    wanted = address(kind, check_name(name, "--name"))
    if wanted in store.current().resources:
        raise SurveyctlError(
            f"{wanted} is already managed in this environment; "
            f"`surveyctl state rm {wanted}` first to re-import it"
        )
    return wanted


def _is_default(value: Any) -> bool:
    """Null, empty, false, or an object of nothing but such values (qlc/qbp switched off)."""
    if value is None or value is False or value == "" or value == [] or value == {}:
        return True
    return isinstance(value, dict) and all(_is_default(v) for v in value.values())
