"""The plan workflow: the manifests read, expanded and checked, then planned against the state
and the live resources (`plan_run`); what `surveyctl plan` does, and the first half of every
apply. It writes nothing.

In order: the state loaded and its placement checked, the reads the state calls for started
while the manifests load, a `--target` cut, the creates looked for on the service
(`surveyctl.reconcile.identity`), the plan made and settled, then the warnings of an empty
state, the labels, the guards' notes and the plan's sources. With `refresh_only` the live
resources are compared with the state instead of the manifests (`surveyctl.reconcile.refresh`).
"""

from __future__ import annotations

import os
from pathlib import Path

from surveyctl.config import Config
from surveyctl.errors import ConfigError, SurveyctlError
from surveyctl.manifests import Diagnostic, load_manifests
from surveyctl.manifests.diagnostics import ERROR, WARNING
from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState
from surveyctl.reconcile import identity, kinds, targets
from surveyctl.reconcile.adoption import adopted_state, settle
from surveyctl.reconcile.guards import add_guard_notes
from surveyctl.reconcile.labels import plan_labels, survey_names
from surveyctl.reconcile.listed_once import listed_once
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Note, Plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.reconcile.progress import reporting_reads
from surveyctl.reconcile.reads import LiveReads
from surveyctl.reconcile.refresh import Refresh, make_refresh
from surveyctl.reconcile.run import RunOptions, Workspace
from surveyctl.reconcile.twins import creates_due, find_twins
from surveyctl.reconcile.wave_renames import note_wave_renames
from surveyctl.redacting import holds_secret
from surveyctl.state import State
from surveyctl.state.placement import check_placement, state_warnings
from surveyctl.variables import create_settle_seconds


class ManifestErrors(SurveyctlError):
    """The manifests have errors, so nothing is planned; `diagnostics` lists them."""

    def __init__(self, diagnostics: list[Diagnostic], summary: str = ""):
        self.diagnostics = diagnostics
        super().__init__(
            summary
            or f"{len(diagnostics)} error(s) in the manifests; nothing was planned "
            "(`surveyctl validate` shows them all)"
        )


def check_destroy_scope(config: Config, targets: tuple[Path, ...], destroy: bool) -> None:
    """--destroy deletes what the manifests no longer describe, so it reads all of them: with
    PATHS that are not the `manifests:` of surveyctl.yaml, it would delete what the others
    describe (and a saved plan made so, swapped for a reviewed one, would apply it)."""
    if destroy and reads_some_manifests(config, targets):
        listed = ", ".join(config.manifests)
        raise ConfigError(
            f"--destroy deletes what the manifests no longer describe, so it plans all of them: "
            f"give no PATHS (the manifests: of surveyctl.yaml, {listed}), or --target the "
            "resource to destroy"
        )


def reads_some_manifests(config: Config, targets: tuple[Path, ...]) -> bool:
    """Whether PATHS are some of the project's manifests rather than all of them: given, with
    `manifests:` set in surveyctl.yaml, and not naming those entries."""
    if not targets or not config.manifests:
        return False  # without `manifests:`, the PATHS given are the whole project
    given = {Path(os.path.abspath(path)) for path in targets}
    configured = {Path(os.path.abspath(config.root / entry)) for entry in config.manifests}
    return given != configured


def desired_state(workspace: Workspace, options: RunOptions) -> DesiredState:
    """The manifests of `options.targets`, expanded and checked; ManifestErrors when they
    have errors."""
    return checked_manifests(workspace, options)[0]


def checked_manifests(
    workspace: Workspace, options: RunOptions
) -> tuple[DesiredState, list[Diagnostic]]:
    """The manifests of `options.targets`, expanded and checked, with the warnings `validate`
    would show of them; ManifestErrors when they have errors."""
    desired, diagnostics = load_manifests(
        workspace.config.manifest_paths(options.targets),
        workspace.catalog,
        workspace.manifest_cache,
        workspace.config.project,
    )
    if diagnostics.has_errors:
        raise ManifestErrors([d for d in diagnostics.sorted() if d.severity == ERROR])
    unresolved = [s for s in desired.surveys.values() if not s.resolved]
    if unresolved:  # only without a catalogue (--offline): names cannot become codes
        raise ManifestErrors(
            [
                Diagnostic(
                    ERROR,
                    f"Survey {survey.name!r} names attributes, which need the attribute "
                    "catalogue; plan it without --offline",
                    survey.location,
                )
                for survey in unresolved
            ],
            # Not "errors in the manifests": `validate --offline` calls them valid.
            f"{len(unresolved)} survey(s) name attributes, which --offline leaves unresolved; "
            "nothing was planned: plan without --offline",
        )
    return desired, [d for d in diagnostics.sorted() if d.severity == WARNING]


def manifest_warnings(desired: DesiredState, warnings: list[Diagnostic]) -> list[Note]:
    """The manifests' warnings as a plan's notes, each once, at its file:line: CI runs `plan`,
    not `validate`, and a live_url without the transaction id is worth seeing before the
    apply. A warning is said of the resource its file describes when the file describes one."""
    described: dict[str, list[str]] = {}
    for address, resource in kinds.described(desired).items():
        location = getattr(resource, "location", None)
        if location is not None:
            described.setdefault(location.file, []).append(address)
    notes: list[Note] = []
    for warning in warnings:
        where = warning.location
        named = described.get(where.file, []) if where is not None else []
        address = named[0] if len(set(named)) == 1 else ""
        note = Note("warning", address, warning.summary, str(where) if where else None)
        if note not in notes:
            notes.append(note)
    return notes


def _refuse_secrets(plan: Plan) -> None:
    """An error note on each change whose body holds the API key or the state database's
    password (a title a buyer pasted the key into): apply would send it to the marketplace,
    where suppliers read titles, and record it in state as the body last applied."""
    for resource in plan.resources:
        if not resource.is_change:
            continue
        sent = [resource.body, resource.quota_updates]
        # A create's or full update's body is mostly the body recorded: one JSON text, not two.
        if resource.last_applied != resource.body:
            sent.append(resource.last_applied)
        if holds_secret(sent):
            plan.notes.append(
                Note(
                    "error",
                    resource.address,
                    "the body to send holds the API key or the state database's password "
                    "(in the manifest, or in a field of the live survey that an update keeps); "
                    "take it out: apply would send it to the marketplace and record it in state",
                    resource.location,
                )
            )


def plan_run(
    workspace: Workspace,
    options: RunOptions,
    desired: DesiredState | None = None,
    state: State | None = None,
) -> Plan:
    """The plan of the manifests (or of `desired`, already loaded) against the state and the
    live resources; writes nothing."""
    if options.refresh_only:
        return plan_refresh(workspace, options, state).plan
    check_destroy_scope(workspace.config, options.targets, options.destroy)
    with collector_paused():  # a state of a thousand surveys is a lot of objects to walk
        state = workspace.state.load() if state is None else state
    loaded = state
    environment = workspace.environment
    check_placement(workspace.config, environment, state)
    # The reads the state calls for start while the manifests load (not for --target or
    # PATHS that are some of the manifests, which plan a part of the state known only once
    # they are loaded, nor for the embedded sandbox, which a run with bad manifests should
    # not start).
    partial = reads_some_manifests(workspace.config, options.targets)
    early = not options.target_addresses and not partial and not environment.embedded
    marketplace = _early_marketplace(workspace, state) if early else None
    with LiveReads(marketplace, state, options.parallelism, options.refresh) as reads:
        if marketplace is not None:
            reads.start()
        warnings: list[Diagnostic] = []
        if desired is None:
            desired, warnings = checked_manifests(workspace, options)
        # Creates are looked for among everything the manifests and the state hold, a
        # --target plan's too: a renamed program's old members are outside its cut.
        whole_desired, whole_state = desired, state
        if options.target_addresses:
            desired, state = targets.select(desired, state, options.target_addresses)
            reads.state = state
        if marketplace is None:
            marketplace = reads.client = _reporting(workspace, state, workspace.marketplace())
        rule = identity.Rule.of(environment)
        # Creates are first looked for on the service (no request when none is due); adopted
        # twins are planned as resources in state, from the bodies read to adopt them.
        adopt = identity.ADOPT in options.overrides
        due = creates_due(desired, state)
        twins = find_twins(
            marketplace, whole_desired, whole_state, rule, adopt, due, options.parallelism
        )
        state = adopted_state(state, twins)
        reads.given(twins.bodies)
        request = PlanRequest(
            desired,
            state,
            environment.name,
            options.destroy,
            options.parallelism,
            settle_seconds=create_settle_seconds(),
            refresh=options.refresh,
            rule=rule,
            partial=tuple(plan_sources(workspace.config, options.targets)) if partial else (),
        )
        plan = make_plan(marketplace, request, reads)
    # First, as `validate` lists them: they are about the manifests, not about a change.
    said = manifest_warnings(whole_desired, warnings)
    if options.target_addresses:  # of the resources planned, and of no one resource
        cut = kinds.described(desired)
        said = [note for note in said if not note.address or note.address in cut]
    plan.notes[:0] = said
    settle(plan, twins, rule, options.overrides)
    # After settle: a create it withheld (a renamed wave whose title has no `{wave}` is a
    # twin) has its own note naming the `state mv` already.
    note_wave_renames(plan, desired, state, reads.results)
    _refuse_secrets(plan)
    creates = plan.counts()["add"]
    location = workspace.state.location
    for warning in state_warnings(workspace.config, environment, location, loaded, creates):
        plan.warnings.append(warning)
        if workspace.on_warning is not None:
            workspace.on_warning(warning)
    if workspace.catalog is not None:  # names next to codes; codes alone when offline
        plan.labels = plan_labels(plan, workspace.catalog)
    plan.survey_names = survey_names(plan, loaded, state)  # --target: the members outside it
    if options.target_addresses:
        targets.mark_partial(plan, options.target_addresses)
    # A --target plan covers part of the state; the share it changes is of all of it.
    left_out = len(whole_state.resources.keys() - state.resources.keys())
    add_guard_notes(
        plan,
        environment.guards,
        options.overrides,
        environment.name,
        _guards_location(workspace),
        left_out,
    )
    plan.sources = plan_sources(workspace.config, options.targets)
    return plan


def _early_marketplace(workspace: Workspace, state: State) -> Marketplace | None:
    """The marketplace for reads started before the manifests load; None when it cannot be
    had yet (a missing key), so that the manifests' own errors still come first."""
    try:
        return _reporting(workspace, state, workspace.marketplace())
    except SurveyctlError:
        return None


def _reporting(workspace: Workspace, state: State, marketplace: Marketplace) -> Marketplace:
    """The marketplace of a plan: each page of the survey list read once (listed_once.py),
    and each live read reported when the workspace asks for it."""
    marketplace = listed_once(marketplace)
    if workspace.on_read is None:
        return marketplace
    return reporting_reads(marketplace, state, workspace.on_read)


def plan_sources(config: Config, targets: tuple[Path, ...]) -> list[str]:
    """The manifest files and folders of a plan, as a saved plan records them: relative to the
    project root (POSIX), or absolute when outside it (such a plan cannot be saved)."""
    root = config.root.resolve()
    sources = []
    for path in config.manifest_paths(targets):
        resolved = Path(os.path.abspath(path))
        if resolved.is_relative_to(root):
            sources.append(resolved.relative_to(root).as_posix() or ".")
        else:
            sources.append(str(resolved))
    return sources


def _guards_location(workspace: Workspace) -> str | None:
    """Where the guards are set, for the notes: surveyctl.yaml."""
    return str(workspace.config.path) if workspace.config.path else None


def plan_refresh(workspace: Workspace, options: RunOptions, state: State | None) -> Refresh:
    """The refresh of `state` (loaded when None): every managed resource read, and what
    changed outside surveyctl (`plan --refresh-only`, and what `apply --refresh-only` records)."""
    state = workspace.state.load() if state is None else state
    # What a refresh finds it records: never into a copy the team no longer reads.
    check_placement(workspace.config, workspace.environment, state)
    refresh = make_refresh(
        workspace.marketplace(), state, workspace.environment.name, options.parallelism
    )
    refresh.plan.survey_names = survey_names(refresh.plan, state)
    return refresh
