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
    workflows into FOLDER (default: the current one). Refuses to overwrite any file."""
    from surveyctl.scaffold import write_project

    for path in write_project(folder):
        click.echo(f"wrote {path}")
    click.echo(
        "Next: `surveyctl validate` and `surveyctl plan` (against the embedded sandbox); set "
        "the host of `production` in surveyctl.yaml and its key as the CI secret "
        "SURVEYCTL_PRODUCTION_KEY before the workflows run.",
        err=True,
    )
