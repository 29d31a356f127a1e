"""`surveyctl plan` and `surveyctl apply`: what a change will do, and doing exactly that."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.manifest_options import (
    environment_catalog,
    manifest_paths,
    paths_argument,
    refresh_option,
)
from surveyctl.errors import SurveyctlError
from surveyctl.manifests import load_manifests
from surveyctl.manifests.diagnostics import ERROR
from surveyctl.reconcile.apply import (
    ApplyResult,
    Outcome,
    apply_plan,
    check_saved_plan,
    sync_lifecycle,
)
from surveyctl.reconcile.plan import Plan
from surveyctl.reconcile.planfile import load_plan, save_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.render import json as render_json
from surveyctl.render import markdown as render_markdown
from surveyctl.render import text as render_text
from surveyctl.state import State

_destroy = click.option(
    "--destroy", is_flag=True, help="Delete resources that are no longer in the manifests."
)
_parallelism = click.option(
    "--parallelism",
    default=10,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Requests in flight at once.",
)


def use_color() -> bool:
    """Colour only on a terminal, and never with NO_COLOR set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _make_plan(
    ctx: CliContext, state: State, paths, destroy: bool, parallelism: int, refresh: bool
) -> Plan:
    desired, diagnostics = load_manifests(
        manifest_paths(ctx, paths), environment_catalog(ctx, offline=False, refresh=refresh)
    )
    if diagnostics.has_errors:
        for diagnostic in diagnostics.sorted():
            if diagnostic.severity == ERROR:
                click.echo(str(diagnostic), err=True)
        raise SurveyctlError(
            f"{diagnostics.count(ERROR)} error(s) in the manifests; nothing was planned "
            "(`surveyctl validate` shows them all)"
        )
    request = PlanRequest(desired, state, ctx.environment().name, destroy, parallelism)
    return make_plan(ctx.client(), request)


def _show(plan: Plan, output_format: str) -> None:
    if output_format == "json":
        click.echo(render_json.render(plan), nl=False)
    elif output_format == "markdown":
        click.echo(render_markdown.render(plan), nl=False)
    else:
        click.echo(render_text.render(plan, color=use_color()), nl=False)


@click.command("plan")
@paths_argument
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
    parallelism,
    refresh_catalog,
) -> None:
    """Show what apply would change in the live surveys; writes nothing.

    Without PATHS the `manifests:` of surveyctl.yaml are read.
    """
    state = ctx.state_store().load()
    plan = _make_plan(ctx, state, paths, destroy, parallelism, refresh_catalog)
    _show(plan, output_format)
    if out is not None:
        save_plan(plan, out)
        click.echo(f"Saved the plan to {out}; apply it with `surveyctl apply {out}`.", err=True)
    if plan.errors:
        click.get_current_context().exit(1)
    if detailed_exitcode and plan.has_changes:
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
    parallelism,
    refresh_catalog,
) -> None:
    """Apply the manifests (or a plan saved by `plan --out FILE`) to the environment.

    TARGET is manifest files or folders (default: `manifests:` of surveyctl.yaml), or one saved
    plan file, which is applied exactly as it was planned, or refused if anything moved since.
    """
    environment = ctx.environment()
    if auto_approve and environment.protected and ctx.env_name != environment.name:
        raise SurveyctlError(
            f"environment {environment.name!r} is protected: --auto-approve needs it named "
            f"explicitly with --env {environment.name}"
        )
    saved = _saved_plan_path(target)
    store = ctx.state_store()
    with store.locked("apply", lock_timeout):
        if saved is not None:
            plan = load_plan(saved)
            if plan.environment != environment.name:
                raise SurveyctlError(
                    f"{saved} was planned for environment {plan.environment!r}, not "
                    f"{environment.name!r}"
                )
            check_saved_plan(plan, store.load(), ctx.client(), parallelism)
        else:
            plan = _make_plan(ctx, store.load(), target, destroy, parallelism, refresh_catalog)
        _show(plan, output_format)
        if plan.errors:
            raise SurveyctlError("the plan has errors; nothing was applied")
        if plan.has_changes and saved is None and not auto_approve:
            _confirm(environment.name)
        sync_lifecycle(plan, store)  # after the approval: a cancelled apply changes nothing
        if not plan.has_changes:
            return
        result = apply_plan(plan, ctx.client(), store, parallelism, _progress)
    _report(result)


def _saved_plan_path(target: tuple[Path, ...]) -> Path | None:
    """One argument that is a file but not YAML is a saved plan."""
    if len(target) == 1 and target[0].is_file() and target[0].suffix not in (".yaml", ".yml"):
        return target[0]
    return None


def _confirm(environment: str) -> None:
    if not sys.stdin.isatty():
        raise SurveyctlError(
            "apply asks before changing anything and there is no terminal to ask: pass "
            "--auto-approve, or apply a reviewed plan file"
        )
    answer = click.prompt(
        f"Apply these changes to environment {environment!r}? Only 'yes' will be accepted",
        default="",
        show_default=False,
    )
    if answer.strip() != "yes":
        raise SurveyctlError("apply cancelled; nothing was changed")


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
