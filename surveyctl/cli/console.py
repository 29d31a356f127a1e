"""Where output goes and how it looks: colour, width and progress, decided in one place.

- Colour only on a terminal, never with `--no-color`, `NO_COLOR` set (https://no-color.org)
  or `TERM=dumb`.
- Piped or redirected, tables take the width they need: nothing is cut or wrapped at 80
  columns because there is no terminal to measure. A `plain_table` is then written as aligned
  plain columns, without rich's layout (about 0.5 ms a row: most of a `surveys list` of 10,000
  surveys) and without the blanks rich pads each line with.
- Progress goes to stderr: a bar on a terminal, one line per step otherwise (CI logs, also
  when a CI runner attaches a pseudo-terminal: see `redraws`).

rich is imported when a console is made, so `surveyctl --help` stays light.
"""

from __future__ import annotations

import errno
import os
import sys
import weakref
from functools import cache
from typing import IO, TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# Width of a table written to a pipe or file: as wide as its content, within reason.
PIPE_WIDTH = 10_000

# The consoles `console()` made for a pipe or a file: their plain tables skip rich's layout.
_PIPED: weakref.WeakSet[Console] = weakref.WeakSet()


def color_allowed() -> bool:
    """False with `--no-color` on the command line, NO_COLOR in the environment, or TERM=dumb:
    a terminal that shows no colour (an editor's shell, a CI runner that attaches a
    pseudo-terminal to its log) would show the escape codes as text."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    ctx = click.get_current_context(silent=True)
    settings = ctx.find_root().obj if ctx is not None else None
    return not getattr(settings, "no_color", False)


def redraws(stream: IO[str] | None = None) -> bool:
    """Whether `stream` (stderr by default) may show a bar redrawn in place: a terminal, not
    TERM=dumb, and not CI, whose runners may attach a pseudo-terminal and keep every frame of
    a bar, cursor codes and all, in the job's log. Elsewhere: one line per step."""
    from surveyctl.variables import running_in_ci

    stream = sys.stderr if stream is None else stream
    return stream.isatty() and os.environ.get("TERM") != "dumb" and not running_in_ci()


def use_color(stream: IO[str] | None = None) -> bool:
    """Colour for `stream` (stdout by default): a terminal, and colour allowed."""
    stream = sys.stdout if stream is None else stream
    return stream.isatty() and color_allowed()


def console(file: IO[str] | None = None, stderr: bool = False) -> Console:
    """A rich console for stdout (or `file`, or stderr) that follows the rules above."""
    from rich.console import Console

    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    terminal = stream.isatty()
    made = Console(
        file=stream,
        width=None if terminal else PIPE_WIDTH,
        no_color=not color_allowed(),
        color_system="auto" if terminal and color_allowed() else None,
        soft_wrap=not terminal,
        highlight=False,
        # What is printed comes from the service and from files under review: "[/x]" in a
        # survey title is no markup to read (it ended the command in an error), nor ":x:" an
        # emoji code.
        markup=False,
        emoji=False,
    )
    made.on_broken_pipe = _reader_gone(made)  # type: ignore[method-assign]
    if not terminal:
        _PIPED.add(made)
    return made


def _reader_gone(made: Console):
    """What a console does when the reader of its output went away (`surveyctl surveys list |
    head`): rich would exit 1 in silence, as if the command had failed; the error goes on to
    the root command, which ends quietly with 141 as for every other command."""

    def broken_pipe() -> None:
        made.quiet = True  # nothing more is written to a reader that is gone
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return broken_pipe


def plain_table(**options: Any) -> Table:
    """A table without borders whose text cells are shown as written: ids, titles and answers
    come from the service and from respondents, so the characters a terminal acts on are
    escaped in them (render/values.printable), as in a plan, and any secret is redacted in
    each cell: on a terminal a cell is wrapped or cut to the column's width, and a key split
    over two lines, or cut with an ellipsis, would pass by the redaction of the output.

    Printed on a console `console()` made for a pipe or a file, a table of text cells is
    written as plain lines (`plain_lines`): each column as wide as its widest cell (and its
    header, and its `min_width` or `width`), two spaces apart, justified as the column says,
    nothing cut, no blank at the end of a line. The redaction above comes first all the same."""
    return _plain_table_class()(box=None, pad_edge=False, **options)


@cache
def _plain_table_class() -> type:
    from rich.segment import Segment
    from rich.table import Table
    from rich.text import Text

    from surveyctl.redacting import redacted
    from surveyctl.render.values import printable

    class PlainTable(Table):
        def add_row(self, *cells: Any, **options: Any) -> None:
            shown = [
                Text(printable(redacted(cell))) if isinstance(cell, str) else cell for cell in cells
            ]
            super().add_row(*shown, **options)

        def __rich_console__(self, console: Any, options: Any) -> Any:
            lines = plain_lines(self) if console in _PIPED else None
            if lines is None:
                yield from super().__rich_console__(console, options)
                return
            for line in lines:
                yield Segment(line)
                yield Segment.line()

    return PlainTable


def plain_lines(table: Table) -> list[str] | None:
    """`table` as lines of aligned plain columns (see `plain_table`); None for a table that
    needs rich's layout: a cell that is not one line of text (a progress bar), padding other
    than `plain_table`'s, or a title not set on the left."""
    from rich.cells import cell_len
    from rich.text import Text

    if table.padding != (0, 1, 0, 1) or table.collapse_padding or table.box is not None:
        return None
    if table.title is not None and table.title_justify != "left":
        return None
    columns: list[list[str]] = []
    for column in table.columns:
        cells = [column.header] if table.show_header else []
        cells += list(column.cells)
        texts = []
        for cell in cells:
            text = cell.plain if isinstance(cell, Text) else cell
            if not isinstance(text, str) or "\n" in text:
                return None
            texts.append(text)
        columns.append(texts)
    widths = [
        max([column.min_width or 0, column.width or 0, *(cell_len(text) for text in texts)])
        for column, texts in zip(table.columns, columns, strict=True)
    ]
    rows = max((len(texts) for texts in columns), default=0)
    lines = []
    if table.title is not None:
        title = table.title.plain if isinstance(table.title, Text) else str(table.title)
        lines.append(title.rstrip())
    for index in range(rows):
        cells = [
            _justified(texts[index] if index < len(texts) else "", width, column.justify)
            for column, texts, width in zip(table.columns, columns, widths, strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def _justified(text: str, width: int, justify: str | None) -> str:
    from rich.cells import cell_len

    excess = max(0, width - cell_len(text))
    if justify == "right":
        return " " * excess + text
    if justify == "center":
        return " " * (excess // 2) + text + " " * (excess - excess // 2)
    return text + " " * excess


def note_quoting_the_service(text: str) -> None:
    """`text` on stderr, redacted and with its escape codes shown as text: a note that quotes an
    error of the service (which may repeat the key or carry escape codes) is said by the
    command, not by the error handler that treats every other message so."""
    from surveyctl.api.secrets import redact
    from surveyctl.render.values import printable_lines

    click.echo(printable_lines(redact(text)), err=True)
