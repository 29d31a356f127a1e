"""`surveyctl import` and `import-group`: adopt live resources into manifests and state."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from surveyctl.api import ApiClient
from surveyctl.cli import confirm
from surveyctl.cli.confirm import confirm_write
from surveyctl.cli.context import CliContext, pass_context, suggesting
from surveyctl.cli.import_forms import check_form, one_manifest_source
from surveyctl.cli.manifest_options import environment_catalog, project_desired
from surveyctl.cli.options import SURVEY_ID, FilePath, lock_timeout_option, yes_help
from surveyctl.cli.surveys import STATUS_HELP, statuses_option
from surveyctl.errors import SurveyctlError
from surveyctl.model import Survey
from surveyctl.reconcile import identity, kinds
from surveyctl.reconcile.discovery import Adopted, ProjectSurveys, adopt_unmanaged
from surveyctl.reconcile.importer import (
    Adoption,
    adopt_group,
    adopt_survey,
    as_described,
    record_adoption,
    save_adoption,
)
from surveyctl.reconcile.program_import import adopt_program
from surveyctl.resources import SURVEY, split_address
from surveyctl.safety import check_output_path
from surveyctl.state import State

_NAME_HELP = "Manifest name for it (lowercase letters, digits, dashes)."
_name = click.option("--name", help=_NAME_HELP)
_out = click.option(
    "--out",
    "--output",
    "out",
    type=FilePath(path_type=Path),
    metavar="FILE",
    help="Write the manifest to this file and record the resource in state "
    "(without it the manifest is only printed).",
)


def _manifests(holding: str):
    return click.option(
        "--manifests",
        "sources",
        multiple=True,
        type=FilePath(path_type=Path),
        help=f"Manifest file or folder holding {holding} "
        "(repeatable; default: the manifests: of surveyctl.yaml).",
    )


def _force(also: str = ""):
    return click.option(
        "--force",
        is_flag=True,
        help="Write outside the `manifests:` of surveyctl.yaml (a plan without PATHS will not "
        f"read it, and `plan --destroy` destroys what it records){also}.",
    )


_yes = click.option("--yes", is_flag=True, help=yes_help("Import"))


def _inside_manifests(ctx: CliContext, path: Path, option: str, what: str, force: bool) -> None:
    """Refuses (without `force`) to write a manifest where a plan without PATHS would not read
    it: the resource would be recorded in state but called "not in the manifests", and
    `plan --destroy` would destroy it."""
    config = ctx.config()
    if config.holds_manifest(path):
        return
    listed = ", ".join(config.manifests)
    consequence = (
        f"{path} is outside the manifests of {config.path.name if config.path else 'the project'}"
        f' ({listed}): a plan without PATHS would not read it, would call {what} "not in the '
        f'manifests", and `plan --destroy` would destroy it'
    )
    if not force:
        raise SurveyctlError(
            f"{consequence}; give {option} under {config.manifests[0]}, add it to `manifests:`, "
            "or add --force"
        )
    click.echo(f"surveyctl: warning: {consequence} (--force given).", err=True)


def _described(ctx: CliContext, resource_address: str, sources: tuple[Path, ...]) -> Any:
    """The manifest of `resource_address` among the project's manifests (`--manifests`, else
    the `manifests:` of surveyctl.yaml); None when there is none, no manifests are configured,
    or they do not load (then nothing is recorded without --out, as before)."""
    try:
        desired = project_desired(ctx, sources)
    except SurveyctlError:
        return None
    kind, name = split_address(resource_address)
    return kinds.get(kind).manifests(desired).get(name)


def _adopt(
    ctx: CliContext,
    adopt: Callable[[ApiClient, State], Adoption],
    out: Path | None,
    command: str,
    yes: bool,
    address: str = "",
    force: bool = False,
    described: Any = None,
    lock_timeout: float = 0.0,
) -> None:
    """Reads the live resource under the state lock; with `out`, writes its manifest and then
    records it (the file is removed again if the state cannot be written), so a resource is
    never in state without a manifest; without `out`, records it when its manifest exists
    (`described`, or a create left unresolved in the journal), else prints the manifest and
    records nothing."""
    # os.path: Path.exists() raises for a name too long, which check_output_path words below.
    if out is not None and os.path.exists(out):
        raise SurveyctlError(f"{out} exists already; choose another --out")
    if out is not None:
        _inside_manifests(ctx, out, "--out", address, force)
        check_output_path(out, "--out", make_folders=True)
    store = ctx.state_store()
    # Only an import that records the resource is a write to guard; resolving a create left
    # unresolved in the journal records it too.
    guarded = out is not None or described is not None or _resolves_a_create(store, address)
    if guarded:
        _confirm_record(ctx, command, yes)
    with store.locked("import", lock_timeout):
        state = ctx.placed_state(store)
        adoption = adopt(ctx.client(), state)
        if out is not None:
            save_adoption(store, adoption, out)
            click.echo(f"Wrote {out} and recorded {adoption.address}.", err=True)
            return
        if described is not None:
            _record_described(ctx, store, adoption, described, force)
            return
        journaled = state.pending_create(adoption.address)
        click.echo(adoption.text, nl=False)
        if journaled is not None:
            if not guarded:  # journaled by another command since it was looked at
                _confirm_record(ctx, command, yes)
            record_adoption(store, adoption)
            click.echo(
                f"Recorded {adoption.address}: it resolves the create journaled at "
                f"{journaled.started_at}, whose manifest you have.",
                err=True,
            )
            return
    click.echo(
        suggesting(
            f"Nothing was recorded in the state: without --out there is no manifest for "
            f"{adoption.address}, and `plan --destroy` would delete a resource it does not "
            f"describe. To adopt it, run `surveyctl {command} --out FILE`, or name the "
            "manifests that hold its manifest with --manifests PATH."
        ),
        err=True,
    )


@click.command("import")
@click.argument("survey_id", type=SURVEY_ID, required=False)
@_name
@_out
@click.option(
    "--all-unmanaged",
    is_flag=True,
    help="Adopt every survey of the account (of --status) that this environment does not "
    "manage, each into its own manifest in --out-dir.",
)
@click.option(
    "--out-dir",
    type=FilePath(file_okay=False, path_type=Path),
    help="Folder for the manifests of --all-unmanaged.",
)
@statuses_option("With --all-unmanaged: " + STATUS_HELP[0].lower() + STATUS_HELP[1:])
@click.option(
    "--program",
    metavar="NAME",
    help="Attach the account's surveys (and exclusion groups) to the members of SurveyProgram "
    "NAME: each member not yet managed takes the one survey with its title and locale (or its "
    "external_project_id, under that identity rule).",
)
@_manifests("the --program, or the manifest of --name")
@_force(", or record a survey whose title and locale are not its existing manifest's")
@lock_timeout_option
@_yes
@pass_context
def import_command(
    ctx: CliContext,
    survey_id: int | None,
    name: str | None,
    out: Path | None,
    all_unmanaged: bool,
    out_dir: Path | None,
    statuses: tuple[int, ...],
    program: str | None,
    sources: tuple[Path, ...],
    force: bool,
    lock_timeout: float,
    yes: bool,
) -> None:
    """Adopt live survey SURVEY_ID: write its manifest and record it in state.

    When the manifests already hold one named NAME, it is recorded as that manifest's survey.

    \b
    surveyctl import 10001 --name old-tracker --out manifests/old-tracker.yaml
    surveyctl import --all-unmanaged --out-dir manifests/imported [--status live,paused]
    surveyctl import --program brand-tracker [--manifests programs/]
    """
    check_form(survey_id, name, out, all_unmanaged, out_dir, program, sources, force)
    if program is not None:
        _adopt_program(ctx, program, sources, yes, lock_timeout)
        return
    if all_unmanaged:
        _inside_manifests(ctx, out_dir, "--out-dir", "each survey adopted", force)
        _adopt_all(ctx, out_dir, statuses, yes, lock_timeout)
        return
    described = None if out else _described(ctx, f"Survey/{name}", sources)
    _adopt(
        ctx,
        lambda client, state: adopt_survey(client, state, survey_id, name, described is not None),
        out,
        f"import {survey_id} --name {name}",
        yes,
        f"Survey/{name}",
        force,
        described,
        lock_timeout,
    )


def _resolves_a_create(store: Any, address: str) -> bool:
    """Whether the state holds a create of `address` whose answer was lost: importing the
    survey it made records it."""
    return bool(address) and store.load().pending_create(address) is not None


def _confirm_record(ctx: CliContext, command: str, yes: bool) -> None:
    """The approval rule of every state write, for an import that records what it reads."""
    action = f"record `{command}` in the state of environment {ctx.environment().name!r}"
    if not confirm_write(ctx, action, approved=yes):
        raise SurveyctlError("nothing was imported")


def _record_described(
    ctx: CliContext, store: Any, adoption: Adoption, manifest: Any, force: bool
) -> None:
    """Records the resource its existing manifest describes; a survey that is not the
    manifest's by the identity rule only with --force (a mistyped id would otherwise have the
    next plan rewrite somebody else's survey into this one)."""
    if isinstance(manifest, Survey):
        rule = identity.Rule.of(ctx.environment())
        live = adoption.manifest["spec"]
        if identity.same_survey(live, manifest.body(), adoption.address, rule) is None:
            mismatch = (
                f"{adoption.source} ({live.get('survey_title')!r}, "
                f"{live.get('survey_localization')}) is not the survey its manifest describes "
                "by title and locale (or external_project_id)"
            )
            if not force:
                raise SurveyctlError(f"{mismatch}; check the id, or add --force to record it")
            click.echo(f"surveyctl: warning: {mismatch} (--force given).", err=True)
    record_adoption(store, as_described(adoption, manifest.lifecycle.prevent_destroy))
    click.echo(
        suggesting(
            f"Recorded {adoption.address} as {adoption.source}, which its manifest "
            f"({manifest.location}) describes; `surveyctl plan` shows what differs as updates."
        ),
        err=True,
    )


def _adopt_all(
    ctx: CliContext, out_dir: Path, statuses: tuple[int, ...], yes: bool, lock_timeout: float
) -> None:
    """Adopts every unmanaged survey under the state lock, one state write per survey."""
    action = f"adopt every unmanaged survey into the state of {ctx.environment().name!r}"
    if not confirm_write(ctx, action, approved=yes):
        raise SurveyctlError("nothing was imported")
    # The folder is made with the first manifest written (save_adoption): an import that
    # adopts nothing leaves no empty folder behind. Where it would be made is checked now.
    existing = out_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK):
        raise SurveyctlError(f"{out_dir}: cannot write into this folder")
    project = _project_surveys(ctx)  # read before the lock, which it does not need
    store = ctx.state_store()
    with store.locked("import", lock_timeout):
        ctx.placed_state(store)
        outcomes = adopt_unmanaged(
            ctx.client(), store, out_dir, statuses, on_adopted=_reported, project=project
        )
    adopted = [o for o in outcomes if o.error is None]
    failed = len(outcomes) - len(adopted)
    click.echo(
        f"Adopted {len(adopted)} survey(s) into {out_dir}"
        + (f"; {failed} could not be adopted." if failed else ".")
    )
    if failed:
        click.get_current_context().exit(1)


def _project_surveys(ctx: CliContext) -> ProjectSurveys:
    """The Survey manifests of `manifests:` (none when it is not set or they do not load:
    `validate` reports those)."""
    try:
        desired = project_desired(ctx, ())
    except SurveyctlError:
        return ProjectSurveys()
    manifests = kinds.get(SURVEY).manifests(desired)
    bodies = {name: manifest.body() for name, manifest in manifests.items()}
    return ProjectSurveys(bodies, identity.Rule.of(ctx.environment()))


def _adopt_program(
    ctx: CliContext, program: str, sources: tuple[Path, ...], yes: bool, lock_timeout: float
) -> None:
    """Records the live surveys and groups of a program's members; nothing is recorded when
    one member matches several surveys."""
    action = f"attach surveys to program {program!r} in the state of {ctx.environment().name!r}"
    if not confirm.terminal():
        # No answer of the service could make the write allowed: refused before the
        # catalogue is fetched.
        confirm_write(ctx, action, approved=yes, can_ask=False)
    catalog = environment_catalog(ctx, offline=False, refresh=False)
    desired = project_desired(ctx, sources, catalog)
    if not confirm_write(ctx, action, approved=yes):
        raise SurveyctlError("nothing was imported")
    store = ctx.state_store()
    with store.locked("import", lock_timeout):
        rule = identity.Rule.of(ctx.environment())
        found = adopt_program(ctx.client(), desired, ctx.placed_state(store), program, rule)
        if found.ambiguous:
            member, ids = next(iter(found.ambiguous.items()))
            by = "external_project_id" if rule.by == identity.EXTERNAL_ID else "title and locale"
            raise SurveyctlError(
                f"{member} matches {len(ids)} surveys by {by} "
                f"({', '.join(map(str, ids))}); nothing was recorded: retitle or "
                f"`surveyctl import SURVEY_ID --name NAME` the right one"
            )
        for member_address, record in found.records.items():
            store.resolve_create(member_address, record)
            click.echo(f"{member_address}: {found.matched[member_address]}", err=True)
    click.echo(
        f"Attached {len(found.records)} resource(s) to program {program}; "
        f"{len(found.managed)} already managed, {len(found.unmatched)} not found on the "
        "marketplace (plan creates them)."
    )


def _reported(outcome: Adopted) -> None:
    if outcome.error is None:
        click.echo(f"survey {outcome.ps_survey_id}: {outcome.address} ({outcome.path})", err=True)
    else:
        click.echo(f"survey {outcome.ps_survey_id}: FAILED {outcome.error}", err=True)


@click.command("import-group")
@click.argument("ref")
@click.option("--name", required=True, help=_NAME_HELP)
@_out
@_manifests("the manifest of --name")
@_force()
@lock_timeout_option
@_yes
@pass_context
def import_group_command(
    ctx: CliContext,
    ref: str,
    name: str,
    out: Path | None,
    sources: tuple[Path, ...],
    force: bool,
    lock_timeout: float,
    yes: bool,
) -> None:
    """Adopt live exclusion group REF (its surveys must be managed already)."""
    one_manifest_source(out, sources)
    described = None if out else _described(ctx, f"ExclusionGroup/{name}", sources)
    _adopt(
        ctx,
        lambda client, state: adopt_group(client, state, ref, name, described is not None),
        out,
        f"import-group {ref} --name {name}",
        yes,
        f"ExclusionGroup/{name}",
        force,
        described,
        lock_timeout,
    )
