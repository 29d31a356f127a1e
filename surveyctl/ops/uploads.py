"""Reading a file a user hands to a command: CSV with a header, or a JSON list, with lines.

`adjust` and `text-check` take lists of items from people's spreadsheets and scripts. Both
read them here, so that both accept the same encodings (UTF-8, with or without a byte-order
mark; UTF-16 with one; Windows-1252 for a CSV that is not UTF-8) and the same separators, and
both name the file and line of a bad item. A spreadsheet set to a European locale saves "CSV"
with semicolons, and `transactions list --format tsv` writes tabs: the separator is the one the
header line uses, so such a file is read by its columns rather than each whole line taken as
one value.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surveyctl.errors import Location, SurveyctlError
from surveyctl.surrogates import holds_lone_surrogate

# A bound on what a file handed to a command may make surveyctl read and hold: a million
# transaction ids are some 40 MB; without it `adjust /dev/zero` read until the system ran out
# of memory.
MAX_UPLOAD_BYTES = 64 << 20


@dataclass(frozen=True)
class Item:
    """One item of the file and the 1-based line it starts on."""

    line: int
    value: Any  # a list of cells (CSV), or the parsed JSON item


@dataclass(frozen=True)
class Upload:
    """The items of a file; `csv` tells how to read them (cells, or JSON values)."""

    path: Path
    csv: bool
    items: list[Item]

    def where(self, line: int) -> Location:
        return Location(str(self.path), line)


def read_upload(
    path: Path, error: type[SurveyctlError], *, csv_suffix: bool, wrapper: str | None = None
) -> Upload:
    """The items of `path`: non-empty CSV rows when `csv_suffix` says the file is CSV (header
    included), else the items of a JSON list (or of the list under `wrapper` when the JSON is
    an object). Problems are raised as `error` with the file and line."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_UPLOAD_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the file: {exc.strerror}") from exc
    if len(data) > MAX_UPLOAD_BYTES:
        raise error(
            f"{path}: larger than {MAX_UPLOAD_BYTES >> 20} MiB, far beyond any list of "
            "transactions or answers; split it into several files"
        )
    raw = _text(path, data, error, csv_suffix=csv_suffix)
    if csv_suffix:
        return Upload(path, True, _csv_rows(path, raw, error))
    return Upload(path, False, _json_items(path, raw, error, wrapper))


def _text(path: Path, data: bytes, error: type[SurveyctlError], *, csv_suffix: bool) -> str:
    """The text of a file as spreadsheets save it: UTF-16 when it starts with that byte-order
    mark ("Unicode text"), else UTF-8 (with or without a mark), else, for a CSV, Windows-1252:
    the "CSV" a spreadsheet on Windows writes, which fails as UTF-8 as soon as a cell holds an
    accented letter. A file that is UTF-8 but for a stray byte is refused rather than read as
    Windows-1252, which would turn each of its accented letters into two others (é into Ã©).
    A JSON file is UTF-8, as JSON must be."""
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    encoding = "utf-16" if utf16 else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        failed = exc
    if not utf16 and csv_suffix and not _UTF8_SEQUENCE.search(data):
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass  # not Windows-1252 either: said as the UTF-8 error
    name = "UTF-16" if utf16 else "UTF-8"
    line = 1 if utf16 else data[: failed.start].count(b"\n") + 1
    raise error(
        f"the file is not {name} text (byte {failed.start + 1}): save it as UTF-8",
        Location(str(path), line),
    ) from failed


def _csv_rows(path: Path, raw: str, error: type[SurveyctlError]) -> list[Item]:
    """The rows of a CSV that are not blank, each at the line it starts on; a row the csv
    module cannot read (a cell past its size limit, a quote left open at the end) is raised as
    `error` with its line. The csv module reads the lines itself: a quoted cell keeps its line
    breaks (an open-ended answer of two paragraphs), and only \n, \r and \r\n end a line
    (str.splitlines would also split a row at U+2028 and the like, inside a cell)."""
    reader = csv.reader(io.StringIO(raw, newline=""), delimiter=_separator(raw.splitlines()))
    rows, start = [], 1
    try:
        for row in reader:
            if any(c.strip() for c in row):
                rows.append(Item(start, row))
            start = reader.line_num + 1
        return rows
    except csv.Error as exc:
        reason = str(exc)
        if "field larger than field limit" in reason:
            reason = f"a cell is longer than {csv.field_size_limit():,} characters"
        raise error(
            f"the CSV cannot be read: {reason}", Location(str(path), reader.line_num)
        ) from None


# A character of two to four bytes as UTF-8 writes it: a file holding one is UTF-8.
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)

# The separators spreadsheets write; the first is taken when the header line has none.
SEPARATORS = (",", ";", "\t")


def _separator(lines: list[str]) -> str:
    """The separator the header (the first line that is not blank) uses most, outside quotes."""
    header = next((line for line in lines if line.strip()), "")
    unquoted = "".join(header.split('"')[::2])
    return max(SEPARATORS, key=unquoted.count)  # max keeps the first of equal counts


def _json_items(
    path: Path, raw: str, error: type[SurveyctlError], wrapper: str | None
) -> list[Item]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        # A file named otherwise (answers.tsv, export.txt) was read as JSON by its name alone.
        named = (
            "" if path.suffix.lower() == ".json" else " (only a name ending in .csv is read as CSV)"
        )
        raise error(f"not valid JSON: {exc.msg}{named}", Location(str(path), exc.lineno)) from exc
    except RecursionError:
        raise error("the JSON is nested too deeply to read", Location(str(path), 1)) from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise error(
            "the JSON holds a number of more than 4,300 digits", Location(str(path), 1)
        ) from None
    depth = 1
    if wrapper is not None and isinstance(data, dict):
        data, depth = data.get(wrapper), 2
    if not isinstance(data, list):
        expected = f"a list (or an object with a {wrapper!r} list)" if wrapper else "a list"
        raise error(f"the JSON must be {expected}", Location(str(path), 1))
    lines = _item_lines(raw, depth)
    items = [Item(lines[i] if i < len(lines) else 1, item) for i, item in enumerate(data)]
    for item in items:
        if holds_lone_surrogate(item.value):
            # Valid JSON (`"\\ud83d"`, an emoji cut in half) but not text: nothing could send,
            # show or record it as UTF-8, so it is refused before anything is sent.
            raise error(
                "a string holds half of a character (a lone \\uD800-\\uDFFF escape): "
                "write the whole character or leave it out",
                Location(str(path), item.line),
            )
    return items


def _item_lines(raw: str, list_depth: int) -> list[int]:
    """The 1-based line on which each item of the list at `list_depth` starts, in order."""
    lines: list[int] = []
    depth, line, in_string, escaped, expecting = 0, 1, False, False, False
    for char in raw:
        if char == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if expecting and depth == list_depth and not char.isspace() and char not in ",]":
            lines.append(line)
            expecting = False
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            expecting = char == "[" and depth == list_depth
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == list_depth:
            expecting = True
    return lines
