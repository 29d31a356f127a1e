"""`surveyctl plan` and `surveyctl apply`: what a change will do, and doing exactly that.

The workflow lives in `surveyctl.reconcile.run`; this module turns options into RunOptions,
shows plans, asks on the terminal and sets the exit code.
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from surveyctl.cli import confirm
from surveyctl.cli.console import use_color
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.manifest_options import offline_option, refresh_option
from surveyctl.cli.options import output_format_option
from surveyctl.cli.progress import Steps
from surveyctl.config import plan_signing_key
from surveyctl.errors import SurveyctlError
from surveyctl.reconcile import guards
from surveyctl.reconcile.apply import INTERRUPTED, ApplyResult, Outcome, unattempted
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.planfile import save_plan
from surveyctl.reconcile.run import (
    DEFAULT_PARALLELISM,
    MAX_PARALLELISM,
    ApplyHooks,
    ManifestErrors,
    RunOptions,
    apply_run,
    plan_run,
    saved_plan_path,
)
from surveyctl.render import formats
from surveyctl.render import text as render_text
from surveyctl.render.report import ApplyReport
from surveyctl.safety import check_output_path

INTERRUPTED_EXIT = 130

_destroy = click.option(
    "--destroy", is_flag=True, help="Delete resources that are no longer in the manifests."
)
_refresh_only = click.option(
    "--refresh-only",
    is_flag=True,
    help="Compare the live resources with the state instead of the manifests (not read): "
    "plan shows what changed outside surveyctl, apply records those live values as last "
    "applied.",
)
_target = click.option(
    "--target",
    "target_addresses",
    multiple=True,
    metavar="ADDRESS",
    help="Plan only this resource (Survey/NAME, ExclusionGroup/NAME or NAME; repeatable) and "
    "what it depends on (a group's surveys).",
)
_parallelism = click.option(
    "--parallelism",
    default=DEFAULT_PARALLELISM,
    show_default=True,
    type=click.IntRange(1, MAX_PARALLELISM),
    help="Requests in flight at once.",
)


_OVERRIDE_HELP = {
    guards.SPEND_INCREASE: "Let a plan over the environment's max_spend_increase through.",
    guards.DESTROY: "Let a plan over the environment's max_destroy through.",
    guards.LARGE_CHANGE: "Let a plan over the environment's max_changed_percent through.",
}


def _override_options(command):
    """--allow-spend-increase, --allow-destroy, --allow-large-change (see docs/safety.md)."""
    for override in reversed(guards.OVERRIDES):
        name = "allow_" + override.replace("-", "_")
        option = click.option(
            guards.flag(override), name, is_flag=True, help=_OVERRIDE_HELP[override]
        )
        command = option(command)
    return command


def _overrides(**flags: bool) -> frozenset[str]:
    return frozenset(o for o in guards.OVERRIDES if flags["allow_" + o.replace("-", "_")])


def render_plan(plan: Plan, output_format: str) -> str:
    """The plan in `output_format` (text is coloured only where `use_color` says)."""
    return formats.get(output_format).plan(plan, use_color())


def _show(plan: Plan, output_format: str) -> None:
    click.echo(render_plan(plan, output_format), nl=False)


def _reporting_manifest_errors(run):
    """Runs `run()`; manifest errors are listed on stderr before the one-line verdict."""
    try:
        return run()
    except ManifestErrors as exc:
        for diagnostic in exc.diagnostics:
            click.echo(str(diagnostic), err=True)
        raise


@contextmanager
def _failure_shown(ctx: CliContext, output_format: str):
    """A plan that cannot be made still prints what failed in a format that says so (markdown:
    a comment for the pull request, on stdout); the error then ends the command with exit 1."""
    try:
        yield
    except SurveyctlError as exc:
        failure = formats.get(output_format).failure
        if failure is not None:
            details = [str(d) for d in exc.diagnostics] if isinstance(exc, ManifestErrors) else []
            click.echo(failure(_environment_name(ctx), str(exc), details), nl=False)
        raise


def _environment_name(ctx: CliContext) -> str:
    try:
        return ctx.environment().name
    except SurveyctlError:  # the configuration itself is what failed
        return ctx.env_name or "unknown"


@click.command("plan")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@output_format_option()
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    help="Save the plan for `surveyctl apply FILE`.",
)
@click.option(
    "--detailed-exitcode", is_flag=True, help="Exit 0 with no changes, 2 with changes, 1 on error."
)
@_destroy
@_refresh_only
@_target
@_parallelism
@_override_options
@refresh_option
@offline_option
@pass_context
def plan_command(
    ctx: CliContext,
    paths,
    output_format,
    out,
    detailed_exitcode,
    destroy,
    refresh_only,
    target_addresses,
    parallelism,
    refresh_catalog,
    offline,
    **allow: bool,
) -> None:
    """Show what apply would change in the live surveys; writes nothing.

    Without PATHS the `manifests:` of surveyctl.yaml are read. A plan over the environment's
    guards is an error unless the named --allow-... option is given; a saved plan keeps them.
    """
    if refresh_only and (out is not None or destroy):
        raise click.UsageError("--refresh-only cannot be combined with --out or --destroy")
    if out is not None:
        check_output_path(out, "--out")
    options = RunOptions(
        targets=paths,
        destroy=destroy,
        parallelism=parallelism,
        refresh_only=refresh_only,
        target_addresses=target_addresses,
        overrides=_overrides(**allow),
    )
    reading = Steps("read")
    with _failure_shown(ctx, output_format):
        workspace = ctx.workspace(options, refresh_catalog=refresh_catalog, offline=offline)
        workspace.on_read = reading.step
        try:
            plan = _reporting_manifest_errors(lambda: plan_run(workspace, options))
        finally:
            reading.close()
    _show(plan, output_format)
    if out is not None:
        save_plan(plan, out, plan_signing_key())
        click.echo(f"Saved the plan to {out}; apply it with `surveyctl apply {out}`.", err=True)
    if plan.errors or unattempted(plan):  # an error, or a resource it could not plan
        click.get_current_context().exit(1)
    if detailed_exitcode and (plan.has_changes or plan.refreshed or plan.recovered):
        click.get_current_context().exit(2)


@click.command("apply")
@click.argument("target", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--auto-approve",
    "--yes",
    "auto_approve",
    is_flag=True,
    help="Apply without asking (on a protected environment, only with --env NAME).",
)
@click.option(
    "--lock-timeout",
    default=0.0,
    show_default=True,
    type=float,
    metavar="SECONDS",
    help="Wait this long for another command's state lock.",
)
@output_format_option(
    for_apply=True,
    help="text: the plan, then what was done. json: the plan as text on stderr, then one "
    "JSON report on stdout (what was done, failed or not attempted, with ids).",
)
@_destroy
@_refresh_only
@_target
@_parallelism
@_override_options
@refresh_option
@offline_option
@pass_context
def apply_command(
    ctx: CliContext,
    target,
    auto_approve,
    lock_timeout,
    output_format,
    destroy,
    refresh_only,
    target_addresses,
    parallelism,
    refresh_catalog,
    offline,
    **allow: bool,
) -> None:
    """Apply the manifests (or a plan saved by `plan --out FILE`) to the environment.

    TARGET is manifest files or folders (default: `manifests:` of surveyctl.yaml), or one saved
    plan file, which is applied when a fresh plan of its manifests agrees with it (with the
    --allow-... overrides it was planned with), and refused otherwise (deletes in it need
    --destroy; with $SURVEYCTL_PLAN_KEY set, only plans signed with that key are applied).
    """
    if refresh_only and destroy:
        raise click.UsageError("--refresh-only cannot be combined with --destroy")
    options = RunOptions(
        targets=target,
        destroy=destroy,
        parallelism=parallelism,
        lock_timeout=lock_timeout,
        auto_approve=auto_approve,
        env_named=ctx.env_named,
        refresh_only=refresh_only,
        target_addresses=target_addresses,
        overrides=_overrides(**allow),
    )
    if target_addresses and saved_plan_path(options.targets) is not None:
        raise click.UsageError("--target chooses from manifests; a saved plan is applied whole")
    reading, writing = Steps("read"), Steps("apply")

    output = formats.get(output_format)

    def show(plan: Plan) -> None:
        reading.close()  # the bar of the reads goes before the plan is shown
        writing.total = sum(1 for resource in plan.resources if resource.is_change)
        if output.report_holds_plan:  # stdout holds the report alone
            click.echo(render_text.render(plan, color=use_color()), nl=False, err=True)
        else:
            _show(plan, output_format)

    ask = _confirm_refresh if refresh_only else _confirm
    hooks = ApplyHooks(
        show=show,
        confirm=ask if confirm.terminal() else None,
        on_outcome=lambda outcome: _progress(writing, outcome),
        on_interrupt=_interrupted,
    )
    workspace = ctx.workspace(options, refresh_catalog=refresh_catalog, offline=offline)
    workspace.on_read = reading.step
    try:
        run = _reporting_manifest_errors(lambda: apply_run(workspace, options, hooks))
    finally:
        reading.close()
        writing.close()
    report = ApplyReport(
        run.plan,
        run.result or ApplyResult(),
        workspace.state.current(),
        refreshed=run.refreshed or None,
    )
    assert output.apply is not None  # the option offers only formats with a report
    click.echo(output.apply(report, use_color()), nl=False)
    if report.verdict in ("incomplete", "interrupted"):
        click.get_current_context().exit(INTERRUPTED_EXIT if report.result.interrupted else 1)


def _confirm(environment: str) -> bool:
    return confirm.typed_yes(f"Apply these changes to environment {environment!r}")


def _confirm_refresh(environment: str) -> bool:
    return confirm.typed_yes(
        f"Record these live values as last applied in the state of environment {environment!r}"
    )


def _progress(steps: Steps, outcome: Outcome) -> None:
    if outcome.message == INTERRUPTED:
        return  # counted in the report; one line each would bury the writes that were done
    mark = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}[outcome.status]
    steps.step(outcome.address, detail=f"{outcome.action} {mark} {outcome.message}".rstrip())


def _interrupted(signal_name: str, first: bool) -> None:
    """Told from inside the signal handler: written straight to the file descriptor, because a
    buffered write could re-enter one the main thread was in the middle of."""
    if first:
        text = (
            f"\n{signal_name} received: the writes in flight finish and are recorded; "
            "nothing new is sent.\n"
        )
    else:
        text = f"{signal_name} received again: still finishing the writes in flight.\n"
    try:
        os.write(sys.stderr.fileno(), text.encode())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # stderr is not a file (a test runner); the report says it all
