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
folder and file is read once, however many links lead to it.
Only regular files are read: a FIFO, socket or device in a folder is skipped with a warning
(opening a FIFO waits for a writer forever), and one named explicitly is an error.
"""

from __future__ import annotations

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


def location_of(value: Any, fallback: Location) -> Location:
    """The Location a loaded value carries, or `fallback` for scalars."""
    return getattr(value, "location", fallback)


def discover(paths: Iterable[str | Path], diagnostics: Diagnostics) -> list[Path]:
    """The manifest files under `paths`, in a stable order; missing paths are errors."""
    found: list[tuple[Path, Path]] = []  # (a file as reached, its real path)
    walked: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        special = special_file_kind(path)
        try:
            is_file, is_folder = path.is_file(), path.is_dir()
        except OSError as exc:  # pathlib answers False for a missing path, not for a name too long
            diagnostics.error(f"Cannot read {path}: {exc.strerror or exc}")
            continue
        if special is not None:
            diagnostics.error(f"{path} is {special}, not a regular file: only files are read")
        elif is_file:
            found.append((path, path.resolve()))
        elif is_folder:
            found.extend(_walk(path, diagnostics, walked))
        else:
            diagnostics.error(f"No such file or folder: {path}")
    unique: dict[Path, Path] = {}  # real path -> the first path that reached it
    for path, real in found:
        unique.setdefault(real, path)
    return list(unique.values())


def _walk(
    folder: Path, diagnostics: Diagnostics, walked: set[Path]
) -> list[tuple[Path, Path]]:
    # Each folder once, by its real path: links to a folder read already (a link to a parent,
    # or two links to one folder, which would double the walk at every level) are skipped.
    real = folder.resolve()
    if real in walked:
        if folder.is_symlink():  # a folder named twice, or inside another named, is no news
            diagnostics.warning(f"Skipped {folder}: a link to the folder {real}, read already")
        return []
    walked.add(real)
    files: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if entry.name not in SKIPPED_FOLDERS:
                files.extend(_walk(entry, diagnostics, walked))
        elif entry.suffix in SUFFIXES and entry.name not in SKIPPED_FILES:
            special = special_file_kind(entry)
            if special is None:
                # A file that is not a link is in its folder's real path: resolving each of a
                # thousand files again was a twentieth of a no-op plan's loading.
                files.append((entry, entry.resolve() if entry.is_symlink() else real / entry.name))
            else:
                diagnostics.warning(f"Skipped {entry}: it is {special}, not a regular file")
    return files


def load_file(
    path: Path, diagnostics: Diagnostics, pack: Pack | None = None
) -> list[Document]:
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
                f"\"{text}\" in quotes if it is text",
                where,
            )
    if not loaded and len(diagnostics) == before:
        diagnostics.error("The file holds no YAML document", Location(filename, 1))
    return documents
