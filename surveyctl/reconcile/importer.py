"""Import: adopt a live survey or exclusion group into a manifest and the state.

The manifest is the live resource reduced to what a person would write: the live body
conformed to the update contract (see `conform`: fields the spec does not list dropped, numbers
written as strings read as numbers, empty strings and nulls left out), no settings at their
defaults (false, empty, qlc and qbp switched off, and what the service fills in itself:
`click_balancing` 0, `incl_excl` 0, `billing_id` "PS" + the survey id), and no group
membership (that belongs to ExclusionGroup manifests). The manifest is checked by the manifest
rules before anything is recorded, so what import writes always passes `surveyctl validate`.

An adopted resource is recorded as if surveyctl had just applied that manifest: its
last-applied body is the body the planner reads from the manifest. So a plan of the unchanged
manifest shows neither changes nor drift, a field later removed from the manifest is reset,
and a managed field changed in the marketplace is reported as drift.

Recording needs the manifest: a resource in state that no manifest describes is what
`plan --destroy` deletes. Without a manifest written by the import, a resource is recorded
only when its manifest exists already: one of that name in the project's manifests (then it is
recorded as `--adopt` records a twin, `as_described`), or a create left unresolved in the
journal (its answer was lost), which importing the survey it made resolves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from surveyctl.errors import SurveyctlError
from surveyctl.files import os_error_message, write_atomically
from surveyctl.manifests import build, rules, schema
from surveyctl.manifests.diagnostics import ERROR, Diagnostics
from surveyctl.manifests.layout import canonical
from surveyctl.manifests.load import load_text
from surveyctl.reconcile.conform import SURVEY_UPDATE_SCHEMA, conform, schema_of
from surveyctl.reconcile.kinds import survey_listing
from surveyctl.reconcile.kinds.group import member_ids
from surveyctl.reconcile.kinds.survey_live import survey_record
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.merge import GROUP_MEMBERSHIP_FIELDS
from surveyctl.reconcile.normalise import group_update_body, update_body
from surveyctl.resources import EXCLUSION_GROUP, SURVEY, address, check_name, member_of, name_of
from surveyctl.state import GroupRecord, Record, State, StateBackend, SurveyRecord

# Values the service gives a survey created without them (the sandbox and the documented
# create response): a manifest that repeated them would claim settings nobody chose.
SERVICE_DEFAULTS: dict[str, Any] = {"click_balancing": 0, "incl_excl": 0}


class ImportRefused(SurveyctlError):
    """A live resource that cannot be adopted as it stands."""


@dataclass(frozen=True)
class Adoption:
    """A live resource read and turned into a manifest, with the record that adopts it."""

    address: str
    source: str  # "survey 10001", for messages and the manifest's header
    manifest: dict
    record: Record
    # The manifest's text when it was already laid out (to check it): laying it out in fmt's
    # layout is most of an import's time, 18 ms a survey of 2 quotas.
    laid_out: str | None = None

    @property
    def text(self) -> str:
        """The manifest as YAML, headed by where it came from."""
        if self.laid_out is not None:
            return self.laid_out
        return manifest_yaml(self.manifest, self.source)


def adopt_survey(
    client: Marketplace, state: State, survey_id: int, name: str, described: bool = False
) -> Adoption:
    """Reads live survey `survey_id` and makes its manifest `Survey/<name>` (nothing recorded);
    `described`: a manifest of that name exists (see `_free_address`)."""
    target = _free_address(state, SURVEY, name, described)
    for other, record in state.resources.items():
        if isinstance(record, SurveyRecord) and record.ps_survey_id == survey_id:
            raise ImportRefused(f"survey {survey_id} is already managed as {other}")
    live = client.get_survey(survey_id)
    if described:  # no manifest to write: the live body only says what it is
        return Adoption(
            target, f"survey {survey_id}", _live_manifest(SURVEY, name, live),
            survey_record(live, None, prevent_destroy=False),
        )  # fmt: skip
    return survey_adoption(live, target)


def survey_adoption(live: dict, target: str) -> Adoption:
    """The adoption of a live survey body under address `target` (already checked free)."""
    survey_id = int(live["ps_survey_id"])
    source = f"survey {survey_id}"
    conformed = conform(live, schema_of(SURVEY_UPDATE_SCHEMA))
    spec = {
        key: value
        for key, value in update_body(conformed).items()
        if key not in GROUP_MEMBERSHIP_FIELDS and not _is_default(key, value, survey_id)
    }
    manifest = {"kind": SURVEY, "name": name_of(target), "spec": spec}
    text = manifest_yaml(manifest, source)
    body = manifest_body(manifest, source, text)
    # The manifest is the live survey as read, so the survey is as last applied: its `mod_on`
    # is kept, and the plans that follow read the survey list, not every adopted survey.
    record = survey_record(live, body, prevent_destroy=False)
    record = dataclasses.replace(record, mod_on=survey_listing.version(live))
    return Adoption(target, source, manifest, record, text)


def adopt_group(
    client: Marketplace, state: State, ref: str, name: str, described: bool = False
) -> Adoption:
    """Reads live exclusion group `ref` and makes its manifest `ExclusionGroup/<name>`.

    Its surveys must already be managed here, so that the manifest can name them."""
    target = _free_address(state, EXCLUSION_GROUP, name, described)
    for other, record in state.resources.items():
        if isinstance(record, GroupRecord) and record.buyer_surveygroup_ref == ref:
            raise ImportRefused(f"exclusion group {ref} is already managed as {other}")
    live = group_update_body(client.get_group(ref))
    if described:  # its manifest names the surveys; they need not be managed yet
        ids = member_ids(live)
        return Adoption(
            target, f"exclusion group {ref}", _live_manifest(EXCLUSION_GROUP, name, live),
            GroupRecord(ref, ids, None),
        )  # fmt: skip
    names = {
        record.ps_survey_id: name_of(survey_address)
        for survey_address, record in state.resources.items()
        if isinstance(record, SurveyRecord)
    }
    ids = member_ids(live)
    unmanaged = [i for i in ids if i not in names]
    if unmanaged:
        raise ImportRefused(
            f"group {ref} holds survey(s) {', '.join(map(str, unmanaged))} that surveyctl does "
            f"not manage in this environment; import them first with "
            f"`surveyctl import {unmanaged[0]} --name NAME --out FILE`"
        )
    spec: dict[str, Any] = {
        "buyer_surveygroup_ref": live["buyer_surveygroup_ref"],
        "name": live.get("name", ""),
    }
    if live.get("exclusion_period") is not None:
        spec["exclusion_period"] = int(live["exclusion_period"])
    spec["surveys"] = [names[i] for i in ids]
    manifest = {"kind": EXCLUSION_GROUP, "name": name, "spec": spec}
    # What apply records for a group: its API body, surveys named by ps_survey_id.
    applied = {key: value for key, value in spec.items() if key != "surveys"}
    applied["surveys_in_group"] = ids
    source = f"exclusion group {ref}"
    return Adoption(target, source, manifest, GroupRecord(ref, ids, applied))


def _live_manifest(kind: str, name: str, live: dict) -> dict:
    return {"kind": kind, "name": name, "spec": live}


def as_described(adoption: Adoption, prevent_destroy: bool) -> Adoption:
    """The adoption of a resource whose manifest exists already: recorded without a
    last-applied body, as `--adopt` records a twin, so that the next plan compares that
    manifest with the live resource and shows what differs as updates (a last-applied body
    made from the live resource would have the plan reset every field the manifest leaves
    out)."""
    record = dataclasses.replace(
        adoption.record, last_applied=None, prevent_destroy=prevent_destroy
    )
    return dataclasses.replace(adoption, record=record)


def record_adoption(store: StateBackend, adoption: Adoption) -> None:
    """Records the adopted resource (and resolves an unresolved create of its address)."""
    store.resolve_create(adoption.address, adoption.record)


def save_adoption(store: StateBackend, adoption: Adoption, path: Path) -> None:
    """Writes the manifest to `path`, then records the resource; the file is removed again
    when the state was not written. The manifest comes first because a resource recorded
    without one is what `plan --destroy` deletes. The manifest is on disk (durable) before
    the state, itself durable, records the resource: after a power cut the state never
    records a resource whose manifest came back empty or missing. The manifest's folder is
    made here, when missing: `import --all-unmanaged` that adopts nothing makes no folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, adoption.text, durable=True)
    except OSError as exc:  # a full disk, a folder made read-only since the check
        raise ImportRefused(
            f"{os_error_message(exc, path, 'write the manifest')}; {adoption.address} was not "
            "recorded"
        ) from exc
    try:
        record_adoption(store, adoption)
    except BaseException:
        # A Ctrl-C can arrive once the record is stored, before the write returns: the
        # stored state decides, read afresh, not the exception.
        if not _recorded(store, adoption):
            path.unlink(missing_ok=True)
        raise


def _recorded(store: StateBackend, adoption: Adoption) -> bool:
    """Whether the stored state records `adoption`'s address, which was free when the import
    began under the lock (False when the state cannot be read)."""
    try:
        return adoption.address in store.load(verify=False).resources
    except SurveyctlError:
        return False


def manifest_yaml(manifest: dict, source: str) -> str:
    """The manifest as YAML in the layout `surveyctl fmt` writes, so that `fmt --check` (and
    the pre-commit hook) passes on an imported file."""
    header = f"# Imported by surveyctl from {source}.\n"
    text = header + yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100)
    return canonical(text, f"<{source}>")


def manifest_body(manifest: dict, source: str, text: str | None = None) -> dict:
    """The body the planner will read from `manifest` once written (`text`: its YAML, when
    already made by `manifest_yaml`); ImportRefused when the manifest would not pass
    `surveyctl validate` (then nothing may be written or recorded)."""
    diagnostics = Diagnostics()
    if text is None:
        text = manifest_yaml(manifest, source)
    documents = load_text(text, f"<{source}>", diagnostics)
    survey = None
    for document in documents:
        if schema.check_document(document, diagnostics):
            survey = build.survey(document, diagnostics)
            rules.check_survey(survey, document.data["spec"], diagnostics)
    errors = [d for d in diagnostics if d.severity == ERROR]
    if errors or survey is None:
        problem = errors[0].summary if errors else "it holds no survey"
        raise ImportRefused(
            f"{source} cannot be imported: its manifest would not pass `surveyctl validate`: "
            f"{problem}"
        )
    return survey.body()


def _free_address(state: State, kind: str, name: str, described: bool = False) -> str:
    """The address the import will record; refused when the name breaks the manifests' rule
    (its manifest would then fail `validate`; unless `described`: the manifests hold one of
    that name, a program member's included) or the address is already managed."""
    member = None if described else member_of(name)
    if member is not None:
        # A member is described by its program's manifest, which was not found: a plan run on
        # paths of its own suggests this import, and the program is in those paths.
        raise ImportRefused(
            f"--name {name!r} is a member of program {member.program!r}, whose manifest is not "
            "among the manifests read; name it with --manifests FILE"
        )
    wanted = address(kind, name if described else check_name(name, "--name"))
    if wanted in state.resources:
        raise ImportRefused(
            f"{wanted} is already managed in this environment; "
            f"`surveyctl state rm {wanted}` first to re-import it"
        )
    return wanted


def _is_default(key: str, value: Any, survey_id: int) -> bool:
    """A setting nobody chose: the service's own default, or an unset value."""
    if key in SERVICE_DEFAULTS and value == SERVICE_DEFAULTS[key]:
        return True
    if key == "billing_id" and value == f"PS{survey_id}":
        return True  # assigned by the service when a create names none (public facts)
    return _is_unset(value)


def _is_unset(value: Any) -> bool:
    """Null, empty, false, or an object of nothing but such values (qlc/qbp switched off)."""
    if value is None or value is False or value == "" or value == [] or value == {}:
        return True
    return isinstance(value, dict) and all(_is_unset(v) for v in value.values())
