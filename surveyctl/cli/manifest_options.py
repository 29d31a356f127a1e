"""What the commands that read manifests share: PATHS, the catalogue options, and both made
into the core's inputs (paths to read, the environment's attribute catalogue)."""

from __future__ import annotations

from pathlib import Path

import click

from surveyctl.catalog import Catalog
from surveyctl.cli.context import CliContext
from surveyctl.errors import ConfigError

paths_argument = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
offline_option = click.option(
    "--offline", is_flag=True, help="Skip every check against the attribute catalogue."
)
refresh_option = click.option(
    "--refresh-catalog", is_flag=True, help="Fetch the attribute catalogue even if cached."
)


def manifest_paths(ctx: CliContext, paths: tuple[Path, ...]) -> list[Path]:
    """PATHS as given, else the `manifests:` of surveyctl.yaml."""
    if paths:
        return list(paths)
    config = ctx.config()
    if config.manifests:
        return [config.root / entry for entry in config.manifests]
    raise ConfigError(
        "no manifests given: name files or folders, or list them under 'manifests:' in "
        "surveyctl.yaml"
    )


def environment_catalog(ctx: CliContext, offline: bool, refresh: bool) -> Catalog | None:
    """The environment's attribute catalogue (None with --offline); no connection is opened
    while the cache is fresh."""
    if offline:
        return None
    ctx.announce()
    config, environment = ctx.config(), ctx.environment()
    return Catalog(ctx.client, environment.name, config.cache_dir, refresh=refresh)
