"""The plan and apply workflows, as the CLI, the benchmarks and the tests all run them.

`plan_run` reads the manifests and plans them against state and live bodies. `apply_run`
does what `surveyctl apply` does, in this order: the protected-environment rule, the state
lock, a saved plan (checked against its environment, the state and the live resources) or a
fresh plan, show, refuse on errors, ask, record lifecycle flags, apply. What talks to a
person (showing the plan, asking, reporting progress) is passed in as callables, so the
workflow never touches a terminal. With `refresh_only`, both compare the live resources with the
state instead of the manifests (`surveyctl.reconcile.refresh`), and `refresh_run` records
the live values that drifted.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from surveyctl.catalog import Catalog
from surveyctl.config import Config, Environment
from surveyctl.errors import ConfigError, SurveyctlError
from surveyctl.manifests import Diagnostic, load_manifests
from surveyctl.manifests.diagnostics import ERROR
from surveyctl.model import DesiredState
from surveyctl.reconcile.apply import (
    ApplyResult,
    Outcome,
    apply_plan,
    forget_gone,
    record_settled,
    sync_lifecycle,
    unattempted,
)
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.planfile import load_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.reconcile.recovery import record_recovered
from surveyctl.reconcile.refresh import Refresh, make_refresh, record_refresh
from surveyctl.reconcile.tamper import check_state, guard_deletes, recheck, source_targets
from surveyctl.state import State, StateBackend

DEFAULT_PARALLELISM = 10
MAX_PARALLELISM = 64


class ManifestErrors(SurveyctlError):
    """The manifests have errors, so nothing is planned; `diagnostics` lists them."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__(
            f"{len(diagnostics)} error(s) in the manifests; nothing was planned "
            "(`surveyctl validate` shows them all)"
        )


@dataclass(frozen=True)
class RunOptions:
    """How to plan or apply; the same options for every caller.

    `targets` are manifest files or folders (default: `manifests:` of surveyctl.yaml), or, for
    apply, one saved plan file. `parallelism` bounds the requests in flight and sizes the
    client's connection pool. `env_named` says the environment was named explicitly
    (`--env`), which a protected environment requires before applying without a question.
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


@dataclass
class ApplyHooks:
    """What apply needs from whoever talks to the person running it.

    `show(plan)` presents the plan; `confirm(environment_name)` asks for approval and returns
    the answer, and is None when there is nobody to ask (no terminal); `on_outcome` reports
    each write as it completes.
    """

    show: Callable[[Plan], None] = lambda plan: None
    confirm: Callable[[str], bool] | None = None
    on_outcome: Callable[[Outcome], None] | None = None


@dataclass
class ApplyRun:
    """What an apply did: the plan it carried out and, when it wrote, the outcome of each write."""

    plan: Plan
    result: ApplyResult | None = None
    saved: bool = False
    refreshed: int = 0  # resources whose live values an `apply --refresh-only` recorded


def manifest_paths(config: Config, targets: tuple[Path, ...]) -> list[Path]:
    """The targets as given, else the `manifests:` of surveyctl.yaml."""
    if targets:
        return list(targets)
    if config.manifests:
        return [config.root / entry for entry in config.manifests]
    raise ConfigError(
        "no manifests given: name files or folders, or list them under 'manifests:' in "
        "surveyctl.yaml"
    )


def saved_plan_path(targets: tuple[Path, ...]) -> Path | None:
    """One target that is a file but not YAML is a saved plan."""
    if len(targets) == 1 and targets[0].is_file() and targets[0].suffix not in (".yaml", ".yml"):
        return targets[0]
    return None


def desired_state(workspace: Workspace, options: RunOptions) -> DesiredState:
    """The manifests of `options.targets`, expanded and checked; ManifestErrors when they
    have errors."""
    desired, diagnostics = load_manifests(
        manifest_paths(workspace.config, options.targets), workspace.catalog
    )
    if diagnostics.has_errors:
        raise ManifestErrors([d for d in diagnostics.sorted() if d.severity == ERROR])
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
    state = workspace.state.load() if state is None else state
    desired = desired_state(workspace, options) if desired is None else desired
    request = PlanRequest(
        desired, state, workspace.environment.name, options.destroy, options.parallelism
    )
    plan = make_plan(workspace.marketplace(), request)
    plan.sources = plan_sources(workspace.config, options.targets)
    return plan


def plan_sources(config: Config, targets: tuple[Path, ...]) -> list[str]:
    """The manifest files and folders of a plan, as a saved plan records them: relative to the
    project root (POSIX), or absolute when outside it (such a plan cannot be saved)."""
    root = config.root.resolve()
    sources = []
    for path in manifest_paths(config, targets):
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
    environment = workspace.environment
    if options.auto_approve and environment.protected and not options.env_named:
        raise SurveyctlError(
            f"environment {environment.name!r} is protected: --auto-approve needs it named "
            f"explicitly with --env {environment.name}"
        )
    saved = saved_plan_path(options.targets)
    store = workspace.state
    with store.locked("apply", options.lock_timeout):
        if saved is not None:
            plan = _load_saved(saved, workspace, options)
        else:
            plan = plan_run(workspace, options, state=store.load())
        hooks.show(plan)
        if plan.errors:
            raise SurveyctlError("the plan has errors; nothing was applied")
        guard_deletes(plan, store.current(), options.destroy)
        if plan.has_changes and saved is None and not options.auto_approve:
            _confirm(hooks, environment.name)
        sync_lifecycle(plan, store)  # after the approval: a cancelled apply changes nothing
        record_recovered(plan, store)  # before the writes: they build on what it records
        record_settled(plan, store)
        if plan.has_changes:
            result = apply_plan(
                plan, workspace.marketplace(), store, options.parallelism, hooks.on_outcome
            )
        else:
            result = ApplyResult()
        _report_unattempted(plan, result, hooks)
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
    if options.auto_approve and environment.protected and not options.env_named:
        raise SurveyctlError(
            f"environment {environment.name!r} is protected: --auto-approve needs it named "
            f"explicitly with --env {environment.name}"
        )
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
        if not options.auto_approve:
            _confirm(hooks, environment.name)
        recorded = record_refresh(refresh, store)
    return ApplyRun(refresh.plan, refreshed=recorded)


def _refresh(workspace: Workspace, options: RunOptions, state: State | None) -> Refresh:
    state = workspace.state.load() if state is None else state
    return make_refresh(
        workspace.marketplace(), state, workspace.environment.name, options.parallelism
    )


def _load_saved(path: Path, workspace: Workspace, options: RunOptions) -> Plan:
    """The saved plan at `path`, re-checked: its environment, its state, and each of its
    changes against a fresh plan of the manifests it names (`surveyctl.reconcile.tamper`)."""
    saved = load_plan(path)
    name = workspace.environment.name
    if saved.environment != name:
        raise SurveyctlError(
            f"{path} was planned for environment {saved.environment!r}, not {name!r}"
        )
    state = workspace.state.load()
    check_state(saved, state)
    targets = source_targets(saved, workspace.config.root, path)
    again = dataclasses.replace(options, targets=targets, destroy=saved.destroy)
    return recheck(saved, plan_run(workspace, again, state=state))


def _confirm(hooks: ApplyHooks, environment: str) -> None:
    if hooks.confirm is None:
        raise SurveyctlError(
            "apply asks before changing anything and there is no terminal to ask: pass "
            "--auto-approve, or apply a reviewed plan file"
        )
    if not hooks.confirm(environment):
        raise SurveyctlError("apply cancelled; nothing was changed")
