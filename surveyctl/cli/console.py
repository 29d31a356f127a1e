"""Where output goes and how it looks: colour, width and progress, decided in one place.

- Colour only on a terminal, never with `--no-color`, `NO_COLOR` set (https://no-color.org)
  or `TERM=dumb`.
- Piped or redirected, tables take the width they need: nothing is cut or wrapped at 80
  columns because there is no terminal to measure.
- Progress goes to stderr: a bar on a terminal, one line per step otherwise (CI logs, also
  when a CI runner attaches a pseudo-terminal: see `redraws`).

rich is imported when a console is made, so `surveyctl --help` stays light.
"""

from __future__ import annotations

import errno
import os
import sys
from functools import cache
from typing import IO, TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# Width of a table written to a pipe or file: as wide as its content, within reason.
PIPE_WIDTH = 10_000


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
    over two lines, or cut with an ellipsis, would pass by the redaction of the output."""
    return _plain_table_class()(box=None, pad_edge=False, **options)


@cache
def _plain_table_class() -> type:
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

    return PlainTable


def note_quoting_the_service(text: str) -> None:
    """`text` on stderr, redacted and with its escape codes shown as text: a note that quotes an
    error of the service (which may repeat the key or carry escape codes) is said by the
    command, not by the error handler that treats every other message so."""
    from surveyctl.api.secrets import redact
    from surveyctl.render.values import printable_lines

    click.echo(printable_lines(redact(text)), err=True)
