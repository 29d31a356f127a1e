"""The plan and apply workflows, as the CLI, the benchmarks and the tests all run them.

`plan_run` reads the manifests and plans them against state and live bodies. `apply_run`
does what `surveyctl apply` does, in this order: the state lock, a saved plan (checked against
its environment, the state and the live resources) or a fresh plan, show, refuse on errors,
the approval rule of every write (surveyctl.safety: ask, or refuse on a protected environment
that is not named with --env), record lifecycle flags, apply. SIGINT and SIGTERM stop the
run before the writes, and once they run let those in flight finish (`Interrupts`). What
talks to a person (showing the plan, asking, reporting progress) is passed in as callables,
so the workflow never touches a terminal. With `refresh_only`, both compare the live
resources with the state instead of the manifests (`surveyctl.reconcile.refresh`), and
`refresh_run` records the live values that drifted.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from surveyctl.catalog import Catalog
from surveyctl.config import Config, Environment
from surveyctl.errors import ConfigError, SurveyctlError
from surveyctl.manifests import Diagnostic, load_manifests
from surveyctl.manifests.diagnostics import ERROR
from surveyctl.memory import collector_paused
from surveyctl.model import DesiredState
from surveyctl.reconcile import identity, targets
from surveyctl.reconcile.apply import (
    ApplyResult,
    Outcome,
    apply_plan,
    forget_gone,
    record_seen,
    record_settled,
    sync_lifecycle,
    unattempted,
)
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM
from surveyctl.reconcile.guards import add_guard_notes
from surveyctl.reconcile.labels import plan_labels, survey_names
from surveyctl.reconcile.listed_once import listed_once
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.planfile import PlanFileError, read_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.reconcile.progress import ReadReport, reporting_reads
from surveyctl.reconcile.reads import LiveReads
from surveyctl.reconcile.recovery import record_recovered
from surveyctl.reconcile.refresh import Refresh, make_refresh, record_refresh
from surveyctl.reconcile.tamper import (
    applied_overrides,
    check_state,
    disagreement,
    guard_deletes,
    recheck,
    restricted,
    source_targets,
)
from surveyctl.reconcile.twins import creates_due, find_twins
from surveyctl.safety import Approval, Interrupted, Interrupts, needs_question
from surveyctl.state import State, StateBackend
from surveyctl.state.placement import check_placement, local_state_refusal, state_warnings
from surveyctl.variables import create_settle_seconds, plan_signing_key

if TYPE_CHECKING:  # loaded by the CLI when a command reads through it
    from surveyctl.manifests.cache import ParsedCache


class ManifestErrors(SurveyctlError):
    """The manifests have errors, so nothing is planned; `diagnostics` lists them."""

    def __init__(self, diagnostics: list[Diagnostic], summary: str = ""):
        self.diagnostics = diagnostics
        super().__init__(
            summary
            or f"{len(diagnostics)} error(s) in the manifests; nothing was planned "
            "(`surveyctl validate` shows them all)"
        )


@dataclass(frozen=True)
class RunOptions:
    """How to plan or apply; the same options for every caller.

    `targets` are manifest files or folders (default: `manifests:` of surveyctl.yaml), or, for
    apply, one saved plan file. `parallelism` bounds the requests in flight and sizes the
    client's connection pool. `env_named` says the environment was named explicitly
    (`--env`), which a protected environment requires before applying without a question
    (`auto_approve` or a saved plan). `overrides` let a plan over the environment's guards
    through (surveyctl.reconcile.guards: "spend-increase", "destroy", "large-change").
    `refresh_only` compares the live resources with the state instead of the manifests (which
    are not read): a plan shows the drift, an apply records the live values as last applied.
    """

    targets: tuple[Path, ...] = ()
    destroy: bool = False
    parallelism: int = DEFAULT_PARALLELISM
    lock_timeout: float = 0.0
    auto_approve: bool = False
    env_named: bool = False
    refresh_only: bool = False
    # --target: only these addresses (and what they depend on) are planned; see targets.py.
    target_addresses: tuple[str, ...] = ()
    overrides: frozenset[str] = frozenset()
    # False: plan against the state alone, reading no survey (`plan --refresh=false`).
    refresh: bool = True
    # Apply from an empty local state under CI=true on a protected environment (placement.py).
    allow_local_state: bool = False


@dataclass
class Workspace:
    """One environment's marketplace, state and catalogue, as a run uses them.

    `marketplace` is called when the first request is due, so a run that fails early (bad
    manifests, a held lock) opens no connection and starts no embedded sandbox.
    """

    config: Config
    environment: Environment
    state: StateBackend
    marketplace: Callable[[], Marketplace]
    catalog: Catalog | None = None
    # Manifest files read before (surveyctl.manifests.cache); None: each file is parsed.
    manifest_cache: ParsedCache | None = None
    # Called as each live body of a plan is read: (address, done, total); see progress.py.
    on_read: ReadReport | None = None
    # Told of what a person should know before the plan is shown (an empty state), for stderr.
    on_warning: Callable[[str], None] | None = None


@dataclass
class ApplyHooks:
    """What apply needs from whoever talks to the person running it.

    `show(plan)` presents the plan; `confirm(environment_name)` asks for approval and returns
    the answer, and is None when there is nobody to ask (no terminal); `on_outcome` reports
    each write as it completes; `on_interrupt(signal_name, first)` is told of SIGINT and
    SIGTERM while the writes run (it runs in the signal handler: no buffered output).
    """

    show: Callable[[Plan], None] = lambda plan: None
    confirm: Callable[[str], bool] | None = None
    on_outcome: Callable[[Outcome], None] | None = None
    on_interrupt: Callable[[str, bool], None] | None = None


@dataclass
class ApplyRun:
    """What an apply did: the plan it carried out and, when it wrote, the outcome of each write."""

    plan: Plan
    result: ApplyResult | None = None
    saved: bool = False
    refreshed: int = 0  # resources whose live values an `apply --refresh-only` recorded


def check_destroy_scope(config: Config, targets: tuple[Path, ...], destroy: bool) -> None:
    """--destroy deletes what the manifests no longer describe, so it reads all of them: with
    PATHS that are not the `manifests:` of surveyctl.yaml, it would delete what the others
    describe (and a saved plan made so, swapped for a reviewed one, would apply it)."""
    if not destroy or not targets or not config.manifests:
        return
    given = {Path(os.path.abspath(path)) for path in targets}
    configured = {Path(os.path.abspath(config.root / entry)) for entry in config.manifests}
    if given != configured:
        listed = ", ".join(config.manifests)
        raise ConfigError(
            f"--destroy deletes what the manifests no longer describe, so it plans all of them: "
            f"give no PATHS (the manifests: of surveyctl.yaml, {listed}), or --target the "
            "resource to destroy"
        )


def looks_like_plan(path: Path) -> bool:
    """A file not named .yaml or .yml: a saved plan when it is apply's only target."""
    return path.is_file() and path.suffix not in (".yaml", ".yml")


def saved_plan_path(targets: tuple[Path, ...]) -> Path | None:
    """One target that is a file but not YAML is a saved plan."""
    if len(targets) == 1 and looks_like_plan(targets[0]):
        return targets[0]
    return None


def desired_state(workspace: Workspace, options: RunOptions) -> DesiredState:
    """The manifests of `options.targets`, expanded and checked; ManifestErrors when they
    have errors."""
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
    return desired


def plan_run(
    workspace: Workspace,
    options: RunOptions,
    desired: DesiredState | None = None,
    state: State | None = None,
) -> Plan:
    """The plan of the manifests (or of `desired`, already loaded) against the state and the
    live resources; writes nothing."""
    if options.refresh_only:
        return _refresh(workspace, options, state).plan
    check_destroy_scope(workspace.config, options.targets, options.destroy)
    with collector_paused():  # a state of a thousand surveys is a lot of objects to walk
        state = workspace.state.load() if state is None else state
    loaded = state
    environment = workspace.environment
    check_placement(workspace.config, environment, state)
    # The reads the state calls for start while the manifests load (not for --target, which
    # plans a part of the state, nor for the embedded sandbox, which a run with bad
    # manifests should not start).
    early = not options.target_addresses and not environment.embedded
    marketplace = _early_marketplace(workspace, state) if early else None
    with LiveReads(marketplace, state, options.parallelism, options.refresh) as reads:
        if marketplace is not None:
            reads.start()
        desired = desired_state(workspace, options) if desired is None else desired
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
        # twins are planned as resources in state (read when the plan reaches them).
        adopt = identity.ADOPT in options.overrides
        due = creates_due(desired, state)
        twins = find_twins(
            marketplace, whole_desired, whole_state, rule, adopt, due, options.parallelism
        )
        state = identity.adopted_state(state, twins)
        request = PlanRequest(
            desired,
            state,
            environment.name,
            options.destroy,
            options.parallelism,
            settle_seconds=create_settle_seconds(),
            refresh=options.refresh,
            rule=rule,
        )
        plan = make_plan(marketplace, request, reads)
    identity.settle(plan, twins, rule, options.overrides)
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


def apply_run(workspace: Workspace, options: RunOptions, hooks: ApplyHooks) -> ApplyRun:
    """Plans (or loads a saved plan), asks, and applies, all under the state lock."""
    if options.refresh_only:
        return refresh_run(workspace, options, hooks)
    if not options.refresh:
        raise ConfigError("apply reads every survey it writes; --refresh=false is for plan only")
    saved = saved_plan_path(options.targets)
    store = workspace.state
    with store.locked("apply", options.lock_timeout), Interrupts(hooks.on_interrupt) as signals:
        try:
            plan = _plan_and_approve(workspace, options, hooks, saved)
            signals.finish_in_flight()
        except KeyboardInterrupt:
            # Before the writes: the lock is released on the way out and nothing was sent.
            raise Interrupted(
                "apply interrupted before any change; nothing was applied", signals.exit_code
            ) from None
        record_recovered(plan, store)  # before the writes: they build on what it records
        record_settled(plan, store)
        record_seen(plan, store)
        if plan.has_changes:
            result = apply_plan(
                plan,
                workspace.marketplace(),
                store,
                options.parallelism,
                hooks.on_outcome,
                stop=signals.stop,
            )
        else:
            result = ApplyResult()
        result.exit_code = signals.exit_code
        _report_unattempted(plan, result, hooks)
        if not result.halted:  # its state write would fail too, and the report be lost
            _report(forget_gone(plan, store), result, hooks)
    return ApplyRun(plan, result if result.outcomes else None, saved=saved is not None)


def _report_unattempted(plan: Plan, result: ApplyResult, hooks: ApplyHooks) -> None:
    """Resources whose live body could not be read were not planned: the apply made every
    other change and reports these as not attempted, so it ends incomplete and a re-run
    picks them up."""
    _report(unattempted(plan), result, hooks)


def _report(outcomes: list[Outcome], result: ApplyResult, hooks: ApplyHooks) -> None:
    for outcome in outcomes:
        result.outcomes.append(outcome)
        if hooks.on_outcome:
            hooks.on_outcome(outcome)


def refresh_run(workspace: Workspace, options: RunOptions, hooks: ApplyHooks) -> ApplyRun:
    """`apply --refresh-only`: under the state lock, reads every managed resource, shows what
    changed outside surveyctl, asks as apply does, and records the live values of the drifted
    fields as last applied (one state write). Nothing is sent to the marketplace."""
    environment = workspace.environment
    if saved_plan_path(options.targets) is not None:
        raise SurveyctlError(
            "--refresh-only reads the live resources afresh and cannot apply a saved plan"
        )
    store = workspace.state
    with store.locked("apply --refresh-only", options.lock_timeout):
        refresh = _refresh(workspace, options, store.load())
        hooks.show(refresh.plan)
        if refresh.plan.errors:
            raise SurveyctlError("the refresh has errors; nothing was recorded")
        if not refresh.records:
            return ApplyRun(refresh.plan)
        _approve(
            environment,
            options,
            hooks,
            saved=False,
            action=f"record these live values in the state of environment {environment.name!r}",
            hint="",
        )
        recorded = record_refresh(refresh, store)
    return ApplyRun(refresh.plan, refreshed=recorded)


def _refresh(workspace: Workspace, options: RunOptions, state: State | None) -> Refresh:
    state = workspace.state.load() if state is None else state
    # What a refresh finds it records: never into a copy the team no longer reads.
    check_placement(workspace.config, workspace.environment, state)
    refresh = make_refresh(
        workspace.marketplace(), state, workspace.environment.name, options.parallelism
    )
    refresh.plan.survey_names = survey_names(refresh.plan, state)
    return refresh


def _plan_and_approve(
    workspace: Workspace, options: RunOptions, hooks: ApplyHooks, saved: Path | None
) -> Plan:
    """The plan to apply, shown, free of errors and approved; lifecycle flags recorded."""
    store = workspace.state
    if saved is not None:
        plan = _load_saved(saved, workspace, options)
    else:
        plan = plan_run(workspace, options, state=store.load())
    hooks.show(plan)
    if plan.errors:
        raise SurveyctlError("the plan has errors; nothing was applied")
    refusal = local_state_refusal(
        workspace.environment,
        store.location,
        store.current(),
        plan.counts()["add"],
        options.allow_local_state,
    )
    if refusal:
        raise SurveyctlError(refusal)
    guard_deletes(plan, store.current(), options.destroy)
    if plan.has_changes:
        if _approve(workspace.environment, options, hooks, saved is not None):
            # Planned again, as things are once the answer came; the warnings were shown.
            warn, workspace.on_warning = workspace.on_warning, None
            try:
                if saved is not None:
                    plan = _load_saved(saved, workspace, options)
                else:
                    plan = _as_answered(workspace, options, plan)
            finally:
                workspace.on_warning = warn
            if plan.errors:
                raise SurveyctlError(
                    "the plan made again once the question was answered has errors; nothing "
                    "was applied: run apply again to see them"
                )
    sync_lifecycle(plan, store)  # after the approval: a cancelled apply changes nothing
    return plan


def _as_answered(workspace: Workspace, options: RunOptions, shown: Plan) -> Plan:
    """The plan to apply once a person said yes to `shown`: planned again, since the answer
    may come long after the plan was read. A survey changed in the marketplace meanwhile would
    otherwise be overwritten with a body built from what it was (a colleague's change reverted,
    unseen), and a manifest edited meanwhile applied unseen: where the two plans disagree,
    nothing is applied."""
    store = workspace.state
    fresh = plan_run(workspace, options, state=store.load())
    found = disagreement(shown, fresh, verified=True)
    waited = "while the question waited for an answer"
    again = "nothing was applied: run apply again to see the plan as it is now"
    if found.moved:
        raise SurveyctlError(
            f"changed outside surveyctl {waited}: {', '.join(found.moved)}; {again}"
        )
    if found.differ:
        raise SurveyctlError(
            f"the plan changed {waited} (the manifests or the marketplace changed): "
            f"{', '.join(found.differ)}; {again}"
        )
    if found.unreadable:
        raise SurveyctlError(
            f"could not read {', '.join(found.unreadable)} again once the question was "
            f"answered, to check it did not change {waited}; {again}"
        )
    guard_deletes(fresh, store.current(), options.destroy)
    return restricted(shown, fresh, verified=True)


def _load_saved(path: Path, workspace: Workspace, options: RunOptions) -> Plan:
    """The saved plan at `path`, re-checked: its environment, its state, and each of its
    changes against a fresh plan of the manifests it names (`surveyctl.reconcile.tamper`)."""
    read = read_plan(path, plan_signing_key())
    saved = read.plan
    name = workspace.environment.name
    if saved.environment != name:
        raise SurveyctlError(
            f"{path} was planned for environment {saved.environment!r}, not {name!r}"
        )
    overrides = applied_overrides(path, read, options.overrides)
    state = workspace.state.load()
    check_state(saved, state)
    targets = source_targets(saved, workspace.config.root, path)
    try:
        check_destroy_scope(workspace.config, targets, saved.destroy)
    except ConfigError:
        raise PlanFileError(
            f"{path} destroys what its manifests ({', '.join(saved.sources)}) do not describe, "
            "but they are not the manifests: of surveyctl.yaml, which may describe it; make a "
            "new plan with --destroy and no PATHS"
        ) from None
    # The fresh plan is made with the overrides the plan may carry and the guards as
    # configured now: a limit tightened since the plan was made still holds.
    again = dataclasses.replace(
        options, targets=targets, destroy=saved.destroy, overrides=overrides, target_addresses=()
    )
    return recheck(saved, plan_run(workspace, again, state=state), verified=read.verified)


def _guards_location(workspace: Workspace) -> str | None:
    """Where the guards are set, for the notes: surveyctl.yaml."""
    return str(workspace.config.path) if workspace.config.path else None


def _approve(
    environment: Environment,
    options: RunOptions,
    hooks: ApplyHooks,
    saved: bool,
    action: str | None = None,
    hint: str = ", or apply a reviewed plan file",
) -> bool:
    """The approval rule every write follows (surveyctl.safety); a reviewed saved plan counts
    as an explicit approval, as --auto-approve does. True when a person was asked (and said
    yes): the answer may have come long after the plan was made."""
    approval = Approval(
        approved=options.auto_approve or saved,
        env_named=options.env_named,
        can_ask=hooks.confirm is not None,
        flag="--auto-approve",
    )
    action = action or f"apply these changes to environment {environment.name!r}"
    if not needs_question(environment, action, approval, always_asks=True, hint=hint):
        return False
    # needs_question asks only when someone can answer, so confirm is set here.
    if hooks.confirm is None or not hooks.confirm(environment.name):
        raise SurveyctlError("apply cancelled; nothing was changed")
    return True
