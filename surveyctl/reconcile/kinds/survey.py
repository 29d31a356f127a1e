"""The Survey kind: a survey's manifest, live body, plan, writes, drift and recovery.

A survey is planned by the three-way merge (`merge_survey`) of live, manifest and last-applied
bodies, diffed against live and classified: no-op, create, update (full PUT), quota-update
(per-quota PUTs) or delete. Surveys are written before the groups that name them and deleted
after them.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from surveyctl.errors import SurveyctlError
from surveyctl.model import DesiredState, Survey
from surveyctl.reconcile import checks
from surveyctl.reconcile.diff import (
    PER_QUOTA_FIELDS,
    FieldChange,
    classify,
    diff_normalised,
    drift,
    drift_normalised,
    quota_update_bodies,
)
from surveyctl.reconcile.identity import Identity, Rule, Twin
from surveyctl.reconcile.kinds import base, survey_listing
from surveyctl.reconcile.kinds.base import Kind, journaled_create, with_live_values
from surveyctl.reconcile.kinds.survey_live import live_fingerprint, quota_ids, survey_record
from surveyctl.reconcile.kinds.survey_recovery import recover_surveys
from surveyctl.reconcile.kinds.survey_twins import survey_twins
from surveyctl.reconcile.live import LiveResult, fetch_all
from surveyctl.reconcile.lost import Recovery
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.merge import GROUP_MEMBERSHIP_FIELDS, merge_survey
from surveyctl.reconcile.normalise import normalise_survey, update_body
from surveyctl.reconcile.plan import Note, Plan, ResourceChange, Spend
from surveyctl.resources import SURVEY, address
from surveyctl.state import State, StateBackend, SurveyRecord
from surveyctl.statuses import DRAFT, survey_status_name


class SurveyKind(Kind):
    """Surveys (spec 2.1-2.5)."""

    name = SURVEY
    noun = "survey"
    record_type = SurveyRecord
    id_label = "ps_survey_id"
    read_method = "get_survey"
    order = 10

    def manifests(self, desired: DesiredState) -> dict[str, Survey]:
        return desired.surveys

    def fingerprint(self, live: dict) -> str:
        return live_fingerprint(live)

    def versions(
        self, client: Marketplace, records: dict[str, SurveyRecord]
    ) -> dict[str, int | None] | None:
        return survey_listing.listed_versions(client, records)

    def unchanged(self, record: SurveyRecord, version: int | None, manifest: Survey) -> bool:
        return (
            record.mod_on is not None
            and version == record.mod_on
            and record.last_applied == manifest.body()
        )

    def compared(self, body: dict) -> dict:
        return normalise_survey(body)

    def state_body(self, record: SurveyRecord) -> dict | None:
        return record.last_applied

    def spend(self, before: dict | None, after: dict | None) -> Spend | None:
        return checks.survey_spend(before, after)

    def adopt_hint(self, name: str) -> str:
        return (
            "find its id with `surveyctl surveys list --unmanaged` and adopt it with "
            f"`surveyctl import SURVEY_ID --name {name}`"
        )

    def plan(
        self, name: str, manifest: Survey, state: State, result: LiveResult | None, plan: Plan
    ) -> ResourceChange | None:
        resource = address(SURVEY, name)
        where = str(manifest.location) if manifest.location else None
        desired = manifest.body()
        record = base.record_of(self, state, resource)
        if base.blocked_create(self, state, resource, record, plan, where):
            return None
        if record is None or (result is not None and result.gone):
            if record is not None:
                plan.notes.append(
                    Note(
                        "warning",
                        resource,
                        f"survey {record.ps_survey_id} was deleted outside surveyctl; it will "
                        "be created again",
                        where,
                    )
                )
            plan.notes.extend(checks.survey_notes(resource, desired, manifest.where))
            return ResourceChange(
                SURVEY,
                name,
                "create",
                prevent_destroy=manifest.lifecycle.prevent_destroy,
                body=desired,
                last_applied=desired,
                spend=checks.survey_spend(None, desired),
                location=where,
            )
        if result is not None and result.unchanged:
            return _unchanged(name, manifest, desired, record)
        if result is None or result.error or result.body is None:
            plan.notes.append(base.unreadable(self, resource, result, where))
            return None
        change = _update(name, manifest, desired, record, result.body, plan.notes)
        base.take_unrecorded(self, change, result.body, plan)
        if change.action == "no-op" and not change.drift and not result.from_state:
            plan.seen[resource] = survey_listing.version(result.body)
        return change

    def after_plan(
        self, client: Marketplace, changes: list[ResourceChange], plan: Plan, parallelism: int
    ) -> None:
        """Reads quota performance only for surveys whose plan lowers a required_count."""
        lowered = {
            c.address: c for c in changes if c.is_change and checks.lowered_quotas(c.changes)
        }
        performance = fetch_all(
            client,
            (
                (resource, lambda cl, i=c.remote_id: cl.quota_performance(i))
                for resource, c in lowered.items()
            ),
            parallelism,
        )
        for resource, result in sorted(performance.items()):
            change = lowered[resource]
            if result.body is None:
                # Said, so that a reviewer does not read the missing warning as "none closes".
                reason = result.error or "the service answered 404"
                plan.notes.append(
                    Note(
                        "warning",
                        resource,
                        f"cannot read its quota performance ({reason}): whether a lowered "
                        "required_count closes a quota was not checked",
                        change.location,
                    )
                )
                continue
            plan.notes.extend(
                checks.closing_quotas(resource, change.body or {}, result.body, change.location)
            )

    def removal_notes(self, resource: str, live: dict | None) -> list[Note]:
        if not live or live.get("ps_survey_status") == DRAFT:
            return []
        if checks.is_closed(live):
            # A closed survey can still be deleted (DELETE in any status); its fieldwork is
            # over, but the DELETE takes its quotas and transactions with it.
            return [
                Note(
                    "warning",
                    resource,
                    "deleting a closed survey removes it from the marketplace with its "
                    "quotas and transactions",
                )
            ]
        status = survey_status_name(live.get("ps_survey_status"))
        return [Note("warning", resource, f"deleting a {status} survey stops its fieldwork")]

    def refresh(
        self, record: SurveyRecord, live: dict
    ) -> tuple[list[FieldChange], dict | None, SurveyRecord]:
        differences = drift(live, record.last_applied)
        applied = with_live_values(record.last_applied, update_body(live), differences)
        # The live body now matches what is recorded as last applied, so its mod_on is the one
        # "read and found as last applied": later plans need not read the survey again.
        refreshed = dataclasses.replace(
            record,
            last_applied=applied,
            quota_ids=quota_ids(live),
            mod_on=survey_listing.version(live),
        )
        return differences, applied, refreshed

    def recover(
        self,
        client: Marketplace,
        state: State,
        lost: dict[str, Any],
        recovery: Recovery,
        now: datetime,
    ) -> None:
        recover_surveys(client, state, lost, recovery, now)

    def find_twins(
        self,
        client: Any,
        wanted: dict[str, Any],
        state: State,
        rule: Rule,
        found: Identity,
        parallelism: int,
    ) -> None:
        survey_twins(client, wanted, state, rule, found, parallelism)

    def twin_record(
        self, client: Marketplace, twin: Twin, manifest: Survey
    ) -> tuple[SurveyRecord, dict]:
        live = client.get_survey(int(twin.remote_id))
        return survey_record(live, None, manifest.lifecycle.prevent_destroy), live


def _unchanged(name: str, survey: Survey, desired: dict, record: SurveyRecord) -> ResourceChange:
    """A survey the list shows as surveyctl last wrote it, whose manifest is what was last
    applied: left as it is, without reading it. Its body then is the last-applied one in every
    field the manifest sets, so the spend is the manifest's."""
    return ResourceChange(
        SURVEY,
        name,
        "no-op",
        prevent_destroy=survey.lifecycle.prevent_destroy,
        remote_id=record.ps_survey_id,
        last_applied=desired,
        fingerprint=f"mod_on {record.mod_on}",
        spend=checks.survey_spend(desired, desired),
        location=str(survey.location) if survey.location else None,
    )


def _update(
    name: str, survey: Survey, desired: dict, record: SurveyRecord, live: dict, notes: list[Note]
) -> ResourceChange:
    resource = address(SURVEY, name)
    where = str(survey.location) if survey.location else None
    ignored = survey.lifecycle.ignore_changes
    merged = merge_survey(live, desired, record.last_applied, ignored)
    # The live body is normalised once, for both the diff and the drift: normalising is most
    # of the CPU of planning an unchanged survey.
    live_normalised = normalise_survey(live)
    changes = diff_normalised(live_normalised, normalise_survey(merged))
    action = classify(changes)
    change = ResourceChange(
        SURVEY,
        name,
        action,
        prevent_destroy=survey.lifecycle.prevent_destroy,
        remote_id=record.ps_survey_id,
        last_applied=_applied(desired, record.last_applied, ignored),
        changes=changes,
        fingerprint=live_fingerprint(live),
        spend=checks.survey_spend(live, merged),
        location=where,
        drift=[
            c
            for c in _drift(live_normalised, record.last_applied, desired, changes)
            if c.field not in ignored
        ],
    )
    unmet = checks.unmet_membership(resource, desired, live, record.last_applied, where)
    if unmet is not None:
        notes.append(unmet)
        # The state must not say the manifest's membership was applied: with the old one kept,
        # every plan reads the survey again and repeats the warning while the two differ.
        change.last_applied = _with_membership_of(change.last_applied, record.last_applied)
    if action != "no-op":
        if checks.is_closed(live):
            # The service refuses every update of a closed survey (1010): never plan one.
            member = survey.member is not None
            notes.append(
                checks.closed_survey(resource, record.ps_survey_id, changes, where, member)
            )
            if member:
                return _left_closed(change, live, record)
            # A Survey manifest: the update stays in the plan, so the reviewer sees what the
            # manifest changes, under an error that makes apply refuse before any write.
        else:
            notes.extend(
                checks.frozen_fields(resource, live.get("ps_survey_status"), changes, survey.where)
            )
        change.body = merged
        if action == "quota-update":
            change.quota_updates = quota_update_bodies(merged, changes)
        touched = {c.field for c in changes}
        if touched & {"quotas", "completes_required"}:
            notes.extend(checks.quota_balance(resource, merged, survey.where("quotas")))
        if touched & {"quotas", "completes_required", "offer_price", "qbp"}:
            notes.extend(checks.priced_apart(resource, merged, survey.where("qbp")))
    return change


def _applied(desired: dict, last_applied: dict | None, ignored: tuple[str, ...]) -> dict:
    """What the state records as applied once this plan is: the manifest's body, but for each
    ignored field the value applied before (none when there was none). The manifest's value of
    an ignored field is never sent; recorded, it would pass for applied, and once the field is
    no longer ignored the survey would be taken for up to date and the change never made."""
    if not ignored:
        return desired
    before = last_applied or {}
    body = {k: v for k, v in desired.items() if k not in ignored}
    body.update({k: before[k] for k in ignored if k in before})
    return body


def _with_membership_of(desired: dict, last_applied: dict | None) -> dict:
    """`desired` with the group references `last_applied` holds (none when it holds none)."""
    body = {k: v for k, v in desired.items() if k not in GROUP_MEMBERSHIP_FIELDS}
    body.update({k: v for k, v in (last_applied or {}).items() if k in GROUP_MEMBERSHIP_FIELDS})
    return body


def _left_closed(change: ResourceChange, live: dict, record: SurveyRecord) -> ResourceChange:
    """A closed wave of a program whose program now says otherwise: left as it is. Nothing is
    sent, nothing is counted as a change, and the state keeps the body last applied (what the
    survey is), so each plan reads it again and repeats the note while the program differs."""
    return dataclasses.replace(
        change,
        action="no-op",
        changes=[],
        last_applied=record.last_applied,
        spend=checks.survey_spend(live, live),
    )


def _drift(
    live_normalised: dict, last_applied: dict | None, desired: dict, differences: list
) -> list[FieldChange]:
    """Managed fields changed outside surveyctl since the last apply."""
    if last_applied == desired and not differences:
        # The manifest is what was last applied and live matches the update made of it, which
        # keeps the group membership as it is live (merge rule 6): only the membership can
        # have drifted, and only it is compared. The common case of a no-op plan, spared
        # normalising the whole last-applied body.
        membership = {k: v for k, v in last_applied.items() if k in GROUP_MEMBERSHIP_FIELDS}
        return drift_normalised(live_normalised, membership)
    return drift_normalised(live_normalised, last_applied)


# -- writes -----------------------------------------------------------------------------------


def _create(resource: ResourceChange, client, store: StateBackend, failed) -> str:
    response = journaled_create(resource, store, resource.body, client.create_survey)
    record = written_record(response, resource)
    store.resolve_create(resource.address, record)
    return f"created ps_survey_id {record.ps_survey_id}"


def _update_write(resource: ResourceChange, client, store: StateBackend, failed) -> str:
    response = client.update_survey(resource.remote_id, resource.body)
    store.record(resource.address, written_record(response, resource))
    return f"updated ps_survey_id {resource.remote_id}"


def _update_quotas(resource: ResourceChange, client, store: StateBackend, failed) -> str:
    done: list[str] = []
    for quota_id, body in resource.quota_updates.items():
        try:
            client.update_quota(resource.remote_id, quota_id, body)
        except SurveyctlError as exc:
            # The quotas already updated are recorded: left out, the next plan would show
            # this apply's own writes as drift, "changed outside surveyctl".
            made = bool(done) and _record_quotas(resource, store, done)
            recorded = "; they are recorded in the state" if made else ""
            raise SurveyctlError(
                f"{exc} (quotas already updated: {', '.join(done) or 'none'}{recorded})"
            ) from exc
        done.append(quota_id)
    _record_quotas(resource, store, None)
    return f"updated quotas {', '.join(done)} of ps_survey_id {resource.remote_id}"


def _record_quotas(resource: ResourceChange, store: StateBackend, done: list[str] | None) -> bool:
    """Records the quota PUTs made: all of them (`done` None), the manifest's body is then last
    applied; or only the quotas `done`, whose fields the body last applied then takes from the
    manifest. Quota PUTs keep every ps_quota_id, so the recorded ids stay as they are; they move
    the survey's mod_on to a value not seen, so the next plan reads the survey. False when
    nothing was recorded (only some quotas done, and no body last applied to amend)."""
    previous = store.current().resources.get(resource.address)
    if not isinstance(previous, SurveyRecord):
        previous = SurveyRecord(int(resource.remote_id))
    applied = resource.last_applied
    if done is not None:
        if previous.last_applied is None:
            return False  # nothing recorded to amend: the next plan reads the survey anyway
        applied = _with_quotas_of(previous.last_applied, resource.last_applied or {}, done)
    store.record(
        resource.address,
        dataclasses.replace(
            previous, last_applied=applied, prevent_destroy=resource.prevent_destroy, mod_on=None
        ),
    )
    return True


def _with_quotas_of(last_applied: dict, desired: dict, done: list[str]) -> dict:
    """`last_applied` whose quotas `done` have the fields a quota PUT sets as `desired` has them."""
    wanted = {str(q.get("buyer_quota_id")): q for q in desired.get("quotas") or []}
    quotas = []
    for quota in last_applied.get("quotas") or []:
        sent = wanted.get(str(quota.get("buyer_quota_id")))
        if sent is not None and str(quota.get("buyer_quota_id")) in done:
            quota = {k: v for k, v in quota.items() if k not in PER_QUOTA_FIELDS}
            quota.update({k: v for k, v in sent.items() if k in PER_QUOTA_FIELDS})
        quotas.append(quota)
    return dict(last_applied, quotas=quotas)


def written_record(response: dict, resource: ResourceChange) -> SurveyRecord:
    """The record of a survey just created or overwritten: the answer is the survey as the
    write left it, the body last applied, so its `mod_on` is kept (see survey_listing)."""
    record = survey_record(response, resource.last_applied, resource.prevent_destroy)
    return dataclasses.replace(record, mod_on=survey_listing.version(response))


def _delete(resource: ResourceChange, client, store: StateBackend, failed) -> str:
    if base.delete_gone(resource, store, lambda: client.delete_survey(resource.remote_id)):
        return f"deleted ps_survey_id {resource.remote_id} (already gone from the marketplace)"
    return f"deleted ps_survey_id {resource.remote_id}"


SurveyKind.writers = {
    "create": _create,
    "update": _update_write,
    "quota-update": _update_quotas,
    "delete": _delete,
}

KIND = base.register(SurveyKind())
