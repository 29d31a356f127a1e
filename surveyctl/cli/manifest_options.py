"""What the commands that read manifests share: PATHS, the catalogue options, and both made
into the core's inputs (paths to read, the environment's attribute catalogue)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from surveyctl.cli.context import CliContext
from surveyctl.cli.options import FilePath

if TYPE_CHECKING:
    from surveyctl.catalog import Catalog
    from surveyctl.manifests import Diagnostics
    from surveyctl.model import DesiredState

paths_argument = click.argument("paths", nargs=-1, type=FilePath(path_type=Path))


def _one_catalogue_choice(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """--offline and --refresh-catalog contradict each other: refused rather than one of them
    silently ignored (whichever is read second sees the other in ctx.params)."""
    other = "refresh_catalog" if param.name == "offline" else "offline"
    if value and ctx.params.get(other):
        raise click.UsageError(
            "--offline uses no attribute catalogue and --refresh-catalog fetches it again: give one"
        )
    return value


offline_option = click.option(
    "--offline",
    is_flag=True,
    callback=_one_catalogue_choice,
    help="Use no attribute catalogue: no check against it, codes shown without their names.",
)
refresh_option = click.option(
    "--refresh-catalog",
    is_flag=True,
    callback=_one_catalogue_choice,
    help="Fetch the attribute catalogue even if cached.",
)


def manifest_paths(ctx: CliContext, paths: tuple[Path, ...]) -> list[Path]:
    """PATHS as given, else the `manifests:` of surveyctl.yaml."""
    return ctx.config().manifest_paths(paths)


def project_manifests(
    ctx: CliContext, paths: tuple[Path, ...], catalog: Catalog | None = None
) -> tuple[DesiredState, Diagnostics]:
    """The manifests of PATHS (else `manifests:`), read as a plan reads them: through the
    user's cache, with the links of their folders kept inside the project."""
    from surveyctl.manifests import load_manifests

    return load_manifests(
        manifest_paths(ctx, paths), catalog, ctx.manifest_cache(), ctx.config().project
    )


def project_desired(
    ctx: CliContext, paths: tuple[Path, ...], catalog: Catalog | None = None
) -> DesiredState:
    """Like `project_manifests`, but ManifestError when any manifest has an error."""
    from surveyctl.manifests import load_desired

    return load_desired(
        manifest_paths(ctx, paths), catalog, ctx.manifest_cache(), ctx.config().project
    )


def environment_catalog(ctx: CliContext, offline: bool, refresh: bool) -> Catalog | None:
    """The environment's attribute catalogue (None with --offline); no connection is opened
    while the cache is fresh."""
    return None if offline else ctx.catalog(refresh=refresh)
