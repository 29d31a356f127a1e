"""The output streams every command writes through (`surveyctl.redacting`): a key written in
pieces never shows, in any spelling `redact` knows, and text that could begin no key goes out at
once; what could begin one waits for the next piece, or for a question's answer.

These run in this process (no command in a process of its own), so that the `secrets` target of
benchmarks/mutation.py can tell its faults by them.
"""

from __future__ import annotations

import io
import json
import sys

from surveyctl.api.secrets import REDACTED

# `/` and `"`: JSON writes the quote as `\"`, and a service may write the slash as `\/`.
SECRET = 'sk-live/7f3c"9a1e5b2d4c6e'
# The spellings of SECRET that redact takes out, as a text, a JSON document or a CSV cell may
# carry it.
SPELLINGS = (
    SECRET,
    json.dumps(SECRET)[1:-1],
    SECRET.replace("/", "\\/"),
    SECRET.replace('"', '""'),
    "sk-live%2F7f3c",
)

# What a command writes in pieces: a title, then the rest of its line.
SPLIT_LINE = f"Tracker {SECRET} wave 2\n"


def _only_secret(monkeypatch, secret: str) -> None:
    """`secret` the one secret this process holds (not the keys and passwords earlier tests
    made it remember)."""
    from surveyctl.api import secrets

    monkeypatch.setattr(secrets, "_SECRETS", set())
    secrets.remember(secret)


def _written_through_the_streams(monkeypatch, write) -> str:
    """What reaches stdout when `write(stdout)` writes through the streams every command gets
    (`surveyctl.cli.streams.redacting`)."""
    from surveyctl.cli.streams import redacting

    _only_secret(monkeypatch, SECRET)
    terminal = io.StringIO()
    monkeypatch.setattr("sys.stdout", terminal)
    with redacting():
        write(sys.stdout)
    return terminal.getvalue()


# Whole spellings of SECRET beside SPELLINGS' first four (its fifth is a piece of the key):
# cut inside an escape (`%2`, `\u00`), the start of the key is not yet told from other text.
WHOLE_ESCAPED = (
    SECRET.replace("/", "%2F").replace('"', "%22"),
    SECRET.replace("/", "\\u002f").replace('"', "\\u0022"),
)


def test_the_key_split_at_any_point_over_two_writes_never_shows(monkeypatch):
    for spelling in SPELLINGS[:4] + WHOLE_ESCAPED:
        line = SPLIT_LINE.replace(SECRET, spelling)
        for cut in range(len(line) + 1):

            def in_two(stdout, cut=cut, line=line):
                stdout.write(line[:cut])
                stdout.flush()  # as click.echo and rich do after every call
                stdout.write(line[cut:])
                stdout.flush()

            shown = _written_through_the_streams(monkeypatch, in_two)
            assert shown == f"Tracker {REDACTED} wave 2\n", (spelling, cut)


def test_the_key_split_over_two_writes_of_bytes_never_shows(monkeypatch):
    line = SPLIT_LINE.encode("utf-8")
    for cut in range(len(line) + 1):

        def in_two(stdout, cut=cut):
            stdout.buffer.write(line[:cut])
            stdout.buffer.flush()
            stdout.buffer.write(line[cut:])

        assert _written_through_the_streams(monkeypatch, in_two) == (
            f"Tracker {REDACTED} wave 2\n"
        ), cut


def test_a_line_that_could_begin_no_secret_is_written_at_once_before_any_flush(monkeypatch):
    seen = []

    def progress(stdout):
        stdout.write("\rReading page 3 of 9")
        seen.append(sys.stdout.stream.getvalue())  # the terminal, before any flush

    _written_through_the_streams(monkeypatch, progress)
    assert seen == ["\rReading page 3 of 9"]


def test_a_question_whose_end_could_begin_a_secret_is_shown_whole_before_the_answer_is_read(
    monkeypatch,
):
    from surveyctl.cli import confirm
    from surveyctl.cli.streams import redacting

    # A state database's password may hold spaces: this one begins as every question ends.
    _only_secret(monkeypatch, ": pass-7f3c9a1e")
    terminal = io.StringIO()
    shown_when_read = []

    class Person(io.StringIO):
        def readline(self, *args):
            shown_when_read.append(terminal.getvalue())
            return "no\n"

    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr("sys.stdin", Person())
    with redacting():
        assert confirm.typed_yes("Apply these changes to environment 'local'") is False
    assert shown_when_read == [
        "Apply these changes to environment 'local'? Only 'yes' will be accepted: "
    ]
