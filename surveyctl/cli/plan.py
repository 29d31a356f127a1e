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
from surveyctl.cli.options import format_option
from surveyctl.cli.progress import Steps
from surveyctl.config import plan_signing_key
from surveyctl.errors import SurveyctlError
from surveyctl.reconcile import guards, identity
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
from surveyctl.render import json as render_json
from surveyctl.render import markdown as render_markdown
from surveyctl.render import text as render_text
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
    chosen = {o for o in guards.OVERRIDES if flags["allow_" + o.replace("-", "_")]}
    chosen |= {o for o in (identity.ADOPT, identity.DUPLICATE) if flags.get(o)}
    return frozenset(chosen)


def _identity_options(command):
    """--adopt and --allow-duplicate: what a plan does with a create whose resource exists on
    the service already (docs/state.md, Identity); a saved plan records them."""
    command = click.option(
        "--allow-duplicate",
        "duplicate",
        is_flag=True,
        help="Create a resource even though one with the same identity exists on the service.",
    )(command)
    return click.option(
        "--adopt",
        "adopt",
        is_flag=True,
        help="Record in the state the resource that exists on the service for a manifest "
        "(one match each), then plan the differences as updates.",
    )(command)


def _warn(message: str) -> None:
    click.echo(f"surveyctl: warning: {message}", err=True)


def render_plan(plan: Plan, output_format: str) -> str:
    """The plan in `output_format` (text is coloured only where `use_color` says)."""
    if output_format == "json":
        return render_json.render(plan)
    if output_format == "markdown":
        return render_markdown.render(plan)
    return render_text.render(plan, color=use_color())


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
def _failure_as_markdown(ctx: CliContext, markdown: bool):
    """With `--format markdown`, a plan that cannot be made still prints a comment saying what
    failed (on stdout, for the pull request); the error then ends the command with exit 1."""
    try:
        yield
    except SurveyctlError as exc:
        if markdown:
            details = [str(d) for d in exc.diagnostics] if isinstance(exc, ManifestErrors) else []
            click.echo(
                render_markdown.render_failure(_environment_name(ctx), str(exc), details),
                nl=False,
            )
        raise


def _environment_name(ctx: CliContext) -> str:
    try:
        return ctx.environment().name
    except SurveyctlError:  # the configuration itself is what failed
        return ctx.env_name or "unknown"


@click.command("plan")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@format_option("text", "json", "markdown")
@click.option(
    "--out",
    "--output",
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
@_identity_options
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
    with _failure_as_markdown(ctx, output_format == "markdown"):
        workspace = ctx.workspace(options, refresh_catalog=refresh_catalog, offline=offline)
        workspace.on_read = reading.step
        workspace.on_warning = _warn
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
@format_option("text", "json", help="How to show the plan before applying.")
@_destroy
@_refresh_only
@_target
@_parallelism
@_override_options
@_identity_options
@click.option(
    "--allow-local-state",
    is_flag=True,
    help="Under CI=true, apply to a protected environment from an empty local state file.",
)
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
    allow_local_state,
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
        allow_local_state=allow_local_state,
    )
    if target_addresses and saved_plan_path(options.targets) is not None:
        raise click.UsageError("--target chooses from manifests; a saved plan is applied whole")
    reading, writing = Steps("read"), Steps("apply")

    def show(plan: Plan) -> None:
        reading.close()  # the bar of the reads goes before the plan is shown
        writing.total = sum(1 for resource in plan.resources if resource.is_change)
        _show(plan, output_format)

    ask = _confirm_refresh if refresh_only else _confirm
    hooks = ApplyHooks(
        show=show,
        confirm=ask if confirm.terminal() else None,
        on_outcome=lambda outcome: _progress(writing, outcome),
        on_interrupt=_interrupted,
    )
    if hooks.confirm is None:
        saved = saved_plan_path(options.targets) is not None
        confirm.refuse_unapprovable(ctx, auto_approve or saved)
    workspace = ctx.workspace(options, refresh_catalog=refresh_catalog, offline=offline)
    workspace.on_read = reading.step
    workspace.on_warning = _warn
    try:
        run = _reporting_manifest_errors(lambda: apply_run(workspace, options, hooks))
    finally:
        reading.close()
        writing.close()
    if run.refreshed:
        click.echo(
            f"Refresh complete: the live values of {run.refreshed} resource(s) are recorded "
            "as last applied."
        )
        return
    if run.result is not None:
        _report(run.result)
    elif not run.plan.has_changes:
        click.echo(_complete(ApplyResult()))


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


def _complete(result: ApplyResult) -> str:
    """Terraform's closing line, counted from what was done."""
    done = [o.action for o in result.outcomes if o.status == "done"]
    changed = done.count("update") + done.count("quota-update")
    return (
        f"Apply complete! Resources: {done.count('create')} added, {changed} changed, "
        f"{done.count('delete')} destroyed."
    )


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


def _report(result: ApplyResult) -> None:
    done = result.count("done")
    if not result.failed:
        click.echo(_complete(result))
        return
    verdict = "interrupted" if result.interrupted else "incomplete"
    click.echo(
        f"Apply {verdict}: {done} done, {result.count('failed')} failed, "
        f"{result.count('skipped')} not attempted."
    )
    for outcome in result.failed:
        if outcome.message != INTERRUPTED:
            click.echo(
                f"  {outcome.status}: {outcome.address} ({outcome.action}): {outcome.message}"
            )
    stopped = [o.address for o in result.outcomes if o.message == INTERRUPTED]
    if stopped:
        click.echo(f"  not attempted (interrupted): {', '.join(stopped)}")
    click.echo("What was done is recorded in the state; run `surveyctl plan` to see what remains.")
    click.get_current_context().exit(INTERRUPTED_EXIT if result.interrupted else 1)
