"""`surveyctl import` and `import-group`: adopt live resources into manifests and state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from surveyctl.api import ApiClient
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.importer import import_group, import_survey, manifest_yaml
from surveyctl.safety import check_output_path
from surveyctl.state import StateBackend

_name = click.option("--name", required=True, help="Manifest name for it (lowercase, dashes).")
_out = click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write the manifest to this file (default: print it).",
)


_yes = click.option(
    "--yes", is_flag=True, help="Import without asking (a protected environment asks)."
)


def _adopt(
    ctx: CliContext,
    adopt: Callable[[ApiClient, StateBackend], dict],
    out: Path | None,
    source: str,
    yes: bool,
) -> None:
    """Runs `adopt` under the state lock, then writes (or prints) the manifest it returns."""
    if out is not None and out.exists():
        raise SurveyctlError(f"{out} exists already; choose another --out")
    if out is not None:
        check_output_path(out, "--out", make_folders=True)
    action = f"import {source} into the state of environment {ctx.environment().name!r}"
    if not confirm_write(ctx, action, approved=yes):
        raise SurveyctlError(f"{source} was not imported")
    store = ctx.state_store()
    with store.locked("import"):
        manifest = adopt(ctx.client(), store)
    text = manifest_yaml(manifest, source)
    if out is None:
        click.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {out}.", err=True)


@click.command("import")
@click.argument("survey_id", type=int)
@_name
@_out
@_yes
@pass_context
def import_command(ctx: CliContext, survey_id: int, name: str, out: Path | None, yes: bool) -> None:
    """Adopt live survey SURVEY_ID: write its manifest and record it in state."""
    _adopt(
        ctx,
        lambda client, store: import_survey(client, store, survey_id, name),
        out,
        f"survey {survey_id}",
        yes,
    )


@click.command("import-group")
@click.argument("ref")
@_name
@_out
@_yes
@pass_context
def import_group_command(ctx: CliContext, ref: str, name: str, out: Path | None, yes: bool) -> None:
    """Adopt live exclusion group REF (its surveys must be managed already)."""
    _adopt(
        ctx,
        lambda client, store: import_group(client, store, ref, name),
        out,
        f"exclusion group {ref}",
        yes,
    )
