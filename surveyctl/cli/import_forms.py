"""Which options go with which form of `surveyctl import`: SURVEY_ID --name, --all-unmanaged,
--program.

An option of another form is refused, not ignored: a script that gives --status to --program,
or --manifests beside --out, would otherwise believe it applied.
"""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource


def _given(parameter: str) -> bool:
    """Whether the option of `parameter` was on the command line (not its default)."""
    source = click.get_current_context().get_parameter_source(parameter)
    return source is not None and source is not ParameterSource.DEFAULT


def one_manifest_source(out: Path | None, sources: tuple[Path, ...]) -> None:
    """--out writes the manifest and --manifests names where it is already: not both."""
    if out is not None and sources:
        raise click.UsageError(
            "--out writes a new manifest and --manifests names the existing one: give one"
        )


def check_form(
    survey_id: int | None,
    name: str | None,
    out: Path | None,
    all_unmanaged: bool,
    out_dir: Path | None,
    program: str | None,
    sources: tuple[Path, ...],
    force: bool,
) -> None:
    """Refuses, as a usage error, options that the form of import given does not take."""
    status_given = _given("statuses")
    if program is not None:
        if survey_id is not None or name or out or all_unmanaged or out_dir:
            raise click.UsageError("--program takes no SURVEY_ID, --name, --out or --out-dir")
        if status_given or force:
            raise click.UsageError("--program takes no --status or --force")
        return
    if all_unmanaged:
        if survey_id is not None or name or out:
            raise click.UsageError("--all-unmanaged takes no SURVEY_ID, --name or --out")
        if sources:
            raise click.UsageError("--manifests goes with --program or --name, not --all-unmanaged")
        if out_dir is None:
            raise click.UsageError("--all-unmanaged needs --out-dir DIR")
        return
    if survey_id is None or not name:
        raise click.UsageError("give SURVEY_ID and --name NAME (or --all-unmanaged --out-dir DIR)")
    if out_dir is not None:
        raise click.UsageError("--out-dir goes with --all-unmanaged; use --out FILE")
    if status_given:
        raise click.UsageError("--status goes with --all-unmanaged; SURVEY_ID names one survey")
    one_manifest_source(out, sources)
