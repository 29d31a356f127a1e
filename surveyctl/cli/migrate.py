"""`surveyctl state migrate --from BACKEND`: copy the environment's state from another backend
into the one surveyctl.yaml names.

The core is `surveyctl.state.migrate`; this module reads the --from backend's settings (as
surveyctl.yaml's would be read), asks by the approval rule of every state write, and says what
was copied and what became of the source. Kept apart from the other `state` commands because
it is the one that opens a second backend.
"""

from __future__ import annotations

import shlex

import click

from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.options import RegistryChoice, lock_timeout_option, yes_help
from surveyctl.errors import SurveyctlError
from surveyctl.state import StateError, open_state
from surveyctl.state import registry as backends
from surveyctl.state.migrate import migrate


@click.command("migrate")
@click.option(
    "--from",
    "source",
    type=RegistryChoice(lambda: backends.names()),
    required=True,
    help="The backend that holds the state now.",
)
@click.option(
    "--dsn-env",
    default="SURVEYCTL_STATE_DSN",
    show_default=True,
    metavar="VAR",
    help="With --from postgres: the variable holding the connection string.",
)
@click.option(
    "--schema",
    default="surveyctl",
    show_default=True,
    help="With --from postgres: the schema holding the state.",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="A `state:` setting of the --from backend (repeatable), as in surveyctl.yaml.",
)
@lock_timeout_option
@click.option("--yes", is_flag=True, help=yes_help("Change the state"))
@pass_context
def migrate_command(
    ctx: CliContext,
    source: str,
    dsn_env: str,
    schema: str,
    settings: tuple[str, ...],
    lock_timeout: float,
    yes: bool,
) -> None:
    """Copy the environment's state from another backend into the one surveyctl.yaml names.

    Change `state:` in surveyctl.yaml first, then copy: lineage, serial and history come
    along, so nothing is re-imported and saved plans stay valid. The source keeps what it
    holds; a state file copied from is marked as moved, and plan and apply refuse it from then
    on.
    """
    environment = ctx.environment()
    origin_settings = _source_settings(source, {"dsn_env": dsn_env, "schema": schema}, settings)
    origin = open_state(ctx.config(), environment, origin_settings)
    target = ctx.state_store()
    # Another place of the same backend is a copy too (PostgreSQL schema `surveyctl` into the
    # schema of the project's own); the same place, however named, is not.
    if origin.location == target.location:
        origin.close()
        raise SurveyctlError(
            f"environment {environment.name!r} already keeps its state in {target.location}: "
            "set the place to copy into with `state:` in surveyctl.yaml, and name the other "
            "with --from (and its settings)"
        )
    try:
        action = (
            f"copy the state of environment {environment.name!r} from {origin.location} into "
            f"{target.location}"
        )
        # The approval rule of every state write, as the other `state` commands ask it.
        if not confirm_write(ctx, action, approved=yes):
            raise StateError("the state was not changed")
        done = migrate(origin, target, lock_timeout, copy_back=_copy_back(environment))
    finally:
        origin.close()
    counts = (
        f"serial {done.state.serial}, {len(done.state.resources)} resource(s), "
        f"{len(done.state.journal)} unresolved create(s), {done.history} change(s) of history, "
        f"{done.status_changes} status change(s) added"
    )
    left = (
        f"The copy in {origin.location} is marked as moved: plan and apply refuse it from now on."
        if done.marked
        else f"The copy in {origin.location} is left as it was."
    )
    if not done.copied:
        click.echo(
            f"{target.location} already holds this state ({counts}); nothing to copy. {left}"
        )
        return
    click.echo(
        f"Copied the state of {environment.name} ({counts}) from {origin.location} to "
        f"{target.location}. {left}"
    )


def _copy_back(environment) -> str:
    """The `state migrate` that copies the state back from the backend surveyctl.yaml names
    now, with its settings, for the mark left on the source."""
    settings = environment.state
    words = ["surveyctl", "state", "migrate", "--from", settings.backend]
    options = {"dsn_env": "--dsn-env", "schema": "--schema"}
    for field in backends.get(settings.backend).fields:
        value = getattr(settings, field, None)
        if value is None:
            continue
        if field in options:
            words += [options[field], str(value)]
        else:
            words += ["--setting", f"{field}={value}"]
    return shlex.join([*words, "--env", environment.name])


def _source_settings(
    source: str, defaults: dict[str, str], given: tuple[str, ...]
) -> backends.BackendSettings:
    """The --from backend's settings: its KEY=VALUE settings, over the defaults of the options
    it takes (--dsn-env, --schema), checked by the backend as surveyctl.yaml's would be."""
    backend = backends.get(source)
    values: dict[str, str] = {"backend": source}
    values.update({key: value for key, value in defaults.items() if key in backend.fields})
    for setting in given:
        key, equals, value = setting.partition("=")
        if not equals or not key:
            # Not repeated: a connection string given here by mistake would be printed.
            raise SurveyctlError("--setting must be KEY=VALUE, such as --setting schema=ops")
        values[key.strip()] = value
    return backends.parse(backends.SettingsSpec(values, "state"))
