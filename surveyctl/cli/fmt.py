"""`surveyctl fmt [--check] [PATHS]`: manifests in the canonical layout, comments kept.

Without PATHS the `manifests:` of surveyctl.yaml are formatted. `--check` writes nothing and
exits 1 when a file would change, listing each one (for CI and pre-commit).
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

import click

from surveyctl.cli.context import CliContext, pass_context
from surveyctl.cli.manifest_options import manifest_paths, paths_argument

if TYPE_CHECKING:
    from surveyctl.manifests.formatted import FormattedCache


@click.command("fmt")
@paths_argument
@click.option("--check", is_flag=True, help="Change nothing; exit 1 when a file would change.")
@pass_context
def fmt_command(ctx: CliContext, paths: tuple[Path, ...], check: bool) -> None:
    """Rewrite manifests (files or folders) in the canonical layout, keeping comments.

    Two-space indentation, list items under their key, kind/name/spec/lifecycle first; quotes,
    comments, flow lists and the order of spec fields stay as written.
    """
    from surveyctl.errors import SurveyctlError
    from surveyctl.manifests.diagnostics import ERROR, Diagnostics, ManifestError
    from surveyctl.manifests.layout import LayoutError, canonical
    from surveyctl.manifests.load import LIMITS, discover
    from surveyctl.render.values import printable_lines

    diagnostics = Diagnostics()
    given = manifest_paths(ctx, paths)
    files = discover(given, diagnostics, ctx.config().project)
    if not files and not diagnostics.has_errors:
        # As validate says it: `fmt --check` of a folder holding no manifest checked nothing,
        # and passed.
        shown = ", ".join(str(p) for p in given)
        raise SurveyctlError(f"No manifest files (*.yaml, *.yml) found in {shown}")
    if len(diagnostics) == 1 and diagnostics.has_errors:
        raise ManifestError(diagnostics)  # one sentence
    if diagnostics.has_errors:  # every finding of the walk, as validate shows them
        for diagnostic in diagnostics.sorted():
            click.echo(printable_lines(str(diagnostic)), err=True)
        errors = sum(d.severity == ERROR for d in diagnostics)
        plural = "s" if errors > 1 else ""
        raise SurveyctlError(
            f"{errors} error{plural} in finding the manifests; nothing was formatted"
        )
    changed: list[Path] = []
    failed = 0
    seen = _formatted_before(given)
    for path in files:
        try:
            text = _bounded_text(path, LIMITS.max_bytes)
            if seen is not None and seen.formatted(text):
                continue
            formatted = canonical(text, str(path))
        except LayoutError as exc:
            click.echo(f"Error: {exc}", err=True)
            failed += 1
            continue
        if formatted == text:
            if seen is not None:
                seen.found_formatted(text)
            continue
        changed.append(path)
        if check:
            click.echo(f"would reformat {path}")
        else:
            _rewrite(path, formatted)
            click.echo(f"reformatted {path}")
    if seen is not None:
        seen.save()
    verb = "would be reformatted" if check else "reformatted"
    click.echo(
        f"{len(changed)} file(s) {verb}, {len(files) - len(changed) - failed} already formatted"
        + (f", {failed} left as they are (errors above)" if failed else "")
        + ".",
        err=True,
    )
    if failed or (check and changed):
        click.get_current_context().exit(1)


def _rewrite(path: Path, text: str) -> None:
    """Replaces the manifest at `path` by `text` in one step, keeping its mode; on a failed
    write (a full disk) the file stays as it was and the command ends there (the files
    reformatted before it were listed as they were)."""
    from surveyctl.errors import SurveyctlError
    from surveyctl.files import os_error_message, write_atomically

    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        # Synced before the rename: after a crash the manifest is the old text or the new,
        # never an empty file (a rename can reach the disk before the data it names). The
        # file keeps its own mode (a temporary file's would be 0600).
        write_atomically(path, text, durable=True, mode=mode)
    except OSError as exc:
        message = os_error_message(exc, path, f"rewrite {path}")
        raise SurveyctlError(f"{message}; it is left as it was") from None


def _formatted_before(given: list[Path]) -> FormattedCache | None:
    """The texts of these paths found formatted by an earlier fmt (surveyctl.manifests
    .formatted); None when the user's cache folder is off or cannot be used."""
    from surveyctl.manifests.formatted import FormattedCache
    from surveyctl.variables import cache_folder

    folder = cache_folder()
    return None if folder is None else FormattedCache.at(folder / "formatted", given)


def _bounded_text(path: Path, max_bytes: int) -> str:
    """The file's text, refused (LayoutError) past the size `validate` refuses a manifest at:
    laying out a 50 MB file took 45 s and 280 MB of memory."""
    from surveyctl.manifests.layout import LayoutError

    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise LayoutError(
                f"{path}: the file is {size / 1e6:.1f} MB, larger than the "
                f"{max_bytes / 1e6:g} MB a manifest file may be; nothing was changed"
            )
        raw = path.read_bytes()
    except OSError as exc:  # unreadable, or gone since the walk found it
        raise LayoutError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # One sentence at its line, as validate says it; laying out would need the text.
        line = raw[: exc.start].count(b"\n") + 1
        raise LayoutError(
            f"{path}:{line}: the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be "
            "decoded); nothing was changed"
        ) from None
