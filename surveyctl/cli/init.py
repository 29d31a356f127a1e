"""`surveyctl init [FOLDER]`: a new survey repository, ready to validate, plan and run in CI."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("init")
@click.argument(
    "folder", required=False, default=".", type=click.Path(file_okay=False, path_type=Path)
)
def init_command(folder: Path) -> None:
    """Write surveyctl.yaml, a .gitignore for .surveyctl/, an example manifest and the CI
    workflows into FOLDER (default: the current one). Refuses to overwrite any file.

    The manifests' JSON Schema goes to schemas/ for editors; production keeps its state in
    PostgreSQL, as the workflows expect.
    """
    from surveyctl.scaffold import SECRETS, state_schema, write_project

    for path in write_project(folder):
        click.echo(f"wrote {path}")
    key, dsn = SECRETS
    click.echo(
        "Next: `surveyctl validate` and `surveyctl plan` (against the embedded sandbox); set "
        "the host of `production` in surveyctl.yaml, and before the workflows run set the CI "
        f"secrets {key} (the API key) and {dsn} (the PostgreSQL connection string of the "
        f"state, which surveyctl keeps in schema {state_schema(folder)}) and the repository "
        "variables SURVEYCTL_REPOSITORY and SURVEYCTL_REF (see "
        "docs/state.md of surveyctl to try PostgreSQL locally).",
        err=True,
    )
