"""`surveyctl state list|show|history|rm|mv` and `surveyctl force-unlock ID`: look at, trace,
repair and move state; the `state` group's other commands live in modules of their own
(`rebuild`, `migrate`, `try-postgres`).

None of these calls the marketplace. `rm` and `mv` change only the state, under the
environment's lock; they are the way out after a manifest rename, a resource deleted by hand,
or a create interrupted between its POST and the state write. `history` and `show --serial`
answer "who changed this, when, and from what". On a protected environment `rm`, `mv`,
`migrate`, `rebuild` and `force-unlock` ask first (or need `--env NAME --yes` without a
terminal).
"""

from __future__ import annotations

import click

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import WholeSummaries, format_option, lock_timeout_option, yes_help
from surveyctl.jsontext import dumps
from surveyctl.render.values import printable
from surveyctl.resources import address, new_resource_name, split_address
from surveyctl.state import HistoryEntry, State, StateBackend, StateError
from surveyctl.suggest import suggest

yes_option = click.option("--yes", is_flag=True, help=yes_help("Change the state"))


def _store(ctx: CliContext) -> tuple[StateBackend, str]:
    return ctx.state_store(), ctx.environment().name


def _resolve(state: State, name: str, path: object) -> str:
    """An address from `Survey/x`, `ExclusionGroup/x`, or a bare name that is unambiguous."""
    return _resolve_among(state.addresses(), name, path)


def _resolve_among(known: list[str], name: str, path: object) -> str:
    if "/" in name:
        split_address(name)
        if name not in known:
            raise StateError(f"{name} is not in the state {path}{suggest(name, known)}")
        return name
    matches = [candidate for candidate in known if candidate.split("/", 1)[1] == name]
    if not matches:
        names = [candidate.split("/", 1)[1] for candidate in known]
        raise StateError(f"no resource named {name!r} in the state {path}{suggest(name, names)}")
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
    return address(kind, new_resource_name(name))


@click.group("state", cls=WholeSummaries)
def state() -> None:
    """Show and repair the state of the environment, in a file or PostgreSQL (only `rebuild`
    reads the marketplace)."""


@state.command("list")
@pass_context
def list_command(ctx: CliContext) -> None:
    """List the resources in state with their service ids."""
    store, _ = _store(ctx)
    current = store.load(verify=False)
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
@click.argument("name", required=False)
@click.option(
    "--serial",
    type=click.IntRange(min=0),
    metavar="N",
    help="Show the state as it was right after the write with serial N (see `state history`).",
)
@pass_context
def show_command(ctx: CliContext, name: str | None, serial: int | None) -> None:
    """Print one resource of the state as JSON, or the whole state without NAME.

    NAME is Survey/x, ExclusionGroup/y or x (when only one kind has that name).
    """
    store, _ = _store(ctx)
    current = store.load(verify=False)
    if serial is not None:
        current = store.state_at(serial)
    if name is None:
        click.echo(dumps(current.to_json()))
        return
    where = store.location if serial is None else f"{store.location} at serial {serial}"
    resource_address = _resolve(current, name, where)
    shown: dict = {"address": resource_address}
    record = current.resources.get(resource_address)
    if record is not None:
        shown.update(record.to_json())
    pending = current.pending_create(resource_address)
    if pending is not None:
        shown["unresolved_create"] = pending.to_json()
    click.echo(dumps(shown))


@state.command("history")
@click.argument("name", required=False)
@format_option("text", "json", help="json adds each change's before and after.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="Only the last N changes.")
@pass_context
def history_command(
    ctx: CliContext, name: str | None, output_format: str, limit: int | None
) -> None:
    """List the changes of the state, or of one resource: serial, time, who, command, what.

    NAME may be a resource that is no longer in the state (to see who removed it), or the id of
    a survey, also one the state does not manage: its status changes, and the writes of the
    address that recorded it. The surveys moved by `status` and the final statuses set by
    `transactions set-status` are listed too.
    """
    store, _ = _store(ctx)
    current = store.load(verify=False)
    what = "the state"
    if name is None:
        entries = store.history()
    elif "/" in name and name in current.addresses():
        what = name  # a resource the state manages: its own history is all that is read
        entries = store.history(name)
    else:
        entries, what = _history_of(store.history(), current, name, store.location)
    if limit is not None:
        entries = entries[-limit:]
    if output_format == "json":
        click.echo(dumps([e.to_json() for e in entries]))
        return
    if not entries:
        click.echo(f"No changes of {what} recorded in {store.location}.", err=True)
        return
    for line in _history_table(entries):
        click.echo(line)


def _history_of(
    entries: list[HistoryEntry], current: State, name: str, where: str
) -> tuple[list[HistoryEntry], str]:
    """The entries of the history about NAME, and what NAME names: an address the state or its
    history knows, else (NAME all digits) the survey with that id."""
    recorded = {e.address for e in entries if e.address is not None}
    known = sorted(set(current.addresses()) | recorded)
    if name.isascii() and name.isdigit() and name not in {a.split("/", 1)[1] for a in known}:
        survey_id = int(name)
        about = [e for e in entries if e.concerns_survey(survey_id)]
        if not about:
            raise StateError(
                f"no resource named {name!r} in the state {where}, and no survey {survey_id} "
                "in its history"
            )
        return about, f"survey {survey_id}"
    resource_address = _resolve_among(known, name, where)
    return [e for e in entries if e.address == resource_address], resource_address


def _history_table(entries: list[HistoryEntry]) -> list[str]:
    rows: list[tuple[str, ...]] = [("SERIAL", "WHEN", "WHO", "COMMAND", "ADDRESS", "CHANGE")]
    rows += [_history_row(e) for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[5]])
        for row in rows
    ]


def _history_row(entry: HistoryEntry) -> tuple[str, ...]:
    # Every cell made printable: who comes from $SURVEYCTL_ACTOR or the OS user name, where a
    # line break would print a row of its own (a change that never was) and an escape code
    # would act on the terminal.
    # A status set on the marketplace wrote no state: no serial of its own, and no address
    # when the state does not manage its survey (its change names the survey).
    serial = "-" if entry.status is not None else str(entry.serial)
    cells = (serial, entry.at, entry.who, entry.command, entry.address or "-", entry.summary)
    return tuple(printable(cell) for cell in cells)


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
        resource_address = _resolve(ctx.placed_state(store, verify=False), name, store.location)
        store.forget(resource_address)
    click.echo(
        f"Removed {resource_address} from the state of {environment}; the marketplace is unchanged."
    )


@state.command("mv")
@click.argument("old")
@click.argument("new")
@click.option(
    "--program",
    "whole_program",
    is_flag=True,
    help="OLD and NEW are program names: move the members of program OLD (each market and "
    "wave) to program NEW in one state write; exclusion groups whose reference has OLD in it "
    "stay, as the renamed program makes new ones.",
)
@lock_timeout_option
@yes_option
@pass_context
def mv_command(
    ctx: CliContext, old: str, new: str, whole_program: bool, lock_timeout: float, yes: bool
) -> None:
    """Rename a resource in state after renaming it in the manifests.

    NEW may be a bare name (the kind stays) or a program member's name,
    'Survey/acme-tracker[de_DE,2026-09]'. After renaming a SurveyProgram, `--program OLD NEW`
    moves all its members at once.
    """
    store, environment = _store(ctx)
    if whole_program:
        _confirm(
            ctx,
            f"move every member of program {old} to program {new} in the state of environment "
            f"{environment!r}",
            yes,
        )
        with store.locked("state mv", lock_timeout):
            ctx.placed_state(store, verify=False)
            moves, left = store.move_program(old, new)
        click.echo(
            f"Moved {len(moves)} resource(s) of program {old} to program {new} in the state "
            f"of {environment}:"
        )
        for source, target in moves:
            click.echo(f"  {source} -> {target}")
        for group in left:
            click.echo(
                f"Left {group} where it is: its reference has {old!r} in it, so the renamed "
                "program most likely names a new group, which the plan creates (if it names a "
                "`state mv` for it instead, run that)."
            )
        return
    _confirm(ctx, f"move {old} to {new} in the state of environment {environment!r}", yes)
    with store.locked("state mv", lock_timeout):
        source = _resolve(ctx.placed_state(store, verify=False), old, store.location)
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
        printable(
            f"Removed the lock {holder.id} of {environment}, held by {holder.who} "
            f"(pid {holder.pid}) since {holder.created} for {holder.operation!r}."
        )
    )


def _register_commands() -> None:
    """The `state` commands of their own modules: `rebuild` reads the service, `migrate` opens
    a second backend, `try-postgres` runs a server."""
    from surveyctl.cli.migrate import migrate_command
    from surveyctl.cli.rebuild import rebuild_command
    from surveyctl.cli.try_postgres import try_postgres_command

    for command in (rebuild_command, migrate_command, try_postgres_command):
        state.add_command(command)


_register_commands()
