"""`surveyctl import` and `import-group`: adopt live resources into manifests and state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from surveyctl.api import ApiClient
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.errors import SurveyctlError
from surveyctl.files import write_atomically
from surveyctl.reconcile.importer import Adoption, adopt_group, adopt_survey, record_adoption
from surveyctl.state import State

_name = click.option("--name", help="Manifest name for it (lowercase letters, digits, dashes).")
_out = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the manifest to this file and record the resource in state "
    "(without it the manifest is only printed).",
)


def _adopt(
    ctx: CliContext,
    adopt: Callable[[ApiClient, State], Adoption],
    out: Path | None,
    command: str,
) -> None:
    """Reads the live resource under the state lock; with `out`, writes its manifest and then
    records it (the file is removed again if the state cannot be written), so a resource is
    never in state without a manifest; without `out`, prints the manifest and records nothing,
    unless the import resolves a create left unresolved in the journal."""
    if out is not None and out.exists():
        raise SurveyctlError(f"{out} exists already; choose another --out")
    store = ctx.state_store()
    with store.locked("import"):
        state = store.load()
        adoption = adopt(ctx.client(), state)
        if out is not None:
            write_atomically(out, adoption.text)
            try:
                record_adoption(store, adoption)
            except BaseException:
                out.unlink(missing_ok=True)
                raise
            click.echo(f"Wrote {out} and recorded {adoption.address}.", err=True)
            return
        journaled = state.pending_create(adoption.address)
        click.echo(adoption.text, nl=False)
        if journaled is not None:
            record_adoption(store, adoption)
            click.echo(
                f"Recorded {adoption.address}: it resolves the create journaled at "
                f"{journaled.started_at}, whose manifest you have.",
                err=True,
            )
            return
    click.echo(
        f"Nothing was recorded in the state: without --out there is no manifest for "
        f"{adoption.address}, and `plan --destroy` would delete a resource it does not "
        f"describe. To adopt it, run `surveyctl {command} --out FILE`.",
        err=True,
    )


@click.command("import")
@click.argument("survey_id", type=int)
@_name
@_out
@pass_context
def import_command(ctx: CliContext, survey_id: int, name: str | None, out: Path | None) -> None:
    """Adopt live survey SURVEY_ID: write its manifest and record it in state.

    \b
    surveyctl import 10001 --name old-tracker --out manifests/old-tracker.yaml
    """
    if not name:
        raise click.UsageError("give the manifest a name with --name NAME")
    _adopt(
        ctx,
        lambda client, state: adopt_survey(client, state, survey_id, name),
        out,
        f"import {survey_id} --name {name}",
    )


@click.command("import-group")
@click.argument("ref")
@click.option("--name", required=True, help="Manifest name for it (lowercase, dashes).")
@_out
@pass_context
def import_group_command(ctx: CliContext, ref: str, name: str, out: Path | None) -> None:
    """Adopt live exclusion group REF (its surveys must be managed already)."""
    _adopt(
        ctx,
        lambda client, state: adopt_group(client, state, ref, name),
        out,
        f"import-group {ref} --name {name}",
    )
