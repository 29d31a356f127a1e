"""The Plan: pure data describing what `apply` will do, and nothing else.

A plan is made by the planner from manifests, state and live bodies; it is rendered for people
(text, markdown) and programs (json), saved with `plan --out FILE`, and executed by the
applier. It never holds the API key. Each planned resource carries a fingerprint of the live
body it was planned against, so a saved plan can refuse to apply after a change made elsewhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from surveyctl.money import total
from surveyctl.resources import address

FORMAT_VERSION = 1

# The warning of each managed resource no manifest names, left alone (a plan without --destroy,
# see `Plan.kept`). The text and markdown plans list it once for them all (render/notes.py),
# so it is spelt once, here, for the planner that writes it and the renderers that find it.
LEFT_ALONE = (
    "no longer in the manifests; left alone (plan with --destroy to delete it, or "
    "`surveyctl state rm` to stop managing it)"
)

Action = Literal["no-op", "create", "update", "quota-update", "delete"]
Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class FieldChange:
    """One field that differs: `path` like `quotas[male].required_count`, old and new values
    in normalised form (None meaning absent). `parts` is the path as keys, set by the diff
    (`surveyctl.reconcile.diff`) and not saved with a plan."""

    path: str
    old: Any = None
    new: Any = None
    parts: tuple = field(default=(), repr=False, compare=False)

    @property
    def field(self) -> str:
        """The top-level field the change is in: `quotas` for `quotas[male].required_count`."""
        return self.path.split(".")[0].split("[")[0]

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        return "changed"

    def to_dict(self) -> dict:
        return {"path": self.path, "old": self.old, "new": self.new}


@dataclass
class Note:
    """Something the reviewer should know; an `error` note blocks the apply."""

    severity: Severity
    address: str
    message: str
    location: str | None = None  # file:line of the manifest, when there is one


@dataclass
class Spend:
    """Estimated spend of one survey: offer_price x completes_required (US dollars)."""

    before: float | None = None
    after: float | None = None


@dataclass
class ResourceChange:
    """What happens to one resource. `body` is what a create or full update sends (a group's
    names the surveys created in the same apply by manifest name, turned into ids as it is
    sent); a quota update sends `quota_updates` instead."""

    kind: str  # SURVEY or EXCLUSION_GROUP
    name: str
    action: Action
    remote_id: int | str | None = None  # ps_survey_id, or buyer_surveygroup_ref
    body: dict | None = None  # POST/PUT body (group bodies name surveys by manifest name)
    last_applied: dict | None = None  # the manifest's body, recorded in state when done
    prevent_destroy: bool = False  # the manifest's lifecycle, recorded in state when done
    quota_updates: dict[str, dict] = field(default_factory=dict)  # buyer_quota_id -> PUT body
    changes: list[FieldChange] = field(default_factory=list)
    drift: list[FieldChange] = field(default_factory=list)  # managed fields changed elsewhere
    fingerprint: str | None = None  # of the live body planned against; None for creates
    spend: Spend | None = None
    location: str | None = None

    @property
    def address(self) -> str:
        return address(self.kind, self.name)

    @property
    def is_change(self) -> bool:
        return self.action != "no-op"


@dataclass
class Plan:
    """Every planned resource, in apply order, with notes and the state it was made from."""

    environment: str
    state_lineage: str
    state_serial: int
    resources: list[ResourceChange] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    destroy: bool = False
    # A refresh (`--refresh-only`): nothing is written to the marketplace; each resource's
    # `drift` is what changed outside surveyctl and `last_applied` the body a refresh records.
    refresh_only: bool = False
    # What keeps a plan without changes from being "no changes" (addresses, sorted): managed
    # resources left alone because no manifest names them, ones whose live body could not be
    # read, creates blocked by an unresolved earlier attempt, and managed resources that are
    # gone from the marketplace while no manifest names them.
    kept: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    # Of `unread`, the creates left out because whether each exists on the service already
    # could not be checked (surveyctl.reconcile.identity): no managed resource among them.
    unchecked: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    # Members of a SurveyProgram whose market or wave left its manifest: kept on the
    # marketplace and in state, never destroyed (the program's prevent_destroy), and not
    # pending: a plan with nothing else to do still says "no changes".
    retired: list[str] = field(default_factory=list)
    # Members of a SurveyProgram whose market or wave left its manifest, deleted (--destroy)
    # because the program's lifecycle as it is now lets them go (prevent_destroy: false), even
    # when the state recorded prevent_destroy at their last apply: the guard of deletes lets
    # these through. Made from the manifests at apply time, as every plan applied is.
    released: list[str] = field(default_factory=list)
    # Names of the codes the plan shows, per locale (see reconcile/labels.py); empty when
    # planned --offline or without a catalogue, and the renderers then show codes alone.
    labels: dict[str, dict[str, dict]] = field(default_factory=dict)
    # The managed surveys behind the ps_survey_ids an exclusion group's change shows (id as
    # text -> survey name), so that a reviewer reads names, not bare ids (reconcile/labels.py).
    survey_names: dict[str, str] = field(default_factory=dict)
    # What the whole plan warns of, not one resource (creates against an empty state): said on
    # stderr as the plan is made, and kept for the pull-request comment, which stderr misses.
    warnings: list[str] = field(default_factory=list)
    # The manifest files and folders the plan was made from, relative to the project root:
    # `apply PLANFILE` plans them again and applies only what that plan confirms.
    sources: list[str] = field(default_factory=list)
    # Creates whose answer was lost, resolved by this plan (`surveyctl.reconcile.recovery`):
    # address -> the state record apply writes for the resource the create made, or None when
    # it made nothing and the create is planned again.
    recovered: dict[str, dict | None] = field(default_factory=dict)
    # Of `recovered`, the resources found on the service for a create and adopted with --adopt
    # (`surveyctl.reconcile.identity`), not made by a lost create.
    adopted: list[str] = field(default_factory=list)
    # Resources whose live body already is what the manifest asks in fields the state records
    # otherwise: a write of an apply stopped before its state write (or the same change made
    # by hand), shown in a note rather than as drift. Apply records them (no write to the
    # marketplace for those fields), so the plan is not settled until it has.
    unrecorded: list[str] = field(default_factory=list)
    format_version: int = FORMAT_VERSION
    # The guard overrides the plan was made with (`--allow-destroy` -> "destroy"); a saved plan
    # is applied with exactly these (surveyctl.reconcile.guards).
    overrides: list[str] = field(default_factory=list)
    # Planned against the state alone (`plan --refresh=false`): no survey was read, so the plan
    # shows what the manifests change since the last apply, not what the service holds.
    from_state: bool = False
    # The `mod_on` of surveys read fresh and found as last applied (address -> mod_on): apply
    # records them, so later plans need not read those surveys (survey_listing). Not saved.
    seen: dict[str, int | None] = field(default_factory=dict)

    @property
    def errors(self) -> list[Note]:
        return [note for note in self.notes if note.severity == "error"]

    @property
    def has_changes(self) -> bool:
        return any(resource.is_change for resource in self.resources)

    @property
    def drifted(self) -> list[ResourceChange]:
        """Resources with a managed field changed outside surveyctl since the last apply."""
        return [r for r in self.resources if r.drift]

    @property
    def settled(self) -> bool:
        """Nothing is pending: no change, no error, nothing kept, unread, blocked, gone,
        drifted, recovered or unrecorded. Only then may a plan say "no changes"."""
        return not (
            self.has_changes
            or self.errors
            or self.kept
            or self.unread
            or self.blocked
            or self.gone
            or self.drifted
            or self.recovered
            or self.unrecorded
        )

    @property
    def refreshed(self) -> list[ResourceChange]:
        """What `apply --refresh-only` records: the resources of a refresh that drifted."""
        return [r for r in self.resources if self.refresh_only and r.drift]

    def counts(self) -> dict[str, int]:
        """Terraform's summary: creates, changes (full or quota updates), destroys."""
        actions = [resource.action for resource in self.resources]
        return {
            "add": actions.count("create"),
            "change": actions.count("update") + actions.count("quota-update"),
            "destroy": actions.count("delete"),
        }

    def spend_totals(self) -> Spend:
        """Total estimated spend of the surveys before and after the plan: every managed
        survey whose live body was read, unchanged and kept ones included."""
        spends = [r.spend for r in self.resources if r.spend is not None]
        return Spend(before=total(s.before for s in spends), after=total(s.after for s in spends))

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("seen", None)  # what this run read; a saved plan's apply reads afresh
        for resource, item in zip(self.resources, data["resources"], strict=True):
            item["changes"] = [change.to_dict() for change in resource.changes]
            item["drift"] = [change.to_dict() for change in resource.drift]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Plan:
        resources = [
            ResourceChange(
                **{
                    **item,
                    "changes": [_field_change(c) for c in item.get("changes", [])],
                    "drift": [_field_change(c) for c in item.get("drift", [])],
                    "spend": Spend(**item["spend"]) if item.get("spend") else None,
                }
            )
            for item in data.get("resources", [])
        ]
        notes = [Note(**note) for note in data.get("notes", [])]
        rest = {k: v for k, v in data.items() if k not in ("resources", "notes")}
        return cls(**rest, resources=resources, notes=notes)


def _field_change(data: dict) -> FieldChange:
    return FieldChange(data["path"], data.get("old"), data.get("new"))
