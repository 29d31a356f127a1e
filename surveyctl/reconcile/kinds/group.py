"""The ExclusionGroup kind: planned after the surveys it names, by the same three-way rules.

A group's manifest names surveys by manifest name; their ps_survey_ids come from state. A
survey created in the same apply has no id yet: the plan's body for a group keeps the names
(`surveys`) beside any ids written directly (`surveys_in_group`), an update shows such a survey
as `<name> (known after apply)`, and the applier resolves the names once the surveys exist.
That a recontact survey cannot be grouped is a manifest rule (`surveyctl validate`), checked
before any plan is made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.model import DesiredState, ExclusionGroup
from surveyctl.reconcile.adoption import state_mv_command
from surveyctl.reconcile.checks import group_refs
from surveyctl.reconcile.diff import FieldChange, diff_group, group_drift
from surveyctl.reconcile.identity import Identity, Rule, Twin
from surveyctl.reconcile.kinds import base
from surveyctl.reconcile.kinds.base import Kind, Skipped, journaled_create, with_live_values
from surveyctl.reconcile.live import LiveResult, fetch_all
from surveyctl.reconcile.lost import Recovery, adopt, cannot_check, plan_again
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.merge import GROUP_MEMBERSHIP_FIELDS, merge_group
from surveyctl.reconcile.normalise import group_update_body, normalise_group
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, address, split_address
from surveyctl.state import GroupRecord, State, StateBackend, SurveyRecord, fingerprint


def group_fingerprint(live: dict) -> str:
    """What a saved plan depends on of a live group: its normalised body."""
    return fingerprint(normalise_group(live))


def api_body(planned: dict, ps_survey_ids: dict[str, int]) -> dict:
    """The API body of a planned group, survey names turned into ids (KeyError if unknown)."""
    body = {k: v for k, v in planned.items() if k != "surveys"}
    body["surveys_in_group"] = list(planned.get("surveys_in_group") or []) + [
        ps_survey_ids[name] for name in planned.get("surveys") or []
    ]
    return body


class GroupKind(Kind):
    """Exclusion groups (spec 2.9)."""

    name = EXCLUSION_GROUP
    noun = "group"
    record_type = GroupRecord
    id_label = "ref"
    read_method = "get_group"
    order = 20

    def manifests(self, desired: DesiredState) -> dict[str, ExclusionGroup]:
        return desired.groups

    def depends_on(self, manifest: ExclusionGroup) -> list[str]:
        return [address(SURVEY, survey) for survey in manifest.surveys]

    def fingerprint(self, live: dict) -> str:
        return group_fingerprint(live)

    def adopt_hint(self, name: str) -> str:
        return f"adopt it with `surveyctl import-group REF --name {name}`"

    def compared(self, body: dict) -> dict:
        return normalise_group(group_update_body(body))

    def stale_listings(
        self,
        client: Marketplace,
        state: State,
        read: Callable[[str], LiveResult],
        parallelism: int,
    ) -> set[str]:
        """The managed surveys whose group membership is not what a plan trusting their
        listed `mod_on` would take it to be. Editing a group changes its members' bodies
        (`buyer_surveygroup_ref(s)`), and whether it moves their `mod_on` is not documented
        (the sandbox's does not), so such a plan would miss what a plan reading each survey
        shows. Read: each managed group (read by every plan anyway) and each other group a
        survey's last-applied body names (one GET each). A survey is read fresh when it is in
        a group and is not expected to be, or the reverse: expected by its last-applied body
        when that sets the membership (it is compared with the live body), else by the
        members state recorded for a managed group. A group that cannot be read leaves
        every survey expected in it read."""
        surveys = {a: r for a, r in state.resources.items() if isinstance(r, SurveyRecord)}
        claims = {
            r.ps_survey_id: group_refs(r.last_applied)
            for r in surveys.values()
            if _manages_membership(r.last_applied)
        }
        recorded: dict[str, set[int]] = {}  # ref of a managed group -> the members recorded
        live: dict[str, LiveResult] = {}
        for resource, record in state.resources.items():
            if isinstance(record, GroupRecord):
                recorded[record.buyer_surveygroup_ref] = set(record.ps_survey_ids)
                live[record.buyer_surveygroup_ref] = read(resource)
        named = sorted({ref for refs in claims.values() for ref in refs} - set(recorded))
        live.update(
            fetch_all(
                client, ((ref, lambda cl, ref=ref: cl.get_group(ref)) for ref in named), parallelism
            )
        )
        moved: set[int] = set()
        for ref, result in live.items():
            expected = {i for i, refs in claims.items() if ref in refs}
            expected |= {i for i in recorded.get(ref, ()) if i not in claims}
            if result.error or (result.body is None and not result.gone):
                moved |= expected
                continue
            members = set(member_ids(result.body or {}))
            if ref not in recorded:
                # A group no manifest manages matters only to a survey whose last-applied
                # body sets its membership: a read of any other would show nothing of it.
                members &= set(claims)
            moved |= expected ^ members
        by_id = {record.ps_survey_id: a for a, record in surveys.items()}
        return {by_id[i] for i in moved if i in by_id}

    def read_beside(self, state: State, covered: set[str]) -> set[str]:
        """Each managed group that a covered survey is recorded in, or that its last-applied
        body names: `stale_listings` reads them to tell whether the survey's listed `mod_on`
        can be trusted, as a plan of the whole project does."""
        ids: set[int] = set()
        refs: set[str] = set()
        for resource in covered:
            record = state.resources.get(resource)
            if isinstance(record, SurveyRecord):
                ids.add(record.ps_survey_id)
                refs |= group_refs(record.last_applied)
        return {
            resource
            for resource, record in state.resources.items()
            if isinstance(record, GroupRecord)
            and (record.buyer_surveygroup_ref in refs or not ids.isdisjoint(record.ps_survey_ids))
        }

    def plan(
        self,
        name: str,
        manifest: ExclusionGroup,
        state: State,
        result: LiveResult | None,
        plan: Plan,
    ) -> ResourceChange | None:
        group = manifest
        resource = address(EXCLUSION_GROUP, name)
        where = str(group.location) if group.location else None
        record = base.record_of(self, state, resource)
        if base.blocked_create(self, state, resource, record, plan, where):
            return None
        known = {
            n: r.ps_survey_id
            for n in group.surveys
            if isinstance(r := state.resources.get(address(SURVEY, n)), SurveyRecord)
        }
        unknown = [n for n in group.surveys if n not in known]
        planned = group.body()
        desired_ids = api_body(
            {**planned, "surveys": [n for n in group.surveys if n in known]}, known
        )
        if record is None or (result is not None and result.gone):
            return ResourceChange(
                EXCLUSION_GROUP,
                name,
                "create",
                body=planned,
                location=where,
                prevent_destroy=group.lifecycle.prevent_destroy,
            )
        if record.buyer_surveygroup_ref != group.buyer_surveygroup_ref:
            # A program's group has no manifest name of its own to change.
            advice = (
                f"restore the program's exclusion.ref, or `surveyctl state rm {resource}` "
                "(the old group stays on the service) and plan a new group under the new one"
                if group.member is not None
                else "give the manifest a new name (a new group) and delete the old one with "
                "--destroy"
            )
            plan.notes.append(
                Note(
                    "error",
                    resource,
                    f"buyer_surveygroup_ref changed from {record.buyer_surveygroup_ref!r} to "
                    f"{group.buyer_surveygroup_ref!r}; a group's reference cannot change in "
                    f"place: {advice}",
                    group.where("buyer_surveygroup_ref"),
                )
            )
            return None
        if result is None or result.error:
            plan.notes.append(base.unreadable(self, resource, result, where))
            return None
        ignored = _ignored_fields(group)
        if "surveys_in_group" in ignored:
            unknown = []  # the live members stay as they are, so no survey joins after apply
        merged = merge_group(result.body, desired_ids, record.last_applied, ignored)
        changes = _with_pending(diff_group(result.body, merged), unknown, result.body, merged)
        action = "update" if changes else "no-op"
        if "exclusion_period" not in planned and "exclusion_period" in merged:
            planned["exclusion_period"] = merged["exclusion_period"]
        planned = _keeping_live(planned, merged, ignored)
        change = ResourceChange(
            EXCLUSION_GROUP,
            name,
            action,
            prevent_destroy=group.lifecycle.prevent_destroy,
            remote_id=group.buyer_surveygroup_ref,
            body=planned if changes else None,
            # Unchanged: the body a write would have recorded, which the live group already
            # is. Apply records it when the state remembers another (a PUT whose state write
            # was lost to a kill), so the group is not shown as drift ever after.
            last_applied=None if changes else api_body(planned, known),
            changes=changes,
            location=where,
            fingerprint=group_fingerprint(result.body),
            drift=[
                c for c in group_drift(result.body, record.last_applied) if c.field not in ignored
            ],
        )
        base.take_unrecorded(self, change, result.body, plan)
        return change

    def refresh(
        self, record: GroupRecord, live: dict
    ) -> tuple[list[FieldChange], dict | None, GroupRecord]:
        body = group_update_body(live)
        differences = group_drift(live, record.last_applied)
        applied = with_live_values(record.last_applied, body, differences)
        ids = member_ids(body)
        return (
            differences,
            applied,
            dataclasses.replace(record, last_applied=applied, ps_survey_ids=ids),
        )

    def settled(self, record: GroupRecord, last_applied: dict) -> GroupRecord:
        ids = member_ids(last_applied)
        return dataclasses.replace(record, last_applied=last_applied, ps_survey_ids=ids)

    def recover(
        self,
        client: Marketplace,
        state: State,
        lost: dict[str, Any],
        recovery: Recovery,
        now: datetime,
    ) -> None:
        for resource, group in lost.items():
            _recover_group(client, resource, group, state.journal[resource], recovery, now)

    def find_twins(
        self,
        client: Marketplace,
        wanted: dict[str, Any],
        state: State,
        rule: Rule,
        found: Identity,
        parallelism: int,
    ) -> None:
        """A group is the manifest's when it has its reference (globally unique): one GET
        each, `parallelism` at a time (a program's first plan creates a group per market and
        wave, and each was read and waited for before the next was sent)."""
        from concurrent.futures import ThreadPoolExecutor

        managed = {
            r.buyer_surveygroup_ref: a
            for a, r in state.resources.items()
            if isinstance(r, GroupRecord)
        }
        unmanaged = {}
        for resource, group in wanted.items():
            ref = group.buyer_surveygroup_ref
            if ref in managed:
                found.refused[resource] = _managed_already(ref, managed[ref], resource, found)
            else:
                unmanaged[resource] = ref
        with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
            reads = pool.map(lambda ref: _read(client, ref), unmanaged.values())
            for (resource, ref), (body, failure) in zip(unmanaged.items(), reads, strict=True):
                found.requests += 1
                _note_twin(found, resource, ref, body, failure)

    def twin_record(
        self, client: Marketplace, twin: Twin, manifest: ExclusionGroup
    ) -> tuple[GroupRecord, dict]:
        live = twin.body if twin.body is not None else client.get_group(str(twin.remote_id))
        ids = member_ids(live)
        record = GroupRecord(str(twin.remote_id), ids, None, manifest.lifecycle.prevent_destroy)
        return record, live


def _managed_already(ref: str, other: str, resource: str, found: Identity) -> str:
    """Why `resource` may not have the reference of the group state manages as `other`."""
    refused = (
        f"its buyer_surveygroup_ref {ref!r} is managed already as {other}; a "
        "reference names one group"
    )
    if other in found.unlisted:
        refused += (
            f", and {other} is no longer in the manifests: if the manifest was renamed, "
            f"run `{state_mv_command(other, resource, found.programs)}`"
        )
    return refused


def _read(client: Marketplace, ref: str) -> tuple[dict | None, SurveyctlError | None]:
    """Group `ref` as read (it exists), or how reading it failed (a 404 is an ApiError too)."""
    try:
        return client.get_group(ref), None
    except SurveyctlError as exc:
        return None, exc


def _note_twin(
    found: Identity, resource: str, ref: str, body: dict | None, failure: SurveyctlError | None
) -> None:
    """What the read of group `ref` says of `resource`: a twin (with the body read, which
    adopting it records), none (404), another buyer's group, or one that could not be checked."""
    if failure is None:
        found.twins[resource] = [Twin(ref, "same reference", noun="group", body=body)]
    elif isinstance(failure, ApiError) and failure.status == 403:
        found.refused[resource] = (
            f"group {ref} exists on the service and belongs to another buyer; "
            "buyer_surveygroup_ref is globally unique, so choose another one"
        )
    elif not (isinstance(failure, ApiError) and failure.status == 404):
        found.unchecked[resource] = f"group {ref}: {failure}"


def _ignored_fields(group: ExclusionGroup) -> frozenset[str]:
    """The group's `ignore_changes` as fields of the API body: `surveys` and
    `surveys_in_group` both end up in the one live list of members, so ignoring either keeps
    that list as it is."""
    names = set(group.lifecycle.ignore_changes)
    if names & {"surveys", "surveys_in_group"}:
        names -= {"surveys"}
        names.add("surveys_in_group")
    return frozenset(names)


def _keeping_live(planned: dict, merged: dict, ignored: frozenset[str]) -> dict:
    """The body apply sends: the manifest's, with each ignored field as the merge left it
    (its live value). The PUT overwrites the group, so sending the manifest's value of an
    ignored field would make a change the plan does not show."""
    body = dict(planned)
    for name in ignored:
        if name == "surveys_in_group":
            body["surveys"] = []
        if name in merged:
            body[name] = merged[name]
        else:
            body.pop(name, None)
    return body


def _with_pending(
    changes: list[FieldChange], unknown: list[str], live: dict, merged: dict
) -> list[FieldChange]:
    """`changes` with the members as apply will leave them: the merged ids, then the surveys
    whose ids are known only after apply, by name. One change of `surveys_in_group`, which
    replaces the diff's (made without those surveys), so the plan never shows two."""
    if not unknown:
        return changes
    live_ids = sorted(live.get("surveys_in_group") or [])
    after = sorted(merged.get("surveys_in_group") or [])
    return [c for c in changes if c.field != "surveys_in_group"] + [
        FieldChange(
            "surveys_in_group",
            live_ids or None,
            after + [f"{n} (known after apply)" for n in unknown],
        )
    ]


# -- writes -----------------------------------------------------------------------------------


def _api_body(resource: ResourceChange, store: StateBackend, failed: set[str]) -> dict:
    state = store.current()
    ids: dict[str, int] = {}
    for name in resource.body.get("surveys") or []:
        member = address(SURVEY, name)
        if member in failed:
            raise Skipped(f"{member}, which the group names, failed")
        record = state.resources.get(member)
        if not isinstance(record, SurveyRecord):
            raise Skipped(f"{member}, which the group names, has no ps_survey_id")
        ids[name] = record.ps_survey_id
    return api_body(resource.body, ids)


def _record(body: dict, resource: ResourceChange) -> GroupRecord:
    """What state keeps of a group once its body was accepted."""
    return GroupRecord(
        body["buyer_surveygroup_ref"],
        list(body["surveys_in_group"]),
        body,
        resource.prevent_destroy,
    )


def _create(resource: ResourceChange, client, store: StateBackend, failed: set[str]) -> str:
    body = _api_body(resource, store, failed)
    journaled_create(resource, store, body, client.create_group)
    store.resolve_create(resource.address, _record(body, resource))
    return f"created group {body['buyer_surveygroup_ref']}"


def _update(resource: ResourceChange, client, store: StateBackend, failed: set[str]) -> str:
    body = _api_body(resource, store, failed)
    client.update_group(resource.remote_id, body)
    store.record(resource.address, _record(body, resource))
    return f"updated group {resource.remote_id}"


def _delete(resource: ResourceChange, client, store: StateBackend, failed: set[str]) -> str:
    if base.delete_gone(resource, store, lambda: client.delete_group(resource.remote_id)):
        return f"deleted group {resource.remote_id} (already gone from the marketplace)"
    return f"deleted group {resource.remote_id}"


GroupKind.writers = {"create": _create, "update": _update, "delete": _delete}


# -- recovery ---------------------------------------------------------------------------------


def _recover_group(
    client: Marketplace,
    lost: str,
    group: ExclusionGroup,
    entry,
    recovery: Recovery,
    now: datetime,
) -> None:
    """A GET by reference says it directly: 404 made nothing; the manifest's name and
    exclusion_period: adopted; anything else: an error."""
    ref = group.buyer_surveygroup_ref
    try:
        live = client.get_group(ref)
    except ApiError as exc:
        if exc.status == 404:
            plan_again(recovery, lost, entry, now, f"made no group {ref}")
        elif exc.status == 403:
            recovery.notes.append(
                Note(
                    "error",
                    lost,
                    f"the create sent at {entry.started_at} lost its answer, and group {ref} "
                    "belongs to another buyer; choose another buyer_surveygroup_ref, or forget "
                    f"the attempt with `surveyctl state rm {lost}`",
                )
            )
        else:
            cannot_check(recovery, lost, entry, f"group {ref}: {exc}")
        return
    except SurveyctlError as exc:
        cannot_check(recovery, lost, entry, f"group {ref}: {exc}")
        return
    period = group.exclusion_period
    if live.get("name") == group.group_name and (
        period is None or live.get("exclusion_period") == period
    ):
        ids = member_ids(live)
        applied = {"buyer_surveygroup_ref": ref, "name": live.get("name"), "surveys_in_group": ids}
        if live.get("exclusion_period") is not None:
            applied["exclusion_period"] = live["exclusion_period"]
        record = GroupRecord(ref, ids, applied, group.lifecycle.prevent_destroy)
        adopt(
            recovery,
            lost,
            record,
            f"the create sent at {entry.started_at} lost its answer but made group {ref}; it "
            "is adopted, and apply records it in the state",
        )
        return
    name = split_address(lost)[1]
    recovery.notes.append(
        Note(
            "error",
            lost,
            f"the create sent at {entry.started_at} lost its answer, and group {ref} exists "
            "with another name or exclusion_period; adopt it with "
            f"`surveyctl import-group {ref} --name {name}`, or forget the attempt with "
            f"`surveyctl state rm {lost}`",
        )
    )


KIND = base.register(GroupKind())


def _manages_membership(body: dict | None) -> bool:
    """Whether a survey's last-applied body sets a membership field, even to none."""
    return any(field in (body or {}) for field in GROUP_MEMBERSHIP_FIELDS)


def member_ids(body: dict) -> list[int]:
    """The ps_survey_ids of a group's body (`surveys_in_group`), as the record keeps them."""
    return [int(i) for i in body.get("surveys_in_group") or []]
