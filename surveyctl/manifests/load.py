"""Reading manifest files: YAML documents whose every mapping and list remembers its place.

Each mapping becomes a `MarkedDict` and each list a `MarkedList`; both carry the Location of
the node and of each key or item, so that any later check can point at the exact line.
Duplicate keys, non-text keys, invalid YAML, non-UTF-8 bytes, empty documents and documents
that are not mappings become diagnostics here rather than exceptions, and so do files that
would make the reader work without bound (see `surveyctl.yamlsafe`): larger than 8 MB, more
than a million values, nesting deeper than 32 levels, or aliases and merge keys (`<<`) that
expand to far more than is written.

Folders are read recursively (`*.yaml`, `*.yml`, sorted). While walking a folder the loader
skips hidden entries (`.git`, `.surveyctl`, ...), folders named `ci` (CI workflow examples)
and the project configuration `surveyctl.yaml`; a file named explicitly is always read. Each
folder and file is read once, however many links lead to it. A link met while walking must
lead inside the folder named or the project (`within`): a manifest folder comes with the code
under review, and a link in it to `/` would walk the whole machine, one to a file elsewhere
would read it. A folder or entry that cannot be read is an error naming it.
Only regular files are read: a FIFO, socket or device in a folder is skipped with a warning
(opening a FIFO waits for a writer forever), and one named explicitly is an error.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.yamlsafe import (
    Limits,
    MarkedDict,
    MarkedList,
    YamlProblem,
    load_documents,
    short,
    special_file_kind,
)
from surveyctl.yamlsafe import read_text as _read_text

if TYPE_CHECKING:
    from surveyctl.manifests.cache import Pack

__all__ = ["Document", "MarkedDict", "MarkedList", "discover", "load_file", "load_text"]

SUFFIXES = (".yaml", ".yml")
SKIPPED_FILES = frozenset({"surveyctl.yaml", "surveyctl.yml"})
SKIPPED_FOLDERS = frozenset({"ci"})
# Deeper than any real manifest.
MAX_DEPTH = 32
# A survey of a thousand quotas written out is about 0.2 MB and 30,000 values.
LIMITS = Limits("manifest file", max_bytes=8_000_000, max_values=1_000_000, max_depth=MAX_DEPTH)


@dataclass
class Document:
    """One YAML document of a file: its data (a MarkedDict) and where it starts."""

    data: MarkedDict
    location: Location
    index: int  # 1-based position of the document in its file
    finite: bool | None = None  # every number finite (True), or not known (None)


def whole(value: Any) -> Any:
    """`value`, or the integer it is when it is a whole number written with a decimal point
    (`1000.0`): the schema takes it where the API wants an integer (a count, a code), and the
    body must carry the integer, as a generator must count with it."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def location_of(value: Any, fallback: Location) -> Location:
    """The Location a loaded value carries, or `fallback` for scalars."""
    return getattr(value, "location", fallback)


def discover(
    paths: Iterable[str | Path], diagnostics: Diagnostics, within: Path | None = None
) -> list[Path]:
    """The manifest files under `paths`, in a stable order; missing paths are errors. A link
    met in a folder's walk must lead inside that folder or inside `within` (the project)."""
    found: list[tuple[Path, Path]] = []  # (a file as reached, its real path)
    walked: set[Path] = set()
    project = within.resolve() if within is not None else None
    for raw in paths:
        path = Path(raw)
        special = special_file_kind(path)
        try:
            is_file, is_folder = path.is_file(), path.is_dir()
            real = _real(path)
        except OSError as exc:  # pathlib answers False for a missing path, not for a name too long
            diagnostics.error(f"Cannot read {path}: {_reason(exc)}")
            continue
        if special is not None:
            diagnostics.error(f"{path} is {special}, not a regular file: only files are read")
        elif is_file:
            found.append((path, real))
        elif is_folder:
            found.extend(_walk(path, real, diagnostics, walked, _bounds(real, project)))
        else:
            diagnostics.error(f"No such file or folder: {path}")
    unique: dict[Path, Path] = {}  # real path -> the first path that reached it
    for path, real in found:
        unique.setdefault(real, path)
    return list(unique.values())


def _walk(
    folder: Path,
    real: Path,
    diagnostics: Diagnostics,
    walked: set[Path],
    bounds: tuple[Path, ...],
) -> list[tuple[Path, Path]]:
    """The manifest files under `folder`, whose real path is `real`, each with its own."""
    # Each folder once, by its real path: links to a folder read already (a link to a parent,
    # or two links to one folder, which would double the walk at every level) are skipped.
    if real in walked:
        if folder.is_symlink():  # a folder named twice, or inside another named, is no news
            diagnostics.warning(f"Skipped {folder}: a link to the folder {real}, read already")
        return []
    walked.add(real)
    try:
        with os.scandir(folder) as listing:
            entries = sorted((item.name, item) for item in listing)
    except OSError as exc:
        diagnostics.error(f"Cannot read the folder {folder}: {_reason(exc)}")
        return []
    files: list[tuple[Path, Path]] = []
    for name, item in entries:
        if name.startswith("."):
            continue
        entry = folder / name
        try:
            # The listing knows which entries are links; an entry that is not one is in its
            # folder's real path (resolving each of a thousand files again was a twentieth of
            # a no-op plan's loading).
            linked = item.is_symlink()
            target = _real(entry) if linked else real / name
            is_folder = item.is_dir()
        except OSError as exc:
            diagnostics.error(f"Cannot read {entry}: {_reason(exc)}")
            continue
        wanted = is_folder or (entry.suffix in SUFFIXES and name not in SKIPPED_FILES)
        if not wanted or (is_folder and name in SKIPPED_FOLDERS):
            continue
        if linked and not any(target.is_relative_to(b) for b in bounds):
            diagnostics.error(
                f"{entry} is a link to {target}, outside {' and '.join(map(str, bounds))}: a "
                "link in the manifests must stay inside the project (name other places on the "
                "command line)"
            )
        elif is_folder:
            files.extend(_walk(entry, target, diagnostics, walked, bounds))
        elif (special := special_file_kind(entry)) is None:
            files.append((entry, target))
        else:
            diagnostics.warning(f"Skipped {entry}: it is {special}, not a regular file")
    return files


def _bounds(folder: Path, project: Path | None) -> tuple[Path, ...]:
    """Where links met in `folder` may lead: the folder, and the project unless inside it."""
    if project is None or folder.is_relative_to(project):
        return (project or folder,)
    return (folder, project)


def _real(path: Path) -> Path:
    """`path` with its links followed; OSError for a loop of links, which pathlib raises as a
    RuntimeError."""
    try:
        return path.resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def load_file(path: Path, diagnostics: Diagnostics, pack: Pack | None = None) -> list[Document]:
    """The documents of one file; every problem found becomes a diagnostic. With `pack` (of
    surveyctl.manifests.cache), a file read cleanly before is not parsed again."""
    try:
        text = _read_text(path, LIMITS)
    except YamlProblem as problem:
        diagnostics.error(problem.summary, problem.location)
        return []
    return load_text(text, str(path), diagnostics, pack)


def load_text(
    text: str, filename: str, diagnostics: Diagnostics, pack: Pack | None = None
) -> list[Document]:
    """The documents of YAML `text` read as file `filename`."""
    before = len(diagnostics)
    documents: list[Document] = []
    read = load_documents if pack is None else pack.load
    loaded = read(text, filename, LIMITS, diagnostics.error)
    for item in loaded:
        if item.data is None:
            diagnostics.error(f"Document {item.index} is empty", item.location)
        elif not isinstance(item.data, MarkedDict):
            kind = "a list" if isinstance(item.data, list) else f"the value {short(item.data)}"
            diagnostics.error(f"Document {item.index} must be a mapping, not {kind}", item.location)
        else:
            documents.append(Document(item.data, item.location, item.index, item.finite))
        for where, text, value in item.reread:
            diagnostics.warning(
                f"{text} is read as the number {value} (YAML reads a leading 0 as octal, 0x as "
                "hexadecimal and a colon as base 60): write the number without them, or "
                f'"{text}" in quotes if it is text',
                where,
            )
    if not loaded and len(diagnostics) == before:
        diagnostics.error("The file holds no YAML document", Location(filename, 1))
    return documents
