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

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


def _written_in_pieces(key: str, pieces: list[str]) -> str:
    """What a writer passes on of `pieces`, each written and flushed in turn and the writer
    then closed, with `key` the one secret held."""
    from surveyctl.redacting import RedactingWriter

    with pytest.MonkeyPatch.context() as patch:
        _only_secret(patch, key)
        writer = RedactingWriter(io.StringIO())
        for piece in pieces:
            writer.write(piece)
            writer.flush()
        writer.close()
    return writer.stream.getvalue()


# The characters that an escape of them begins with, or that a spelling doubles, each with
# the ways its encoders write it: a key ending in one, cut right after it, has the rest of
# that spelling in the next piece (`25` of `%25`, `u005c` of `\u005c`).
ENDS = {
    "\\": ("\\", "\\\\", "\\u005c", "\\U005C", "\\x5c", "\\X5C", "%5c", "%5C"),
    "%": ("%", "\\%", "%25", "\\u0025", "\\U0025", "\\x25", "\\X25"),
    "u": ("u", "\\u", "\\u0075", "\\x75", "%75"),
    "x": ("x", "\\x", "\\x78", "\\u0078", "%78"),
    "U": ("U", "\\U", "\\U0055", "\\u0055", "\\X55"),
    "X": ("X", "\\X", "\\X58", "\\u0058", "%58"),
    '"': ('"', '""', '\\"', "\\u0022", "%22"),
}


@pytest.mark.parametrize(
    "last", ENDS, ids=["backslash", "percent", "u", "x", "capital U", "capital X", "quote"]
)
def test_a_key_ending_in_a_character_its_spellings_go_on_from_split_anywhere_never_shows(last):
    for end in ENDS[last]:
        line = f"Tracker sk-live-7f3c9a1e{end} wave 2\n"
        for cut in range(len(line) + 1):
            shown = _written_in_pieces("sk-live-7f3c9a1e" + last, [line[:cut], line[cut:]])
            assert shown == f"Tracker {REDACTED} wave 2\n", (end, cut)


def _spelled(key: str, forms: list[int]) -> str:
    """`key` with its character i written in its way `forms[i]` (of as is, after a
    backslash, `\\uXXXX`, `\\UXXXX`, `\\xXX`, `%XX`)."""
    ways = []
    for char, form in zip(key, forms, strict=True):
        code = ord(char)
        ways.append(
            (
                char,
                "\\" + char,
                f"\\u{code:04x}",
                f"\\U{code:04X}",
                f"\\x{code:02x}",
                f"%{code:02X}",
            )[form]
        )
    return "".join(ways)


@st.composite
def _pieces_of_a_key(draw) -> tuple[str, list[str]]:
    """A key of letters, digits, `-` and `_` ending in a character of ENDS, and a line that
    shows it in one of its spellings, cut in up to five places."""
    body = draw(st.text("abcdefXYZ0123456789-_", min_size=8, max_size=24))
    key = body + draw(st.sampled_from(sorted(ENDS)))
    forms = draw(st.lists(st.integers(0, 5), min_size=len(key), max_size=len(key)))
    spelling = draw(
        st.sampled_from(
            [
                key,
                _spelled(key, forms),
                repr(key)[1:-1],
                repr(key.encode())[2:-1],
                key.replace('"', '""'),
            ]
        )
    )
    line = f"Tracker {spelling} wave 2\n"
    cuts = sorted(draw(st.lists(st.integers(0, len(line)), max_size=5)))
    return key, [line[start:end] for start, end in zip([0, *cuts], [*cuts, len(line)], strict=True)]


@settings(max_examples=400, deadline=None)
@given(case=_pieces_of_a_key())
@example(case=("sk-live-7f3c9a1e%", ["Tracker sk-live-7f3c9a1e%", "25 wave 2\n"]))
@example(case=("sk-live-7f3c9a1e\\", ["Tracker sk-live-7f3c9a1e\\", "u005c wave 2\n"]))
@example(case=("sk-live-7f3c9a1e\\", ["Tracker sk-live-7f3c9a1e\\", "\\", " wave 2\n"]))
@example(case=("sk-live-7f3c9a1e%", ["Tracker sk-live-7f3c9a1e%2", "5", " wave 2\n"]))
def test_a_key_written_in_any_pieces_in_any_spelling_shows_only_redacted(case):
    key, pieces = case
    assert _written_in_pieces(key, pieces) == f"Tracker {REDACTED} wave 2\n"


def test_a_key_written_whole_then_the_start_of_its_bytes_repr_split_anywhere_never_shows():
    # The key as it is takes the backslash that begins `\\xc3` as the rest of its last
    # character's escape: what follows it is held from where the key begins.
    key = "\u00e9k-live-7f3c9a1e\\"
    line = f"token {key}{repr(key.encode())[2:-1]} refused\n"
    for cut in range(len(line) + 1):
        shown = _written_in_pieces(key, [line[:cut], line[cut:]])
        assert shown == f"token {REDACTED}{REDACTED} refused\n", cut


def test_a_key_ending_in_a_quote_in_a_csv_cell_split_anywhere_never_shows():
    # Cut after the key's first quote of the cell's `""`, the key as it is is whole before
    # the cut, and the CSV spelling, which begins before it, not yet.
    key = '"sk-live-7f3c9a1e"'
    line = '1,"Tracker ""sk-live-7f3c9a1e""",en_US\n'  # the cell's quotes doubled
    for cut in range(len(line) + 1):
        shown = _written_in_pieces(key, [line[:cut], line[cut:]])
        assert shown == f'1,"Tracker {REDACTED}",en_US\n', cut


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


def _writer(monkeypatch, stream=None):
    """A RedactingWriter over `stream` (a text buffer by default), SECRET the one secret."""
    from surveyctl.redacting import RedactingWriter

    _only_secret(monkeypatch, SECRET)
    return RedactingWriter(io.StringIO() if stream is None else stream)


def test_what_could_begin_the_key_is_written_when_the_writer_closes(monkeypatch):
    writer = _writer(monkeypatch)
    writer.write("Renaming Tracker to sk-")
    assert writer.stream.getvalue() == "Renaming Tracker to "
    writer.close()
    assert writer.stream.getvalue() == "Renaming Tracker to sk-"


def test_what_could_begin_the_key_is_written_before_a_question(monkeypatch):
    from surveyctl.redacting import nothing_held

    writer = _writer(monkeypatch)
    writer.write("Renaming Tracker to sk-")
    with nothing_held():
        assert writer.stream.getvalue() == "Renaming Tracker to sk-"


def test_the_key_written_while_a_question_waits_is_redacted(monkeypatch):
    from surveyctl.redacting import nothing_held

    writer = _writer(monkeypatch)
    with nothing_held():
        writer.write(f"Rename survey '{SECRET}'? ")
    assert writer.stream.getvalue() == f"Rename survey '{REDACTED}'? "


def test_text_passes_as_it_is_before_any_key_can_be_held(monkeypatch):
    # `surveyctl --help` never loads surveyctl.api, where secrets are held.
    writer = _writer(monkeypatch)
    monkeypatch.delitem(sys.modules, "surveyctl.api.secrets")
    writer.write("Usage: surveyctl [OPTIONS] sk-")
    writer.close()
    assert writer.stream.getvalue() == "Usage: surveyctl [OPTIONS] sk-"


def test_lines_given_together_are_written_in_order_with_the_key_redacted(monkeypatch):
    writer = _writer(monkeypatch)
    writer.writelines(["Tracker ", SECRET[:5], SECRET[5:], " wave 2\n"])
    writer.close()
    assert writer.stream.getvalue() == f"Tracker {REDACTED} wave 2\n"


def _bytes_written(monkeypatch, *pieces: bytes) -> bytes:
    """What reaches a UTF-8 file when `pieces` are written to the streams' bytes side."""
    raw = io.BytesIO()
    writer = _writer(monkeypatch, io.TextIOWrapper(raw, encoding="utf-8"))
    for piece in pieces:
        writer.buffer.write(piece)
    writer.close()
    return raw.getvalue()


def test_bytes_that_are_not_utf8_are_written_as_they_came(monkeypatch):
    assert _bytes_written(monkeypatch, b"caf\xe9 au lait\n") == b"caf\xe9 au lait\n"


def test_bytes_that_are_not_utf8_keep_the_text_around_them_in_the_terminals_encoding(
    monkeypatch,
):
    raw = io.BytesIO()
    writer = _writer(monkeypatch, io.TextIOWrapper(raw, encoding="latin-1"))
    writer.buffer.write("café ".encode() + b"\xff\n")
    writer.close()
    assert raw.getvalue() == b"caf\xe9 \xff\n"


def test_bytes_ending_inside_a_character_are_written_as_they_came_at_the_end(monkeypatch):
    assert _bytes_written(monkeypatch, b"price \xe2\x82") == b"price \xe2\x82"


def test_the_streams_answer_for_the_stream_they_wrap_what_they_do_not_change(monkeypatch, tmp_path):
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as file:
        writer = _writer(monkeypatch, file)
        assert (writer.name, writer.mode) == (file.name, "w")


def test_the_streams_can_be_written_but_not_read_or_sought(monkeypatch):
    writer = _writer(monkeypatch)
    assert (writer.writable(), writer.readable(), writer.seekable()) == (True, False, False)


def test_a_value_holding_the_key_deep_in_its_data_is_said_to_hold_it(monkeypatch):
    from surveyctl.redacting import holds_secret

    _only_secret(monkeypatch, SECRET)
    assert holds_secret({"quotas": [{"quota_title": f"Tracker {SECRET}"}]})


def test_a_text_holding_the_key_is_said_to_hold_it(monkeypatch):
    from surveyctl.redacting import holds_secret

    _only_secret(monkeypatch, SECRET)
    assert holds_secret(f"Tracker {SECRET}")


def test_a_value_without_the_key_is_not_said_to_hold_it(monkeypatch):
    from surveyctl.redacting import holds_secret

    _only_secret(monkeypatch, SECRET)
    assert not holds_secret({"survey_title": "Tracker sk-live wave 2"})


def test_no_value_holds_a_secret_while_none_is_remembered(monkeypatch):
    from surveyctl.api import secrets
    from surveyctl.redacting import holds_secret

    monkeypatch.setattr(secrets, "_SECRETS", set())
    assert not holds_secret({"survey_title": SECRET})


def test_a_password_outside_the_basic_plane_is_found_in_data_as_json_writes_it(monkeypatch):
    from surveyctl.redacting import holds_secret

    _only_secret(monkeypatch, "pw-7f3c9a1e\U0001f511")
    assert holds_secret({"dsn": "postgresql://app:pw-7f3c9a1e\U0001f511@db/state"})


def test_a_text_holding_a_password_with_a_line_break_and_a_quote_is_said_to_hold_it(monkeypatch):
    from surveyctl.redacting import holds_secret

    _only_secret(monkeypatch, 'pw-7f3c\n"9a1e')
    assert holds_secret('password pw-7f3c\n"9a1e refused')


def test_no_value_holds_a_secret_before_surveyctl_api_is_loaded(monkeypatch):
    from surveyctl.redacting import holds_secret

    monkeypatch.delitem(sys.modules, "surveyctl.api.secrets")
    assert not holds_secret({"survey_title": SECRET})


def _written_to_one_terminal(monkeypatch, write) -> str:
    """What one terminal shows when `write(stdout, stderr)` writes through the streams every
    command gets, stdout and stderr both going to it (`2>&1`)."""
    from surveyctl.cli.streams import redacting

    _only_secret(monkeypatch, SECRET)
    terminal = io.StringIO()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setattr("sys.stderr", terminal)
    with redacting():
        write(sys.stdout, sys.stderr)
    return terminal.getvalue()


def test_a_key_begun_on_stdout_and_ended_on_stderr_never_shows_joined_on_one_terminal(
    monkeypatch,
):
    # What could begin the key waits on stdout, so stderr's line goes out before it: each
    # half shows, never the two side by side.
    def halves(stdout, stderr):
        stdout.write(f"Tracker {SECRET[:9]}")
        stderr.write(f"{SECRET[9:]} wave 2\n")

    shown = _written_to_one_terminal(monkeypatch, halves)
    assert shown == f"Tracker {SECRET[9:]} wave 2\n{SECRET[:9]}"


def test_a_key_begun_on_stderr_and_ended_on_stdout_never_shows_joined_on_one_terminal(
    monkeypatch,
):
    def halves(stdout, stderr):
        stderr.write(f"Reading {SECRET[:9]}")
        stdout.write(f"{SECRET[9:]},en_US\n")

    shown = _written_to_one_terminal(monkeypatch, halves)
    assert shown == f"Reading {SECRET[9:]},en_US\n{SECRET[:9]}"


@pytest.mark.parametrize("last", ["\\", "%"], ids=["backslash", "percent"])
def test_a_key_with_a_quote_in_a_csv_cell_ending_in_an_escape_split_anywhere_never_shows(last):
    # The cell's `""` is no escape of `"`: only the CSV spelling itself, then the rest of its
    # last character's escape, tells where the key ends.
    key = 'sk"live-7f3c9a1e' + last
    for end in (end for end in ENDS[last] if end.startswith(last)):
        line = f'1,"Tracker sk""live-7f3c9a1e{end}",en_US\n'
        for cut in range(len(line) + 1):
            shown = _written_in_pieces(key, [line[:cut], line[cut:]])
            assert shown == f'1,"Tracker {REDACTED}",en_US\n', (end, cut)
