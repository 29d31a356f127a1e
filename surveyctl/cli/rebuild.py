"""`surveyctl state rebuild`: record what exists on the service for the manifests, by identity.

The core is `surveyctl.reconcile.rebuild`; this module loads the manifests, shows the result
as a plan, asks by the approval rule of every state write, and records.
"""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.cli import confirm
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context, suggesting
from surveyctl.cli.options import FilePath, format_option, lock_timeout_option, yes_help
from surveyctl.errors import SurveyctlError
from surveyctl.jsontext import dumps
from surveyctl.reconcile import rebuild as rebuilding
from surveyctl.reconcile.identity import Rule, Twin
from surveyctl.resources import split_address


def _twins(twins: list[Twin]) -> str:
    return ", ".join(t.shown() for t in twins)


def render(result: rebuilding.Rebuild, environment: str, location: str) -> str:
    """The rebuild as a plan for people: one line per manifest, then the counts."""
    lines = [f"State rebuild of environment {environment!r} ({location}):"]
    for address, twin in sorted(result.adopt.items()):
        lines.append(f"  + {address}: adopt {twin.shown()} ({twin.why})")
    for address, twins in sorted(result.ambiguous.items()):
        name = split_address(address)[1]
        lines.append(
            f"  ? {address}: ambiguous, {_twins(twins)}; adopt the right one with "
            f"`surveyctl import ID --name {name}`"
        )
    for address, earlier in sorted(result.not_found.items()):
        closed = f" (closed, taken as earlier waves: {_twins(earlier)})" if earlier else ""
        lines.append(f"  - {address}: not found on the service{closed}; apply creates it")
    for address, problem in sorted(result.problems.items()):
        lines.append(f"  ! {address}: {problem}")
    for address, record in sorted(result.in_state.items()):
        lines.append(f"  = {address}: already in state ({record.ids()})")
    lines.append(
        f"Rebuild: {len(result.adopt)} to adopt, {len(result.ambiguous)} ambiguous, "
        f"{len(result.not_found)} not found, {len(result.in_state)} already in state"
        + (f", {len(result.problems)} to look at" if result.problems else "")
        + "."
    )
    return "\n".join(lines) + "\n"


def _as_json(result: rebuilding.Rebuild) -> str:
    def twins(items: list[Twin]) -> list[dict]:
        return [{"id": t.remote_id, "why": t.why, "status": t.status} for t in items]

    document = {
        "adopt": {a: twins([t])[0] for a, t in result.adopt.items()},
        "ambiguous": {a: twins(t) for a, t in result.ambiguous.items()},
        "not_found": {a: twins(t) for a, t in result.not_found.items()},
        "in_state": {a: r.to_json() for a, r in result.in_state.items()},
        "problems": result.problems,
    }
    return dumps(document, sort_keys=True) + "\n"


@click.command("rebuild")
@click.argument("paths", nargs=-1, type=FilePath(path_type=Path))
@format_option("text", "json")
@click.option("--yes", is_flag=True, help=yes_help("Record"))
@lock_timeout_option
@pass_context
def rebuild_command(
    ctx: CliContext, paths: tuple[Path, ...], output_format: str, yes: bool, lock_timeout: float
) -> None:
    """Record in the state what exists on the service for the manifests (by identity).

    Each manifest the state does not record is looked for on the service by the environment's
    identity rule (docs/state.md): one match is adopted, several are left for `surveyctl
    import`, none means the next apply creates it. Without PATHS the `manifests:` of
    surveyctl.yaml are read.
    """
    from surveyctl.reconcile.plan_run import desired_state
    from surveyctl.reconcile.run import RunOptions

    environment = ctx.environment()
    ctx.announce()
    if not confirm.terminal():
        # Without a terminal no finding can make the write allowed on a protected environment
        # not named with --env and approved, so it is refused before the service is read.
        action = f"record adopted resources in the state of environment {environment.name!r}"
        confirm_write(ctx, action, approved=yes, can_ask=False)
    options = RunOptions(targets=paths)
    workspace = ctx.workspace(options)
    store = workspace.state
    desired = desired_state(workspace, options)
    with store.locked("state rebuild", lock_timeout):
        found = rebuilding.find(
            ctx.client(), desired, ctx.placed_state(store), Rule.of(environment)
        )
        shown = (
            _as_json(found)
            if output_format == "json"
            else render(found, environment.name, store.location)
        )
        click.echo(suggesting(shown, json_string=output_format == "json"), nl=False)
        if found.adopt:
            action = (
                f"record {len(found.adopt)} adopted resource(s) in the state of environment "
                f"{environment.name!r}"
            )
            if not confirm_write(ctx, action, approved=yes):
                raise SurveyctlError("nothing was recorded")
            count = rebuilding.record(store, found)
            click.echo(
                suggesting(
                    f"Recorded {count} resource(s) in {store.location}; run `surveyctl plan` "
                    "to see how they compare with the manifests."
                ),
                err=True,
            )
    if not found.settled:
        click.get_current_context().exit(1)
