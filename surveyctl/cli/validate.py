"""`surveyctl validate` and `surveyctl render`: manifests checked, and shown as API bodies."""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.catalog import Catalog
from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.manifest_options import (
    environment_catalog,
    offline_option,
    paths_argument,
    project_manifests,
    refresh_option,
)
from surveyctl.cli.options import format_option
from surveyctl.errors import ConfigError
from surveyctl.jsontext import dumps
from surveyctl.manifests import Diagnostics
from surveyctl.manifests.diagnostics import ERROR, NOTE, WARNING
from surveyctl.model import DesiredState
from surveyctl.render.values import printable_lines
from surveyctl.suggest import suggest


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _verdict(state: DesiredState, diagnostics: Diagnostics, catalog: Catalog | None) -> str:
    errors = diagnostics.count(ERROR)
    files = _plural(len(state.files), "file")
    if errors:
        return (
            f"{_plural(errors, 'error')} and {_plural(diagnostics.count(WARNING), 'warning')} "
            f"in {files}: the manifests are not valid."
        )
    checked = (
        f"checked against the attribute catalogue of environment {catalog.environment!r}"
        if catalog
        else "not checked against any attribute catalogue (--offline)"
    )
    warnings = diagnostics.count(WARNING)
    with_warnings = f" with {_plural(warnings, 'warning')}" if warnings else ""
    programs = ""
    if state.programs:
        members = sum(1 for s in state.surveys.values() if s.member is not None)
        programs = f" ({members} of them from {_plural(len(state.programs), 'program')})"
    return (
        f"Valid{with_warnings}: {_plural(len(state.surveys), 'survey')}{programs} and "
        f"{_plural(len(state.groups), 'exclusion group')} in {files}, {checked}."
    )


@click.command("validate")
@paths_argument
@format_option("text", "json")
@offline_option
@refresh_option
@pass_context
def validate_command(
    ctx: CliContext,
    paths: tuple[Path, ...],
    output_format: str,
    offline: bool,
    refresh_catalog: bool,
) -> None:
    """Check manifests (files or folders) before anything is sent; exit 1 when invalid.

    Without PATHS the `manifests:` of surveyctl.yaml are read. Attribute names are resolved
    and codes checked against the catalogue of the environment (cached for a day).
    """
    catalog = environment_catalog(ctx, offline, refresh_catalog)
    state, diagnostics = project_manifests(ctx, paths, catalog)
    if output_format == "json":
        click.echo(
            dumps(
                {
                    "valid": not diagnostics.has_errors,
                    "error_count": diagnostics.count(ERROR),
                    "warning_count": diagnostics.count(WARNING),
                    "note_count": diagnostics.count(NOTE),
                    "summary": _verdict(state, diagnostics, catalog),
                    "diagnostics": [d.to_json() for d in diagnostics.sorted()],
                }
            )
        )
    else:
        for diagnostic in diagnostics.sorted():
            click.echo(printable_lines(str(diagnostic)))
        click.echo(_verdict(state, diagnostics, catalog))
    if diagnostics.has_errors:
        click.get_current_context().exit(1)


@click.command("render")
@paths_argument
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="NAME",
    help="Print only this survey's or exclusion group's body (repeatable); a program's name "
    "selects its members, a member is named like brand-tracker[en_GB,2026-11].",
)
@offline_option
@refresh_option
@pass_context
def render_command(
    ctx: CliContext,
    paths: tuple[Path, ...],
    names: tuple[str, ...],
    offline: bool,
    refresh_catalog: bool,
) -> None:
    """Print each survey as the API body its manifest makes, as JSON.

    Generators are expanded and attribute names resolved (which needs the catalogue, so
    --offline works only for manifests written with codes). A create sends this body (with the
    external_project_id of an environment whose identity rule is external_project_id); an
    update sends it merged with the live survey, as `plan` shows. With one --name the bare body is
    printed (a program member's name is its survey's); otherwise an object of surveys and
    exclusion groups by name.
    """
    catalog = environment_catalog(ctx, offline, refresh_catalog)
    state, diagnostics = project_manifests(ctx, paths, catalog)
    unresolved = [s for s in state.surveys.values() if not s.resolved]
    valid = not diagnostics.has_errors  # before the refusals below, which are render's own
    for survey in unresolved:
        diagnostics.error(
            f"Survey {survey.name!r} names attributes, which need the catalogue; "
            "render it without --offline",
            survey.location,
        )
    problems = [d for d in diagnostics.sorted() if d.severity == ERROR]
    if problems:
        for diagnostic in problems:
            click.echo(printable_lines(str(diagnostic)), err=True)
        closing = _verdict(state, diagnostics, catalog)
        if valid:  # `validate --offline` calls these manifests valid: say why nothing is shown
            closing = (
                f"Nothing was rendered: the manifests are valid, but "
                f"{_plural(len(unresolved), 'survey')} "
                f"{'names' if len(unresolved) == 1 else 'name'} attributes, which only the "
                "attribute catalogue resolves; render without --offline."
            )
        click.echo(closing, err=True)
        click.get_current_context().exit(1)
    names = _members(state, names)
    missing = [n for n in names if n not in state.surveys and n not in state.groups]
    if missing:  # every name that matched nothing, so that one run shows them all
        known = [*state.surveys, *state.programs, *state.groups]
        named = " or ".join(f"{name!r}{suggest(name, known)}" for name in missing)
        raise ConfigError(
            f"no Survey or ExclusionGroup manifest or program member is named {named}"
        )
    surveys = [n for n in names if n in state.surveys] if names else list(state.surveys)
    # A member's name is its survey's: its exclusion group shares the name, and naming one
    # member must print that survey's bare body whether or not its wave has a group.
    groups = [n for n in names if n in state.groups and not _member_survey(state, n)]
    groups = groups if names else list(state.groups)
    if len(names) == 1 and len(surveys) + len(groups) == 1:
        chosen = state.surveys[surveys[0]] if surveys else state.groups[groups[0]]
        click.echo(dumps(chosen.body()))
        return
    output = {
        "surveys": {name: state.surveys[name].body() for name in surveys},
        "exclusion_groups": {name: state.groups[name].body() for name in groups},
    }
    click.echo(dumps(output))


def _member_survey(state: DesiredState, name: str) -> bool:
    """Whether `name` is a program member's survey (whose group, if any, has the same name)."""
    survey = state.surveys.get(name)
    return survey is not None and survey.member is not None


def _members(state: DesiredState, names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` with each program's name replaced by the names of its surveys."""
    out: list[str] = []
    for name in names:
        if name in state.programs:  # no Survey may share a program's name (manifests)
            out.extend(n for n, s in state.surveys.items() if s.member and s.member.program == name)
        else:
            out.append(name)
    return tuple(out)
