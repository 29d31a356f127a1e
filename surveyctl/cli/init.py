"""`surveyctl init [FOLDER]`: a new survey repository, ready to validate, plan and run in CI."""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.cli.options import FilePath


@click.command("init")
@click.argument(
    "folder", required=False, default=".", type=FilePath(file_okay=False, path_type=Path)
)
def init_command(folder: Path) -> None:
    """Write surveyctl.yaml, a .gitignore for .surveyctl/, an example manifest and the CI
    workflows into FOLDER (default: the current one). Refuses to overwrite any file;
    an existing .gitignore gets the .surveyctl/ line appended.

    The manifests' JSON Schema goes to schemas/ for editors; production keeps its state in
    PostgreSQL, as the workflows expect.
    """
    from surveyctl.config import repository_root
    from surveyctl.errors import SurveyctlError
    from surveyctl.scaffold import SECRETS, state_schema, write_project
    from surveyctl.shellwords import path_word

    try:
        resolved = folder.resolve()
    except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError for a loop of links
        raise SurveyctlError(
            f"cannot write into {folder}: it is a symbolic link that leads back to itself "
            "(a loop of links)"
        ) from None
    for path, verb in write_project(folder):
        if verb == "kept":
            click.echo(f"kept {path}: it already ignores what surveyctl needs ignored")
        elif verb == "extended":
            click.echo(f"added .surveyctl/ to {path}")
        else:
            click.echo(f"wrote {path}")
    root = repository_root(resolved)
    if root is not None and root != resolved:
        # GitHub reads workflows only from the repository root's .github/workflows/.
        click.echo(
            f"surveyctl: warning: {folder} is inside the git repository at {root}, whose "
            "workflows GitHub reads from its own .github/workflows/ only: the workflows written "
            "here do not run until they are moved there (with paths and a working-directory "
            f"for {folder})",
            err=True,
        )
    key, dsn = SECRETS
    # validate and plan read the surveyctl.yaml of the current folder (or one above it): run
    # from here, they would not find the new project's.
    enter = "" if resolved == Path.cwd().resolve() else f"`cd {path_word(folder)}`, then "
    click.echo(
        f"Next: {enter}`surveyctl validate` and `surveyctl plan` (against the embedded "
        "sandbox); set the host of `production` in surveyctl.yaml, and before the workflows "
        f"run set the CI secrets {key} (the API key) and {dsn} (the PostgreSQL connection "
        f"string of the state, which surveyctl keeps in schema {state_schema(folder)}) and "
        "the repository variables SURVEYCTL_REPOSITORY and SURVEYCTL_REF (see "
        "docs/state.md of surveyctl to try PostgreSQL locally)."
        + (
            _NO_REPOSITORY.format(folder=path_word(folder) if enter else "This folder")
            if root is None
            else ""
        ),
        err=True,
    )


# Outside a repository surveyctl.yaml is looked for in the current folder only (config.py: a
# search up to / could find a stranger's), so a command run in surveys/ said "no surveyctl.yaml
# found" of a project made a moment before.
_NO_REPOSITORY = (
    " {folder} is in no git repository: run `git init` there, as surveyctl finds surveyctl.yaml "
    "from a sub-folder (surveys/) only inside one, and the workflows run only from one."
)
