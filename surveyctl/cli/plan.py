"""`surveyctl plan`: what a change will do; writes nothing.

The workflow lives in `surveyctl.reconcile.plan_run`; this module turns options into RunOptions,
shows the plan, saves it and sets the exit code (`surveyctl.cli.apply` does the same for apply;
the options both take are in `surveyctl.cli.run_options`).
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from surveyctl.cli.context import CliContext, pass_context, suggesting
from surveyctl.cli.options import PLAN_FORMATS, FilePath, output_format_option
from surveyctl.cli.progress import Steps, settle_spared_reads
from surveyctl.cli.run_options import (
    RunChoices,
    reporting_manifest_errors,
    run_options,
    show_plan,
    warn,
)
from surveyctl.errors import SurveyctlError
from surveyctl.render import formats


def check_plan_out(out: Path) -> None:
    """Refuses a --out that would overwrite something that is not a plan (a manifest, most
    likely), or that a plan would read as a manifest (a .yaml name)."""
    from surveyctl.reconcile.planfile import MAGIC  # a command's import, not --help's

    if out.suffix in (".yaml", ".yml"):
        raise click.UsageError(
            f"--out {out}: a plan file named .yaml would be read as a manifest; name it "
            "for example change.plan"
        )
    if out.is_file():
        with open(out, "rb") as handle:
            head = handle.read(1024)
        if MAGIC.encode() not in head:
            raise click.UsageError(f"--out {out} exists and is not a plan file; choose another")


@contextmanager
def _failure_shown(ctx: CliContext, output_format: str):
    """A plan that cannot be made still prints what failed in a format that says so (markdown:
    a comment for the pull request; json: one document a program can parse), on stdout; the
    error then ends the command with exit 1."""
    try:
        yield
    except SurveyctlError as exc:
        from surveyctl.reconcile.plan_run import ManifestErrors

        failure = formats.get(output_format).failure
        if failure is not None:
            findings = exc.diagnostics if isinstance(exc, ManifestErrors) else []
            shown = failure(_environment_name(ctx), str(exc), findings)
            click.echo(suggesting(shown, json_string=output_format == "json"), nl=False)
        raise


def _environment_name(ctx: CliContext) -> str:
    try:
        return ctx.environment().name
    except SurveyctlError:  # the configuration itself is what failed
        return ctx.env_name or "unknown"


@click.command("plan")
@click.argument("paths", nargs=-1, type=FilePath(path_type=Path))
@output_format_option(help=PLAN_FORMATS)
@click.option(
    "--out",
    "--output",
    "out",
    type=FilePath(path_type=Path),
    metavar="FILE",
    help="Save the plan for `surveyctl apply FILE`.",
)
@click.option(
    "--detailed-exitcode", is_flag=True, help="Exit 0 with no changes, 2 with changes, 1 on error."
)
@click.option(
    "--refresh",
    "refresh",
    type=click.BOOL,
    default="true",  # shown as it is typed (`--refresh=false`), not as Python's True
    show_default=True,
    metavar="true|false",
    help="--refresh=false plans against the state alone: no survey is read, so changes made "
    "on the service since the last apply are not seen (such a plan cannot be saved).",
)
@run_options
@pass_context
def plan_command(
    ctx: CliContext,
    paths,
    output_format,
    out,
    detailed_exitcode,
    refresh: bool,
    run: RunChoices,
) -> None:
    """Show what apply would change in the live surveys; writes nothing.

    Without PATHS the `manifests:` of surveyctl.yaml are read. A plan over the environment's
    guards is an error unless the named --allow-... option is given; a saved plan keeps them.
    """
    if run.refresh_only and (out is not None or run.destroy):
        raise click.UsageError("--refresh-only cannot be combined with --out or --destroy")
    if not refresh and (out is not None or run.refresh_only):
        raise click.UsageError(
            "--refresh=false cannot be combined with --out or --refresh-only: apply reads every "
            "survey it writes"
        )
    if out is not None and run.target_addresses:
        raise click.UsageError(
            "--out cannot be combined with --target: a saved plan is applied whole, so a plan of "
            "some resources could never be applied; save a plan without --target"
        )
    if out is not None:
        from surveyctl.safety import check_output_path  # files and tempfile: not for --help

        check_output_path(out, "--out")
        check_plan_out(out)
    # The workflow is imported here, when the command runs: `plan --help` need not load it.
    from surveyctl.reconcile.apply import unattempted
    from surveyctl.reconcile.plan_run import plan_run
    from surveyctl.reconcile.planfile import save_plan
    from surveyctl.variables import plan_signing_key

    options = dataclasses.replace(run.options(paths), refresh=refresh)
    reading = Steps("read")
    with _failure_shown(ctx, output_format):
        workspace = ctx.workspace(options, refresh_catalog=run.refresh_catalog, offline=run.offline)
        workspace.on_read = reading.step
        workspace.on_warning = warn
        try:
            plan = reporting_manifest_errors(lambda: plan_run(workspace, options))
            if refresh:  # --refresh=false spares reads for another reason
                settle_spared_reads(reading)
        finally:
            reading.close()
    show_plan(plan, output_format)
    if out is not None:
        key = plan_signing_key()
        save_plan(plan, out, key)
        saved = f"Saved the plan to {out}; {_how_to_apply(plan, out, key)}."
        click.echo(suggesting(saved), err=True)
    if plan.errors or unattempted(plan):  # an error, or a resource it could not plan
        click.get_current_context().exit(1)
    pending = plan.has_changes or plan.refreshed or plan.recovered or plan.unrecorded
    if detailed_exitcode and pending:
        click.get_current_context().exit(2)


def _how_to_apply(plan: Any, out: Path, key: bytes | None) -> str:
    """The apply of a saved plan, or why there is none: a plan with errors is refused; one
    that deletes is confirmed with --destroy; an unsigned one is applied with the overrides
    it was made with given again (they come from apply's command line, reconcile.tamper)."""
    from surveyctl.reconcile.choices import flag
    from surveyctl.shellwords import path_word

    if plan.errors:
        return "it has errors, and apply refuses it until they are fixed and it is made again"
    again = "" if key else "".join(f" {flag(o)}" for o in sorted(plan.overrides))
    destroy = " --destroy" if plan.counts()["destroy"] else ""
    # The file as a shell reads it: ./--format, not --format, which apply takes for its option.
    return f"apply it with `surveyctl apply {path_word(out)}{again}{destroy}`"
