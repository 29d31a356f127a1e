"""`surveyctl state list|show|rm|mv` and `surveyctl force-unlock ID`: look at and repair state.

None of these calls the marketplace. `rm` and `mv` change only the local state file, under
the environment's lock; they are the way out after a manifest rename, a resource deleted by
hand, or a create interrupted between its POST and the state write. On a protected environment
they, and `force-unlock`, ask first (or need `--env NAME --yes` without a terminal).
"""

from __future__ import annotations

import json

import click

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.resources import address, check_name, split_address
from surveyctl.state import State, StateBackend, StateError

yes_option = click.option(
    "--yes", is_flag=True, help="Change the state without asking (a protected environment asks)."
)
lock_timeout_option = click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    metavar="SECONDS",
    help="Wait this long for another command's lock before giving up.",
)


def _store(ctx: CliContext) -> tuple[StateBackend, str]:
    return ctx.state_store(), ctx.environment().name


def _resolve(state: State, name: str, path: object) -> str:
    """An address from `Survey/x`, `ExclusionGroup/x`, or a bare name that is unambiguous."""
    known = state.addresses()
    if "/" in name:
        split_address(name)
        if name not in known:
            raise StateError(f"{name} is not in the state file {path}")
        return name
    matches = [candidate for candidate in known if candidate.split("/", 1)[1] == name]
    if not matches:
        raise StateError(f"no resource named {name!r} in the state file {path}")
    if len(matches) > 1:
        raise StateError(f"{name!r} is ambiguous in {path}; use one of {', '.join(matches)}")
    return matches[0]


def _target(old: str, new: str) -> str:
    """NEW as a full address; a bare name keeps OLD's kind."""
    kind = old.split("/", 1)[0]
    if "/" in new:
        kind, name = split_address(new)
    else:
        name = new
    return address(kind, check_name(name, "the new name"))


@click.group("state")
def state() -> None:
    """Show and repair the local state of the environment (no marketplace calls)."""


@state.command("list")
@pass_context
def list_command(ctx: CliContext) -> None:
    """List the resources in state with their service ids."""
    store, _ = _store(ctx)
    current = store.load()
    if not current.addresses():
        click.echo(f"No resources in {store.location}.", err=True)
    for resource_address in current.addresses():
        record = current.resources.get(resource_address)
        pending = current.pending_create(resource_address)
        parts = [resource_address]
        if record is not None:
            parts.append(record.ids())
        if pending is not None:
            parts.append(f"(unresolved create since {pending.started_at})")
        click.echo("  ".join(parts))


@state.command("show")
@click.argument("name")
@pass_context
def show_command(ctx: CliContext, name: str) -> None:
    """Print one resource of the state as JSON (NAME: Survey/x, ExclusionGroup/y or x)."""
    store, _ = _store(ctx)
    current = store.load()
    resource_address = _resolve(current, name, store.location)
    shown: dict = {"address": resource_address}
    record = current.resources.get(resource_address)
    if record is not None:
        shown.update(record.to_json())
    pending = current.pending_create(resource_address)
    if pending is not None:
        shown["unresolved_create"] = pending.to_json()
    click.echo(json.dumps(shown, indent=2, ensure_ascii=False))


def _confirm(ctx: CliContext, action: str, yes: bool) -> None:
    """The approval rule of every write: a protected environment's state is changed only
    after a question, or with --env NAME and --yes."""
    if not confirm_write(ctx, action, approved=yes):
        raise StateError("the state was not changed")


@state.command("rm")
@click.argument("name")
@lock_timeout_option
@yes_option
@pass_context
def rm_command(ctx: CliContext, name: str, lock_timeout: float, yes: bool) -> None:
    """Forget a resource, or an unresolved create, without touching the marketplace."""
    store, environment = _store(ctx)
    _confirm(ctx, f"remove {name} from the state of environment {environment!r}", yes)
    with store.locked("state rm", lock_timeout):
        resource_address = _resolve(store.load(), name, store.location)
        store.forget(resource_address)
    click.echo(
        f"Removed {resource_address} from the state of {environment}; the marketplace is unchanged."
    )


@state.command("mv")
@click.argument("old")
@click.argument("new")
@lock_timeout_option
@yes_option
@pass_context
def mv_command(ctx: CliContext, old: str, new: str, lock_timeout: float, yes: bool) -> None:
    """Rename a resource in state after renaming it in the manifests."""
    store, environment = _store(ctx)
    _confirm(ctx, f"move {old} to {new} in the state of environment {environment!r}", yes)
    with store.locked("state mv", lock_timeout):
        source = _resolve(store.load(), old, store.location)
        target = _target(source, new)
        store.move(source, target)
    click.echo(f"Moved {source} to {target} in the state of {environment}.")


@click.command("force-unlock")
@click.argument("lock_id", metavar="ID")
@yes_option
@pass_context
def force_unlock_command(ctx: CliContext, lock_id: str, yes: bool) -> None:
    """Remove the environment's state lock left by a command that did not finish.

    Only the lock with this ID is removed. Use it only when no command holding the lock is
    still running: two writers at once can lose changes to the state.
    """
    store, environment = _store(ctx)
    _confirm(ctx, f"remove the lock {lock_id} of environment {environment!r}", yes)
    holder = store.force_unlock(lock_id)
    click.echo(
        f"Removed the lock {holder.id} of {environment}, held by {holder.who} "
        f"(pid {holder.pid}) since {holder.created} for {holder.operation!r}."
    )
