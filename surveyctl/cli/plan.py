"""`surveyctl plan` and `surveyctl apply`: what a change will do, and doing exactly that.

The workflow lives in `surveyctl.reconcile.run`; this module turns options into RunOptions,
shows plans, asks on the terminal and sets the exit code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.manifest_options import refresh_option
from surveyctl.reconcile.apply import ApplyResult, Outcome, unattempted
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
)
from surveyctl.render import json as render_json
from surveyctl.render import markdown as render_markdown
from surveyctl.render import text as render_text

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
_parallelism = click.option(
    "--parallelism",
    default=DEFAULT_PARALLELISM,
    show_default=True,
    type=click.IntRange(1, MAX_PARALLELISM),
    help="Requests in flight at once.",
)


def use_color() -> bool:
    """Colour only on a terminal, and never with NO_COLOR set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _show(plan: Plan, output_format: str) -> None:
    if output_format == "json":
        click.echo(render_json.render(plan), nl=False)
    elif output_format == "markdown":
        click.echo(render_markdown.render(plan), nl=False)
    else:
        click.echo(render_text.render(plan, color=use_color()), nl=False)


def _reporting_manifest_errors(run):
    """Runs `run()`; manifest errors are listed on stderr before the one-line verdict."""
    try:
        return run()
    except ManifestErrors as exc:
        for diagnostic in exc.diagnostics:
            click.echo(str(diagnostic), err=True)
        raise


@click.command("plan")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan for `surveyctl apply FILE`.",
)
@click.option(
    "--detailed-exitcode", is_flag=True, help="Exit 0 with no changes, 2 with changes, 1 on error."
)
@_destroy
@_refresh_only
@_parallelism
@refresh_option
@pass_context
def plan_command(
    ctx: CliContext,
    paths,
    output_format,
    out,
    detailed_exitcode,
    destroy,
    refresh_only,
    parallelism,
    refresh_catalog,
) -> None:
    """Show what apply would change in the live surveys; writes nothing.

    Without PATHS the `manifests:` of surveyctl.yaml are read.
    """
    if refresh_only and (out is not None or destroy):
        raise click.UsageError("--refresh-only cannot be combined with --out or --destroy")
    options = RunOptions(
        targets=paths, destroy=destroy, parallelism=parallelism, refresh_only=refresh_only
    )
    workspace = ctx.workspace(options, refresh_catalog=refresh_catalog)
    plan = _reporting_manifest_errors(lambda: plan_run(workspace, options))
    _show(plan, output_format)
    if out is not None:
        save_plan(plan, out)
        click.echo(f"Saved the plan to {out}; apply it with `surveyctl apply {out}`.", err=True)
    if plan.errors or unattempted(plan):  # an error, or a resource it could not plan
        click.get_current_context().exit(1)
    if detailed_exitcode and (plan.has_changes or plan.refreshed or plan.recovered):
        click.get_current_context().exit(2)


@click.command("apply")
@click.argument("target", nargs=-1, type=click.Path(path_type=Path))
@click.option("--auto-approve", is_flag=True, help="Apply without asking.")
@click.option(
    "--lock-timeout",
    default=0.0,
    show_default=True,
    type=float,
    metavar="SECONDS",
    help="Wait this long for another command's state lock.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="How to show the plan before applying.",
)
@_destroy
@_refresh_only
@_parallelism
@refresh_option
@pass_context
def apply_command(
    ctx: CliContext,
    target,
    auto_approve,
    lock_timeout,
    output_format,
    destroy,
    refresh_only,
    parallelism,
    refresh_catalog,
) -> None:
    """Apply the manifests (or a plan saved by `plan --out FILE`) to the environment.

    TARGET is manifest files or folders (default: `manifests:` of surveyctl.yaml), or one saved
    plan file, which is applied when a fresh plan of its manifests agrees with it, and refused
    otherwise (deletes in it need --destroy; with $SURVEYCTL_PLAN_KEY set, only plans signed
    with that key are applied).
    """
    if refresh_only and destroy:
        raise click.UsageError("--refresh-only cannot be combined with --destroy")
    options = RunOptions(
        targets=target,
        destroy=destroy,
        parallelism=parallelism,
        lock_timeout=lock_timeout,
        auto_approve=auto_approve,
        env_named=ctx.env_name is not None and ctx.env_name == ctx.environment().name,
        refresh_only=refresh_only,
    )
    ask = _confirm_refresh if refresh_only else _confirm
    hooks = ApplyHooks(
        show=lambda plan: _show(plan, output_format),
        confirm=ask if sys.stdin.isatty() else None,
        on_outcome=_progress,
    )
    workspace = ctx.workspace(options, refresh_catalog=refresh_catalog)
    run = _reporting_manifest_errors(lambda: apply_run(workspace, options, hooks))
    if run.refreshed:
        click.echo(
            f"Refresh complete: the live values of {run.refreshed} resource(s) are recorded "
            "as last applied."
        )
    if run.result is not None:
        _report(run.result)


def _confirm(environment: str) -> bool:
    answer = click.prompt(
        f"Apply these changes to environment {environment!r}? Only 'yes' will be accepted",
        default="",
        show_default=False,
    )
    return answer.strip() == "yes"


def _confirm_refresh(environment: str) -> bool:
    answer = click.prompt(
        f"Record these live values as last applied in the state of environment "
        f"{environment!r}? Only 'yes' will be accepted",
        default="",
        show_default=False,
    )
    return answer.strip() == "yes"


def _progress(outcome: Outcome) -> None:
    mark = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}[outcome.status]
    click.echo(f"{outcome.address}: {outcome.action} {mark} {outcome.message}".rstrip(), err=True)


def _report(result: ApplyResult) -> None:
    done = result.count("done")
    if not result.failed:
        click.echo(f"Apply complete: {done} resource(s) changed.")
        return
    click.echo(
        f"Apply incomplete: {done} done, {result.count('failed')} failed, "
        f"{result.count('skipped')} not attempted."
    )
    for outcome in result.failed:
        click.echo(f"  {outcome.status}: {outcome.address} ({outcome.action}): {outcome.message}")
    click.echo("What was done is recorded in the state; run `surveyctl plan` to see what remains.")
    click.get_current_context().exit(1)
