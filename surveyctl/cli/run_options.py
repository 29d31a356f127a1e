"""What `surveyctl plan` and `surveyctl apply` share: one bundle of run options
(`run_options`: --destroy, --refresh-only, --target, --parallelism, the --allow-... guard
overrides, --adopt and --allow-duplicate, --refresh-catalog, --offline), showing a plan in the
chosen format, and the listing of manifest errors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from surveyctl.cli.console import use_color
from surveyctl.cli.manifest_options import offline_option, refresh_option
from surveyctl.reconcile import choices
from surveyctl.reconcile.choices import DEFAULT_PARALLELISM, MAX_PARALLELISM

if TYPE_CHECKING:  # the workflow loads when a command runs, not for its --help
    from surveyctl.reconcile.plan import Plan
    from surveyctl.reconcile.run import RunOptions

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


def _target(verb: str):
    """--target, whose help says what the command does to the resource: plan or apply it."""
    return click.option(
        "--target",
        "target_addresses",
        multiple=True,
        metavar="ADDRESS",
        help=f"{verb} only this resource (Survey/NAME, ExclusionGroup/NAME or NAME; "
        "repeatable) and what it depends on (a group's surveys).",
    )


_parallelism = click.option(
    "--parallelism",
    default=DEFAULT_PARALLELISM,
    show_default=True,
    type=click.IntRange(1, MAX_PARALLELISM),
    metavar="N",
    help="Requests in flight at once.",
)


_OVERRIDE_HELP = {
    choices.SPEND_INCREASE: "Let a plan over the environment's max_spend_increase through.",
    choices.DESTROY: "Let a plan over the environment's max_destroy through.",
    choices.LARGE_CHANGE: "Let a plan over the environment's max_changed_percent through.",
}


def _override_options(command):
    """--allow-spend-increase, --allow-destroy, --allow-large-change (see docs/safety.md)."""
    for override in reversed(choices.OVERRIDES):
        name = "allow_" + override.replace("-", "_")
        option = click.option(
            choices.flag(override), name, is_flag=True, help=_OVERRIDE_HELP[override]
        )
        command = option(command)
    return command


def _identity_options(command):
    """--adopt and --allow-duplicate: what a plan does with a create whose resource exists on
    the service already (docs/state.md, Identity); a saved plan records them."""
    command = click.option(
        "--allow-duplicate",
        "allow_duplicate",
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


def warn(message: str) -> None:
    """What a run says before its plan (an empty state), on stderr."""
    from surveyctl.cli.context import suggesting

    click.echo(suggesting(f"surveyctl: warning: {message}"), err=True)


@dataclass(frozen=True)
class RunChoices:
    """What the options of the bundle chose, handed to the command as one `run` argument."""

    destroy: bool
    refresh_only: bool
    target_addresses: tuple[str, ...]
    parallelism: int
    overrides: frozenset[str]
    refresh_catalog: bool
    offline: bool

    def options(self, targets: tuple[Path, ...], **more: Any) -> RunOptions:
        """The RunOptions of these choices, with what the command adds (apply's approval)."""
        from surveyctl.reconcile.run import RunOptions

        return RunOptions(
            targets=targets,
            destroy=self.destroy,
            parallelism=self.parallelism,
            refresh_only=self.refresh_only,
            target_addresses=self.target_addresses,
            overrides=self.overrides,
            **more,
        )


def apply_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`run_options` of apply, whose --target applies rather than plans."""
    return run_options(command, verb="Apply")


def run_options(command: Callable[..., Any], verb: str = "Plan") -> Callable[..., Any]:
    """The options plan and apply both take, in the order their help lists them; the command
    receives them as one `run: RunChoices`. `verb` is what the command does to a resource
    (Plan, Apply), as --target's help says it."""

    @functools.wraps(command)
    def collected(*args: Any, **kwargs: Any) -> Any:
        from surveyctl.reconcile import identity  # with the workflow, not for --help

        allow = {name: kwargs.pop(name) for name in list(kwargs) if name.startswith("allow_")}
        # The identity options are recorded in a saved plan with the guard overrides.
        chosen = {o for o in choices.OVERRIDES if allow["allow_" + o.replace("-", "_")]}
        if allow["allow_duplicate"]:
            chosen.add(identity.DUPLICATE)
        if kwargs.pop("adopt"):
            chosen.add(identity.ADOPT)
        run = RunChoices(
            destroy=kwargs.pop("destroy"),
            refresh_only=kwargs.pop("refresh_only"),
            target_addresses=kwargs.pop("target_addresses"),
            parallelism=kwargs.pop("parallelism"),
            overrides=frozenset(chosen),
            refresh_catalog=kwargs.pop("refresh_catalog"),
            offline=kwargs.pop("offline"),
        )
        return command(*args, run=run, **kwargs)

    bundle = (
        _destroy,
        _refresh_only,
        _target(verb),
        _parallelism,
        _override_options,
        _identity_options,
        refresh_option,
        offline_option,
    )
    for option in reversed(bundle):
        collected = option(collected)
    return collected


def render_plan(plan: Plan, output_format: str) -> str:
    """The plan in `output_format` (text is coloured only where `use_color` says)."""
    from surveyctl.cli.context import suggesting
    from surveyctl.render import formats  # the renderers load when a plan is shown

    shown = formats.get(output_format).plan(plan, use_color())
    return suggesting(shown, json_string=output_format == "json")


def show_plan(plan: Plan, output_format: str) -> None:
    click.echo(render_plan(plan, output_format), nl=False)


def reporting_manifest_errors(run):
    """Runs `run()`; manifest errors are listed on stderr before the one-line verdict."""
    from surveyctl.reconcile.plan_run import ManifestErrors

    try:
        return run()
    except ManifestErrors as exc:
        from surveyctl.render.values import printable_lines

        for diagnostic in exc.diagnostics:
            click.echo(printable_lines(str(diagnostic)), err=True)
        raise
