"""What every resource kind provides, the registry of kinds, and the helpers they share.

A kind (Survey, ExclusionGroup, ...) is one module that subclasses `Kind` and registers an
instance with `register`, as octoDNS's record types do: the planner, the applier, refresh,
recovery, tamper checks, targets, progress and the renderers loop over the registry and ask
the kind, so adding a kind touches no module of theirs. An address of a kind nobody
registered is an error everywhere (`get` raises), never treated as some other kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.reconcile.diff import FieldChange
from surveyctl.reconcile.live import LiveResult
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.normalise import is_empty
from surveyctl.reconcile.plan import Note, Plan, ResourceChange, Spend
from surveyctl.resources import address as address_of
from surveyctl.resources import split_address
from surveyctl.state import (
    JournalEntry,
    Record,
    State,
    StateBackend,
    register_record,
    unregister_record,
)

if TYPE_CHECKING:
    from surveyctl.model import DesiredState
    from surveyctl.reconcile.identity import Identity, Rule, Twin
    from surveyctl.reconcile.lost import Recovery

# Answers that say for certain a create was not made (the request was refused as it stood).
DEFINITE_REFUSALS = frozenset({400, 401, 403, 404, 409, 422, 429, 503})

# (resource, client, store, addresses that failed earlier in this apply) -> outcome message
Writer = Callable[[ResourceChange, Marketplace, StateBackend, set[str]], str]


class Skipped(Exception):
    """A write not attempted, because something it depends on failed."""


class Kind:
    """One resource kind: everything the core knows about it. Subclasses set the class
    attributes and override what differs from the defaults below."""

    name: ClassVar[str]  # the address prefix and manifest kind: "Survey"
    noun: ClassVar[str]  # how messages name one: "survey"
    id_label: ClassVar[str]  # how a plan names its remote id: "ps_survey_id 10001"
    record_type: ClassVar[type]  # its state record (see surveyctl.state.records)
    # Place in the apply order: creates and updates run by ascending order, deletes by
    # descending (a group names surveys, so it is written after them and deleted before).
    order: ClassVar[int]
    # The Marketplace method `read` calls with the record's remote_id (progress reports it);
    # None when the kind reads otherwise.
    read_method: ClassVar[str | None] = None
    # The writes of each planned action: "create", "update", "delete", ...
    writers: ClassVar[dict[str, Writer]] = {}

    # -- manifests -----------------------------------------------------------------------

    def manifests(self, desired: DesiredState) -> dict[str, Any]:
        """name -> the manifest object of this kind in the desired state (the mapping itself,
        so that a cut-down desired state can be filled through it)."""
        return desired.others.setdefault(self.name, {})

    def depends_on(self, manifest: Any) -> list[str]:
        """Addresses planned with it when it is a --target (a group's surveys)."""
        return []

    # -- reading and planning ------------------------------------------------------------

    def read(self, client: Marketplace, record: Any) -> dict:
        """The live body of the managed resource `record` (one GET): `read_method` called with
        the record's remote_id, the very call progress watches for, so the two cannot part."""
        if self.read_method is None:
            raise NotImplementedError(f"{self.name} names no read_method and reads no other way")
        return getattr(client, self.read_method)(record.remote_id)

    def fingerprint(self, live: dict) -> str:
        """What a saved plan depends on of the live body."""
        raise NotImplementedError

    def versions(self, client: Marketplace, records: dict[str, Any]) -> dict[str, Any] | None:
        """address -> the version of each of `records` that the service lists (one listing for
        all of them), to compare with `unchanged`; None when the kind has no such listing, or
        it cannot spare a read: each resource is then read."""
        return None

    def unchanged(self, record: Any, version: Any, manifest: Any) -> bool:
        """Whether the resource needs no read: listed at the version surveyctl last wrote or
        saw, with a manifest that is what was last applied. The kind's `plan` then gets a
        LiveResult with `unchanged` set and no body."""
        return False

    def stale_listings(
        self,
        client: Marketplace,
        state: State,
        read: Callable[[str], LiveResult],
        parallelism: int,
    ) -> set[str]:
        """Addresses of other kinds' resources to read fresh whatever their listed version
        says: a write to one of this kind's resources may change them without moving that
        version. `read(address)` is the live result of one of this kind's managed resources
        (its one read of the plan). Asked once a plan, only when a listing would spare a read."""
        return set()

    def read_beside(self, state: State, covered: set[str]) -> set[str]:
        """Addresses of this kind's managed resources that a plan of some manifests (PATHS),
        which reads only the resources `covered` by them, reads all the same: those a covered
        resource's plan relies on the read of. None by default."""
        return set()

    def state_body(self, record: Any) -> dict | None:
        """The body to plan against without reading (`plan --refresh=false`); None: the kind
        is read even then."""
        return None

    def plan(
        self, name: str, manifest: Any, state: State, result: LiveResult | None, plan: Plan
    ) -> ResourceChange | None:
        """The change for one manifest (None when it cannot be planned; a note says why)."""
        raise NotImplementedError

    def after_plan(
        self, client: Marketplace, changes: list[ResourceChange], plan: Plan, parallelism: int
    ) -> None:
        """Extra reads once every resource of the kind is planned (notes only)."""

    def spend(self, before: dict | None, after: dict | None) -> Spend | None:
        """The estimated spend of a body before and after (None: the kind costs nothing)."""
        return None

    def removal_notes(self, address: str, live: dict | None) -> list[Note]:
        """What the reviewer should know about deleting it."""
        return []

    def refresh(self, record: Any, live: dict) -> tuple[list[FieldChange], dict | None, Any]:
        """(drift, last-applied body with the live values, the refreshed record)."""
        raise NotImplementedError

    def compared(self, body: dict) -> dict:
        """`body` (live, or a body last applied) in the form plans compare: the kind's
        normalised form, whose fields and items are where a drift's `parts` point."""
        return body

    def settled(self, record: Any, last_applied: dict) -> Any:
        """`record` once the plan found the live resource already as `last_applied` says
        (no change to make) while the state remembered another body."""
        return dataclasses.replace(record, last_applied=last_applied)

    def adopt_hint(self, name: str) -> str:
        """How a person adopts a resource that a lost create may have made."""
        return f"adopt it with `surveyctl import` as {self.name}/{name}"

    def recover(
        self,
        client: Marketplace,
        state: State,
        lost: dict[str, Any],
        recovery: Recovery,
        now: datetime,
    ) -> None:
        """Resolves lost creates (address -> manifest); by default they stay blocked."""

    # -- identity (surveyctl.reconcile.identity) -----------------------------------------

    def find_twins(
        self,
        client: Any,
        wanted: dict[str, Any],
        state: State,
        rule: Rule,
        found: Identity,
        parallelism: int,
    ) -> None:
        """Looks on the service for the resource of each manifest of `wanted` (address ->
        manifest, none of them in state) by the kind's identity rule, into `found`. A kind
        without a rule finds nothing: its creates go ahead as planned."""

    def twin_record(self, client: Any, twin: Twin, manifest: Any) -> tuple[Record, dict]:
        """The state record that adopts `twin` for `manifest` (`--adopt`, `state rebuild`):
        its ids and no last-applied body; with the live body it was made from (the body
        `read` would return, or `twin.body` when the search read it whole), which the plan of
        the same run plans it from instead of reading it again."""
        raise NotImplementedError


_REGISTRY: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Adds `kind` to the registry (its record type with it); returns it."""
    register_record(kind.record_type)
    _REGISTRY[kind.name] = kind
    return kind


def get(name: str) -> Kind:
    """The kind called `name`; SurveyctlError when no module registered it."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SurveyctlError(
            f"unknown resource kind {name!r}; known: {', '.join(_REGISTRY)}"
        ) from None


def of_address(address: str) -> Kind:
    """The kind of an address (`Survey/x` -> the survey kind)."""
    return get(split_address(address)[0])


def in_order() -> list[Kind]:
    """Every registered kind in apply order (creates and updates)."""
    return sorted(_REGISTRY.values(), key=lambda kind: kind.order)


def described(desired: DesiredState) -> dict[str, Any]:
    """address -> manifest of every resource `desired` describes, kind by kind in apply order."""
    return {
        address_of(kind.name, name): manifest
        for kind in in_order()
        for name, manifest in kind.manifests(desired).items()
    }


def unregister(name: str) -> None:
    """Removes a kind and its record type (for a kind defined for one test)."""
    _REGISTRY.pop(name, None)
    unregister_record(name)


# -- shared by the kinds ---------------------------------------------------------------------


def record_of(kind: Kind, state: State, address: str) -> Any:
    """The state record of `address` when it is one of `kind`'s, else None."""
    record = state.resources.get(address)
    return record if isinstance(record, kind.record_type) else None


def blocked_create(
    kind: Kind, state: State, address: str, record: Record | None, plan: Plan, where: str | None
) -> bool:
    """Whether an unresolved earlier create of `address` blocks planning it; the plan then
    carries an error saying how to resolve it (unless recovery already explained it)."""
    journal = state.pending_create(address)
    if journal is None or record is not None:
        return False
    if not any(note.address == address for note in plan.notes):
        plan.notes.append(
            Note("error", address, unresolved_create_message(kind, address, journal), where)
        )
    return True


def unresolved_create_message(kind: Kind, address: str, journal: JournalEntry) -> str:
    """How to resolve a create whose answer was never recorded (a crash, a lost answer)."""
    name = split_address(address)[1]
    return (
        f"a create of {address} was sent at {journal.started_at} and its answer was never "
        f"recorded, so it may exist in the marketplace; if it does, {kind.adopt_hint(name)}, "
        f"otherwise forget the attempt with `surveyctl state rm {address}`"
    )


def unreadable(kind: Kind, address: str, result: LiveResult | None, where: str | None) -> Note:
    """The note of a managed resource whose live body could not be read."""
    return Note(
        "warning",  # not an error: apply still makes every change it could read
        address,
        f"cannot read the live {kind.noun}: {result.error if result else 'not fetched'}; "
        "it is left out of this plan and apply does not attempt it (run it again)",
        where,
    )


def journaled_create(
    resource: ResourceChange, store: StateBackend, body: dict, send: Callable[[dict], Any]
) -> Any:
    """POSTs `body` with `send(body)`, journaled in state first. A definite refusal clears the
    journal entry; a lost answer leaves it, so nobody creates the resource a second time."""
    store.journal_create(resource.address, body)
    try:
        return send(body)
    except ApiError as exc:
        if exc.status in DEFINITE_REFUSALS:
            store.resolve_create(resource.address, None)
            raise
        raise _ambiguous(resource, exc) from exc
    except SurveyctlError as exc:
        raise _ambiguous(resource, exc) from exc


def _ambiguous(resource: ResourceChange, exc: SurveyctlError) -> SurveyctlError:
    return SurveyctlError(
        f"{exc}; the create may or may not have been made, so {resource.address} stays "
        "journaled: run `surveyctl plan` for how to resolve it"
    )


def with_live_values(
    last_applied: dict | None, live_body: dict, differences: list[FieldChange]
) -> dict | None:
    """`last_applied` with each drifted top-level field set to its live value (left out when
    the live value is unset): what a refresh records."""
    if last_applied is None or not differences:
        return last_applied
    applied = dict(last_applied)
    for name in {change.parts[0] for change in differences}:
        value = live_body.get(name)
        if is_empty(value):
            applied.pop(name, None)
        else:
            applied[name] = value
    return applied


def take_unrecorded(kind: Kind, change: ResourceChange, live: dict, plan: Plan) -> None:
    """Takes out of `change.drift` each field whose live value is the one apply records
    (`change.last_applied`, the manifest's body): such a field was written by an apply stopped
    before its state write (the quotas of a quota update are PUT one by one, and a kill between
    them leaves some made), or changed by hand to what the manifest asks; nobody's change to
    undo or accept. A note names them and the plan lists the resource in `unrecorded`; apply
    records them with the rest. A field live holds at another value stays drift, as does
    every field when apply records nothing new (`last_applied` None, or the state's)."""
    if not change.drift or change.last_applied is None:
        return
    live_body, recorded = kind.compared(live), kind.compared(change.last_applied)
    # A field the body recorded no longer holds is one the manifest asks to reset: unset.
    made = [
        c
        for c in change.drift
        if c.parts and _value_at(live_body, c.parts) == _value_at(recorded, c.parts)
    ]
    if not made:
        return
    change.drift = [c for c in change.drift if c not in made]
    one = len(made) == 1
    plan.notes.append(
        Note(
            "note",
            change.address,
            f"{', '.join(c.path for c in made)} {'is' if one else 'are'} already as the manifest "
            "asks while the state records another value as last applied: written by an apply "
            "that could not record it (stopped before its state write, or its answer lost), or "
            f"changed so by hand; not drift: apply records {'it' if one else 'them'}, with no "
            f"write of {'its' if one else 'their'} own",
            change.location,
        )
    )
    plan.unrecorded.append(change.address)


def _value_at(body: Any, parts: tuple) -> Any:
    """The value at `parts` of a compared body (None when it holds none there)."""
    for part in parts:
        if not isinstance(body, dict) or part not in body:
            return None
        body = body[part]
    return body


def delete_gone(resource: ResourceChange, store: StateBackend, send: Callable[[], Any]) -> bool:
    """Sends a planned DELETE with `send()` and forgets the resource; True when the service
    answered 404. The plan read the resource moments before, so a 404 means it is gone: most
    often because the client retried a DELETE whose first answer was lost (a reset, a 502)
    after the service had made it. Either way what was asked is done, and reported as failed
    the state would keep a resource that no longer exists."""
    gone = False
    try:
        send()
    except ApiError as exc:
        if exc.status != 404:
            raise
        gone = True
    store.forget(resource.address)
    return gone
