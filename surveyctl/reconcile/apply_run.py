"""The apply workflow: what `surveyctl apply` does, in this order: the state lock, a saved plan
(checked against its environment, the state and the live resources) or a fresh plan, show,
refuse on errors, the approval rule of every write (surveyctl.safety: ask, or refuse on a
protected environment that is not named with --env), record lifecycle flags, apply.

SIGINT, SIGTERM and SIGHUP stop the run before the writes, and once they run let those in
flight finish (`Interrupts`). A plan approved after a question is made again and must agree with
the one shown. `refresh_run` (`apply --refresh-only`) records the live values that drifted,
read again once a question was answered and recorded only when they are still what it showed.
"""

from __future__ import annotations

from pathlib import Path

from surveyctl.config import Environment
from surveyctl.errors import ConfigError, SurveyctlError
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
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.plan_run import plan_refresh, plan_run
from surveyctl.reconcile.recovery import record_recovered
from surveyctl.reconcile.refresh import Refresh, changed_since, record_refresh
from surveyctl.reconcile.run import ApplyHooks, ApplyRun, RunOptions, Workspace
from surveyctl.reconcile.saved_plan import load_saved, saved_plan_path
from surveyctl.reconcile.tamper import disagreement, guard_deletes, restricted
from surveyctl.safety import Approval, Interrupted, Interrupts, needs_question
from surveyctl.state.placement import local_state_refusal


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
    fields as last applied (one state write); once a person answered, from a second read that
    must agree with the first. Nothing is sent to the marketplace."""
    environment = workspace.environment
    if saved_plan_path(options.targets) is not None:
        raise SurveyctlError(
            "--refresh-only reads the live resources afresh and cannot apply a saved plan"
        )
    store = workspace.state
    with store.locked("apply --refresh-only", options.lock_timeout):
        refresh = plan_refresh(workspace, options, store.load())
        hooks.show(refresh.plan)
        if refresh.plan.errors:
            raise SurveyctlError("the refresh has errors; nothing was recorded")
        if not refresh.records:
            return ApplyRun(refresh.plan)
        asked = _approve(
            environment,
            options,
            hooks,
            saved=False,
            action=f"record these live values in the state of environment {environment.name!r}",
            hint="",
        )
        if asked:
            refresh = _refresh_as_answered(workspace, options, refresh)
        recorded = record_refresh(refresh, store)
    return ApplyRun(refresh.plan, refreshed=recorded)


def _refresh_as_answered(workspace: Workspace, options: RunOptions, shown: Refresh) -> Refresh:
    """The refresh to record once a person said yes to `shown`: read again, since the answer
    may come long after the reads. Recording the values read before the question would write
    into the state, as seen and accepted, values the service no longer holds; recording the
    ones read now, values no one was shown. Where the two disagree nothing is recorded."""
    fresh = plan_refresh(workspace, options, workspace.state.load())
    moved, unreadable = changed_since(shown, fresh)
    waited = "while the question waited for an answer"
    again = "nothing was recorded: run apply --refresh-only again to see what it records now"
    if moved:
        raise SurveyctlError(f"changed outside surveyctl {waited}: {', '.join(moved)}; {again}")
    if unreadable:
        raise SurveyctlError(
            f"could not read {', '.join(unreadable)} again once the question was answered, to "
            f"check {'it' if len(unreadable) == 1 else 'they'} did not change {waited}; {again}"
        )
    return fresh


def _plan_and_approve(
    workspace: Workspace, options: RunOptions, hooks: ApplyHooks, saved: Path | None
) -> Plan:
    """The plan to apply, shown, free of errors and approved; lifecycle flags recorded."""
    store = workspace.state
    if saved is not None:
        plan = load_saved(saved, workspace, options)
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
                    plan = load_saved(saved, workspace, options)
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
