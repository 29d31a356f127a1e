"""`surveyctl apply`: doing exactly what the plan shows, then saying what was done.

The workflow lives in `surveyctl.reconcile.apply_run`; this module turns options into RunOptions,
shows the plan, asks on the terminal, reports in the chosen format and sets the exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from surveyctl.cli import confirm
from surveyctl.cli.console import use_color
from surveyctl.cli.context import CliContext, pass_context, suggesting
from surveyctl.cli.options import (
    FilePath,
    lock_timeout_option,
    output_format_option,
    yes_help,
)
from surveyctl.cli.progress import Steps, settle_spared_reads
from surveyctl.cli.run_options import (
    RunChoices,
    apply_run_options,
    reporting_manifest_errors,
    show_plan,
    warn,
)
from surveyctl.render import formats
from surveyctl.render import text as render_text
from surveyctl.render.report import ApplyReport
from surveyctl.signals import tell_from_handler

if TYPE_CHECKING:
    from surveyctl.reconcile.apply import Outcome
    from surveyctl.reconcile.plan import Plan


@click.command("apply")
# Named as the docs name it: "TARGET" read as the --target option, which chooses resources.
@click.argument("target", nargs=-1, type=FilePath(path_type=Path), metavar="[PATHS]... | PLANFILE")
@click.option(
    "--auto-approve",
    "--yes",
    "auto_approve",
    is_flag=True,
    help=yes_help("Apply", always_asks=True),
)
@lock_timeout_option
@output_format_option(
    for_apply=True,
    help="text: the plan, then what was done. json: the plan as text on stderr, then one "
    "JSON report on stdout (what was done, failed or not attempted, with ids).",
)
@apply_run_options
@click.option(
    "--allow-local-state",
    "local_state",  # not allow_...: run_options takes those as guard overrides
    is_flag=True,
    help="Under CI=true, apply to a protected environment from an empty local state file.",
)
@pass_context
def apply_command(
    ctx: CliContext,
    target,
    auto_approve,
    lock_timeout,
    output_format,
    run: RunChoices,
    local_state: bool,
) -> None:
    """Apply the manifests (or a plan saved by `plan --out FILE`) to the environment.

    PATHS are manifest files or folders (default: `manifests:` of surveyctl.yaml); PLANFILE is
    one saved plan file, which is applied when a fresh plan of its manifests agrees with it
    (with the --allow-... overrides it was planned with, given again unless the plan is
    signed), and refused otherwise (deletes in it need --destroy; with $SURVEYCTL_PLAN_KEY
    set, only plans signed with that key are applied).
    """
    if run.refresh_only and run.destroy:
        raise click.UsageError("--refresh-only cannot be combined with --destroy")
    # The workflow is imported here, when the command runs: `apply --help` need not load it.
    from surveyctl.reconcile.apply import ApplyResult
    from surveyctl.reconcile.apply_run import apply_run
    from surveyctl.reconcile.run import ApplyHooks
    from surveyctl.reconcile.saved_plan import saved_plan_path

    options = run.options(
        target,
        lock_timeout=lock_timeout,
        auto_approve=auto_approve,
        env_named=ctx.env_named,
        allow_local_state=local_state,
    )
    _check_targets_exist(target)
    if run.target_addresses and saved_plan_path(options.targets) is not None:
        raise click.UsageError("--target chooses from manifests; a saved plan is applied whole")
    reading, writing = Steps("read"), Steps("apply")

    output = formats.get(output_format)

    def show(plan: Plan) -> None:
        settle_spared_reads(reading)
        reading.close()  # the bar of the reads goes before the plan is shown
        writing.total = sum(1 for resource in plan.resources if resource.is_change)
        if output.report_holds_plan:  # stdout holds the report alone
            click.echo(suggesting(render_text.render(plan, color=use_color())), nl=False, err=True)
        else:
            show_plan(plan, output_format)

    ask = _confirm_refresh if run.refresh_only else _confirm
    hooks = ApplyHooks(
        show=show,
        confirm=ask if confirm.terminal() else None,
        on_outcome=lambda outcome: _progress(writing, outcome),
        on_interrupt=_interrupted,
    )
    if hooks.confirm is None:
        saved = saved_plan_path(options.targets) is not None
        confirm.refuse_unapprovable(ctx, auto_approve or saved)
    workspace = ctx.workspace(options, refresh_catalog=run.refresh_catalog, offline=run.offline)
    workspace.on_read = reading.step
    workspace.on_warning = warn
    try:
        applied = reporting_manifest_errors(lambda: apply_run(workspace, options, hooks))
    finally:
        reading.close()
        writing.close()
    report = ApplyReport(
        applied.plan,
        applied.result or ApplyResult(),
        workspace.state.current(),
        refreshed=applied.refreshed or None,
    )
    assert output.apply is not None  # the option offers only formats with a report
    shown = output.apply(report, use_color())
    click.echo(suggesting(shown, json_string=output.name == "json"), nl=False)
    if report.verdict in ("incomplete", "interrupted"):
        result = report.result
        click.get_current_context().exit(result.exit_code if result.interrupted else 1)


def _check_targets_exist(targets: tuple[Path, ...]) -> None:
    """A path that does not exist is refused first, in one sentence. In CI it is most often
    the plan artifact of the pull request's job that was not downloaded: taken for manifests,
    it would be refused as an unapproved apply ("pass --auto-approve") or as manifest errors,
    which send the reader the wrong way."""
    from surveyctl.errors import SurveyctlError
    from surveyctl.reconcile.saved_plan import looks_like_plan

    missing = [str(path) for path in targets if not path.exists()]
    if missing:
        verb = "does" if len(missing) == 1 else "do"
        raise SurveyctlError(
            f"{', '.join(missing)} {verb} not exist: apply takes one plan file saved by "
            "`surveyctl plan --out FILE`, or manifest files and folders"
        )
    # A plan file beside other targets would be read as a manifest, and its JSON reported as
    # a manifest error.
    # Each plan is named once, however often it was given: "a.plan, a.plan" read as two.
    plans = list(dict.fromkeys(p for p in targets if looks_like_plan(p)))
    if plans and len(targets) > 1:
        raise SurveyctlError(_plan_not_alone(plans, targets))


def _plan_not_alone(plans: list[Path], targets: tuple[Path, ...]) -> str:
    """Why a saved plan given with other targets (or again) is refused, and the command that
    applies it."""
    from surveyctl.shellwords import path_word

    alone = f"`surveyctl apply {path_word(plans[0])}`"
    if set(targets) == {plans[0]}:
        times = "twice" if len(targets) == 2 else f"{len(targets)} times"
        return f"{plans[0]} is named {times}: apply takes a saved plan once, alone: {alone}"
    if len(plans) == 1:
        return (
            f"{plans[0]} is a saved plan, which apply takes alone ({alone}), not with manifest "
            "files and folders"
        )
    return (
        f"{', '.join(map(str, plans))} are saved plans: apply takes one plan alone ({alone}), "
        "or manifest files and folders"
    )


def _confirm(environment: str) -> bool:
    return confirm.typed_yes(f"Apply these changes to environment {environment!r}")


def _confirm_refresh(environment: str) -> bool:
    return confirm.typed_yes(
        f"Record these live values as last applied in the state of environment {environment!r}"
    )


def _progress(steps: Steps, outcome: Outcome) -> None:
    from surveyctl.reconcile.apply import HALTS, INTERRUPTED

    if outcome.message == INTERRUPTED or outcome.message in HALTS:
        return  # counted in the report; one line each would bury the writes that were done
    mark = {"done": "ok", "failed": "FAILED", "skipped": "skipped"}[outcome.status]
    steps.step(outcome.address, detail=f"{outcome.action} {mark} {outcome.message}".rstrip())


def _interrupted(signal_name: str, first: bool) -> None:
    """Told from inside the signal handler (`tell_from_handler`)."""
    tell_from_handler(
        f"\n{signal_name} received: the writes in flight finish and are recorded; "
        "nothing new is sent.\n"
        if first
        else f"{signal_name} received again: still finishing the writes in flight.\n"
    )
