"""`redact`: every spelling of a key an error, a log or a traceback may carry becomes
"[redacted]", whole, and nothing else of the text changes.

Each test starts from no key remembered and no pattern made, so that what it shows is what
`redact` does for that key alone, not what an earlier test left behind.
"""

from __future__ import annotations

import pytest

from surveyctl.api import secrets
from surveyctl.api.secrets import REDACTED, open_end, redact, redact_clipped, redact_open, remember
from surveyctl.config_checks import MIN_KEY_LENGTH


@pytest.fixture(autouse=True)
def no_key_remembered(monkeypatch):
    monkeypatch.setattr(secrets, "_SECRETS", set())
    monkeypatch.setattr(secrets, "_ESCAPED", {})
    monkeypatch.setattr(secrets, "_OPENINGS", {})


def test_a_key_of_the_shortest_accepted_length_is_redacted():
    key = "k" * MIN_KEY_LENGTH
    remember(key)
    assert redact(f"token {key} refused") == "token [redacted] refused"


def test_a_key_shorter_than_that_is_not_remembered_and_words_stay():
    remember("k" * (MIN_KEY_LENGTH - 1))
    assert redact("token kkkkkkk refused") == "token kkkkkkk refused"


def test_every_place_a_key_appears_is_redacted():
    remember("sk-live-7f3c9a1e")
    assert redact("sk-live-7f3c9a1e, again sk-live-7f3c9a1e") == "[redacted], again [redacted]"


def test_a_longer_key_holding_a_shorter_one_is_redacted_whole():
    # Redacting the shorter first would leave the longer key's tail on the screen.
    remember("sk-live-7f3c9a1e")
    remember("key:sk-live-7f3c9a1e5b2d")  # sorts before the shorter one, by its letters
    assert redact("token key:sk-live-7f3c9a1e5b2d") == "token [redacted]"


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        # str's repr: a pasted line end or tab written as an escape
        ("sk-live-7f3c9a1e\n", "'sk-live-7f3c9a1e\\n'"),
        ("sk-live\t7f3c9a1e", "'sk-live\\t7f3c9a1e'"),
        # str's repr of a character it cannot print
        ("sk-live-7f3c9a1e\u200b", "'sk-live-7f3c9a1e\\u200b'"),
        ("sk-live-7f3c9a1e\U000e0001", "'sk-live-7f3c9a1e\\U000e0001'"),
        # bytes' repr of a header value: each byte of a character outside ASCII escaped
        ("sk-live-7f3c9a1e\u00e9", "b'sk-live-7f3c9a1e\\xc3\\xa9'"),
        ("sk-live-7f3c9a1e\u20ac", "b'sk-live-7f3c9a1e\\xe2\\x82\\xac'"),
    ],
    ids=["line end", "tab", "zero-width space", "language tag", "latin-1", "euro sign"],
)
def test_a_key_as_python_shows_it_is_redacted_whole(key, shown):
    remember(key)
    quote = "b'" if shown.startswith("b") else "'"
    assert redact(f"invalid header value {shown}") == f"invalid header value {quote}[redacted]'"


def test_a_key_pasted_with_spaces_around_it_is_redacted_with_and_without_them():
    remember("  sk-live-7f3c9a1e ")
    assert redact("sent '  sk-live-7f3c9a1e '") == "sent '[redacted]'"
    assert redact("sent sk-live-7f3c9a1e") == "sent [redacted]"


@pytest.mark.parametrize(
    "shown",
    [
        "sk\\/live<7f3c>9a1e&x",  # PHP's json_encode: \/
        "sk/live\\u003c7f3c\\u003e9a1e\\u0026x",  # Go's encoding/json
        "sk/live\\u003C7f3c\\u003E9a1e\\u0026x",  # the same in capitals
        "sk\\x2flive<7f3c>9a1e&x",  # a byte escape
        "sk\\x2Flive<7f3c>9a1e&x",  # the same in capitals
        "sk%2Flive%3C7f3c%3E9a1e%26x",  # percent-encoded, as in a URL
        "sk%2flive%3c7f3c%3e9a1e%26x",
    ],
)
def test_a_key_escaped_as_encoders_write_it_is_redacted(shown):
    remember("sk/live<7f3c>9a1e&x")
    assert redact(f"unknown token {shown}.") == "unknown token [redacted]."


def test_an_escaped_key_is_redacted_each_time_it_is_shown():
    remember("sk/live<7f3c>9a1e&x")
    text = "first sk\\/live<7f3c>9a1e&x then sk%2Flive%3C7f3c%3E9a1e%26x"
    assert redact(text) == "first [redacted] then [redacted]"
    assert redact(text) == "first [redacted] then [redacted]"  # the pattern, kept, still works


def test_a_key_in_a_quoted_csv_cell_is_redacted_with_its_quotes_doubled():
    remember('sk-live"7f3c"9a1e')
    assert redact('1,"Tracker sk-live""7f3c""9a1e",en_US') == '1,"Tracker [redacted]",en_US'


def test_a_character_outside_latin_1_is_matched_only_as_itself_or_its_unicode_escape():
    remember("sk-live-7f3c\u20ac9a1e")
    assert redact("k sk-live-7f3c\\u20ac9a1e") == "k [redacted]"
    assert redact("k sk-live-7f3c\\u20AC9a1e") == "k [redacted]"
    assert redact("k sk-live-7f3c%209a1e") == "k sk-live-7f3c%209a1e"  # not a spelling of it


def test_text_without_the_key_is_left_as_it_is():
    remember("sk-live-7f3c9a1e")
    text = "sk-live-7f3c9a1 and 7f3c9a1e on sk-live-7f3c9a1f\\n, None of them the key"
    assert redact(text) == text


def test_a_key_holding_a_byte_the_environment_could_not_decode_is_redacted():
    # Python reads such a byte of an environment variable as a lone surrogate, which UTF-8
    # cannot encode: the key's bytes are still spelt out, never an encoding error.
    key = "sk-live-7f3c9a1e\udcff"
    remember(key)
    assert redact(f"value {key!r}") == "value '[redacted]'"
    shown = repr(key.encode("utf-8", "backslashreplace"))
    assert redact(f"value {shown}") == "value b'[redacted]'"


def test_a_key_straddling_the_cut_of_a_clipped_text_leaves_none_of_its_characters():
    key = "sk-live-7f3c9a1e"
    remember(key)
    shown = redact_clipped("x" * 295 + " " + key + " refused", 300)
    assert shown == "x" * 295 + " [red..."
    assert "sk-l" not in shown


def test_a_clipped_text_keeps_its_first_characters_when_keys_before_the_cut_shorten_it():
    key = "sk-live-7f3c9a1e5b2d4c6e8a0b"
    remember(key)
    text = f"{key} " * 40 + "tail"  # a key's end would move under the cut once redacted
    assert redact_clipped(text, 300) == ("[redacted] " * 40)[:300] + "..."


def test_a_text_shorter_than_the_cut_is_only_redacted():
    remember("sk-live-7f3c9a1e")
    assert redact_clipped("token sk-live-7f3c9a1e refused", 300) == "token [redacted] refused"


def test_a_text_ending_in_the_first_characters_of_the_key_could_begin_it():
    remember("sk-live-7f3c9a1e")
    assert open_end("renamed to sk-li") == len("sk-li")


def test_a_text_whose_end_begins_no_spelling_of_the_key_holds_nothing_back():
    remember("sk-live-7f3c9a1e")
    assert open_end("renamed to sk-lime") == 0
    assert open_end("renamed to sk-live-7f3c9a1e") == 0  # whole: redact takes it out


@pytest.mark.parametrize(
    "end", ["sk\\/li", "sk\\", "sk%2", "sk%2f", "sk\\u00", "sk\\U00", "sk\\U002F", "sk\\x2"]
)
def test_a_text_ending_in_the_key_escaped_could_begin_it_even_cut_inside_an_escape(end):
    remember("sk/live<7f3c>9a1e&x")
    assert open_end(f"unknown token {end}") == len(end)


def test_the_key_with_every_character_escaped_could_begin_it_until_its_last_one():
    key = "sk-live-7f3c9a1e"
    remember(key)
    escaped = "".join(f"\\u{ord(char):04x}" for char in key)
    assert open_end(f"token {escaped[:-1]}") == len(escaped) - 1


def test_a_text_ending_in_the_key_as_bytes_repr_writes_it_could_begin_it():
    remember("sk-live-7f3c9a1e\u20ac")
    end = "sk-live-7f3c9a1e\\xe2\\x82"
    assert open_end(f"b'{end}") == len(end)


def test_the_key_in_other_capitals_is_another_text_and_left_as_it_is():
    remember("sk-live-7f3c9a1e")
    assert redact("token SK-LIVE-7F3C9A1E") == "token SK-LIVE-7F3C9A1E"
    assert redact("token s\\K-live-7f3c9a1e") == "token s\\K-live-7f3c9a1e"  # `k` escaped


def test_a_text_that_is_the_first_characters_of_the_key_could_begin_it():
    remember("sk-live-7f3c9a1e")
    assert open_end("sk-li") == len("sk-li")


def test_the_start_of_the_key_right_after_a_character_it_could_begin_with_is_found():
    remember("sk-live-7f3c9a1e")
    assert open_end("token ssk-li") == len("sk-li")


def test_the_whole_key_followed_by_more_text_holds_nothing_back():
    remember("sk-live-7f3c9a1e")
    assert open_end("sk-live-7f3c9a1e is the key") == 0


def test_a_space_pasted_before_the_key_is_held_with_its_first_characters():
    remember(" sk-live-7f3c9a1e")
    assert open_end("token  sk-li") == len(" sk-li")


def test_a_key_holding_a_backslash_could_begin_where_the_backslash_stands_alone():
    # `\\` then `\u0063` is the key's `\` as itself and its `c` escaped, not an escaped `\`.
    remember("ab\\cdefgh")
    assert open_end("token ab\\\\u0063d") == len("ab\\\\u0063d")


def test_redact_open_passes_the_text_on_redacted_and_holds_what_could_begin_the_key():
    remember("sk-live-7f3c9a1e")
    assert redact_open("token sk-live-7f3c9a1e, then sk-li") == ("token [redacted], then ", "sk-li")


def test_redact_open_of_a_text_no_spelling_of_the_key_begins_in_holds_nothing():
    remember("sk-live-7f3c9a1e")
    assert redact_open("page 3 of 9") == ("page 3 of 9", "")


def test_a_text_that_is_the_key_alone_is_redacted():
    remember("sk-live-7f3c9a1e")
    assert redact("sk-live-7f3c9a1e") == REDACTED


def test_a_text_shorter_than_one_key_still_has_a_shorter_key_redacted():
    remember("sk-live-7f3c9a1e5b2d4c6e8a0b")
    remember("pw-7f3c9a1e")
    assert redact("pw-7f3c9a1e") == REDACTED


def test_a_text_ending_in_the_first_character_of_the_key_cut_in_its_percent_escape_could_begin_it():
    # The key's next character has no percent escape: only the first one tells this end.
    remember("s\u20ack-live-7f3c")
    assert open_end("token %7") == len("%7")


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("sk-live-7f3c9a1e%", "sk-live-7f3c9a1e%25"),
        ("sk-live-7f3c9a1e%", "sk-live-7f3c9a1e\\u0025"),
        ("sk-live-7f3c9a1e\\", "sk-live-7f3c9a1e\\u005c"),
        ("sk-live-7f3c9a1e\\", "sk-live-7f3c9a1e\\x5c"),
        ("sk-live-7f3c9a1u", "sk\\u002dlive\\u002d7f3c9a1\\u0075"),
        ("sk\\live-7f3c9a1e\\", "sk\\live-7f3c9a1e\\\\"),
    ],
    ids=[
        "percent-encoded",
        "unicode escape",
        "backslash",
        "backslash as a byte",
        "every escape",
        "backslash after a backslash",
    ],
)
def test_a_key_whose_last_character_is_escaped_is_redacted_with_all_of_its_escape(key, shown):
    remember(key)
    assert redact(f"token {shown} refused") == "token [redacted] refused"


def test_a_text_as_long_as_the_cut_is_not_marked_as_cut():
    remember("sk-live-7f3c9a1e")
    assert redact_clipped("x" * 300, 300) == "x" * 300


def test_a_long_text_is_cut_while_no_key_is_remembered():
    assert redact_clipped("x" * 400, 300) == "x" * 300 + "..."


def test_a_key_beginning_with_two_backslashes_could_begin_where_its_escapes_part_two_ways():
    # `\\` is the key's first two backslashes as themselves, or its first one escaped; only
    # the first way goes on to the `0` escaped as `\u0030`.
    remember("\\\\0\\k3y-7f3c9a1e")
    assert open_end("token \\\\\\u0030") == len("\\\\\\u0030")


def _debug_log(record_text: str) -> str:
    """What the `--debug` log handler writes of one record of surveyctl.http."""
    import io
    import logging

    stream = io.StringIO()
    handler = secrets.redacting_handler(stream, "%(name)s %(message)s")
    handler.handle(logging.makeLogRecord({"name": "surveyctl.http", "msg": record_text}))
    return stream.getvalue()


def test_the_debug_log_takes_the_key_out_of_each_record_itself():
    # The log's own stream may not redact (a handler is given any stream).
    remember("sk-live-7f3c9a1e")
    assert _debug_log("> GET /surveys?token=sk-live-7f3c9a1e") == (
        "surveyctl.http > GET /surveys?token=[redacted]\n"
    )


def test_the_debug_log_names_the_logger_of_each_record():
    assert _debug_log("< 200 /surveys") == "surveyctl.http < 200 /surveys\n"


def test_a_key_whole_at_the_end_that_its_last_escape_may_go_on_from_is_held_as_it_came():
    # `%` may be the first character of `%25`: redacted now, `25` would follow "[redacted]".
    remember("sk-live-7f3c9a1e%")
    assert redact_open("token sk-live-7f3c9a1e%") == ("token ", "sk-live-7f3c9a1e%")


def test_a_key_whole_at_the_end_with_its_last_escape_cut_is_held_as_it_came():
    remember("sk-live-7f3c9a1e\\")
    assert redact_open("token sk-live-7f3c9a1e\\u00") == ("token ", "sk-live-7f3c9a1e\\u00")


def test_a_key_whole_at_the_end_that_no_spelling_goes_on_from_is_redacted_at_once():
    remember("sk-live-7f3c9a1e")
    assert redact_open("token sk-live-7f3c9a1e") == ("token [redacted]", "")


def test_a_key_held_as_it_came_is_redacted_with_the_rest_of_its_escape():
    remember("sk-live-7f3c9a1e%")
    shown, held = redact_open("token sk-live-7f3c9a1e%")
    assert (shown, redact_open(held + "25 refused")) == ("token ", ("[redacted] refused", ""))


def test_a_key_whose_repr_ends_in_a_backslash_is_held_with_its_escape_cut():
    # repr doubles the key's last backslash; `_spelled` lets that one go on as `\u005c` too.
    remember("sk-live-7f3c9a1e\\")
    assert redact_open("token 'sk-live-7f3c9a1e\\\\u0") == ("token '", "sk-live-7f3c9a1e\\\\u0")


def test_what_could_begin_the_key_after_a_key_that_took_its_first_character_is_held_from_that_key():
    # The key as it is takes `\` as the rest of its last character's escape (`\\`), and that
    # `\` begins `\xc3`, the key's bytes repr: held from where the first key begins.
    key = "\u00e9k-live-7f3c9a1e\\"
    remember(key)
    assert redact_open(f"token {key}\\xc3") == ("token ", f"{key}\\xc3")


def test_a_text_with_the_key_whose_end_could_begin_it_holds_that_end_alone():
    remember("sk-live-7f3c9a1e")
    assert redact_open("sk-live-7f3c9a1e, sk-li") == ("[redacted], ", "sk-li")


def test_a_csv_cell_with_the_key_quoted_in_it_is_held_from_its_doubled_quote():
    # `"sk-live-7f3c9a1e"` is whole after the cell's first `""`; its CSV spelling `""...""`
    # begins one character before it and is not whole yet.
    remember('"sk-live-7f3c9a1e"')
    assert redact_open('1,"Tracker ""sk-live-7f3c9a1e"') == ('1,"Tracker ', '""sk-live-7f3c9a1e"')


def test_a_csv_cell_with_the_key_and_all_of_its_last_escape_holds_nothing_back():
    remember('sk"live-7f3c9a1e%')
    assert redact_open('token sk""live-7f3c9a1e%25') == ("token [redacted]", "")


def test_a_csv_cell_with_the_key_then_what_goes_on_no_escape_of_its_end_is_redacted_at_once():
    # `u0` begins `\u0025`, an escape of `%`, but not one that begins with `%`.
    remember('sk"live-7f3c9a1e%')
    assert redact_open('token sk""live-7f3c9a1e%u0') == ("token [redacted]u0", "")


def test_a_secret_of_spaces_alone_could_begin_where_its_spaces_begin():
    # Stripped, nothing is left to escape: only the secret as it is is looked for.
    remember(" " * MIN_KEY_LENGTH)
    assert open_end("token   ") == 3
