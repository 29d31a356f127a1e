"""The secrets of this process, and `redact`, which takes them out of any text a person may see.

Every client registers its API key when it is made, and the PostgreSQL state its DSN and
password; everything surveyctl prints and the files it writes for people pass through `redact`
on their way out (`surveyctl.redacting`). This module imports nothing heavy (nor does the
package, which loads its client on first use), so the CLI's error path and the environment's
key can use it without loading the HTTP stack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from surveyctl.config_checks import MIN_KEY_LENGTH

REDACTED = "[redacted]"
_SECRETS: set[str] = set()
_ESCAPED: dict[str, re.Pattern[str]] = {}
_OPENINGS: dict[str, _Opening] = {}


def remember(api_key: str) -> None:
    """Registers a key to redact. Keys shorter than MIN_KEY_LENGTH are refused when they are
    read from the environment (surveyctl.config), and would take ordinary words with them (a
    password that short stays for the state database's own messages to take out)."""
    if len(api_key) >= MIN_KEY_LENGTH:
        _SECRETS.add(api_key)


def holds_any() -> bool:
    """Whether any secret was registered: until one is, `redact` changes nothing."""
    return bool(_SECRETS)


def redact(text: str) -> str:
    """`text` without any API key a client of this process holds, in any of the spellings an
    error message or a raw body may use: as is, stripped, escaped as Python shows str and bytes
    values (requests' InvalidHeader repeats the header value that way), its `"` doubled as in
    a quoted CSV cell, and with any of its characters escaped as JSON encoders write them
    (`\\/`, `\\u003c`) or percent-encoded."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        stripped = secret.strip()
        if len(text) < len(stripped):
            continue  # every spelling is at least as long (a piece written alone)
        opening = _opening(secret)
        for form, pattern in zip(opening.spellings, opening.spelled, strict=True):
            text = text.replace(form, REDACTED) if pattern is None else pattern.sub(REDACTED, text)
        if stripped:
            text = _escaped(stripped).sub(REDACTED, text)
    return text


def redact_clipped(text: str, limit: int, more: str = "...") -> str:
    """`text` redacted and then cut to `limit` characters (`more` marks a cut). Cutting first
    would leave the first characters of a key that straddles the cut; only as much of a long
    text as the cut keeps is redacted (a body of the service may be megabytes)."""
    # A key's longest spelling: `\\xNN` for each byte of a character of 4 UTF-8 bytes.
    margin = 16 * max(map(len, _SECRETS), default=0)
    window = limit + margin
    while True:
        shown = redact(text[:window])
        if window >= len(text):
            return shown if len(shown) <= limit else shown[:limit] + more
        if len(shown) >= limit + margin:
            # What the window cut off a key is in its last `margin` characters, beyond `limit`.
            return shown[:limit] + more
        window *= 2  # keys redacted in the window shortened it: read on


def redact_open(text: str) -> tuple[str, str]:
    """`text` redacted, in two parts: what can be passed on, and its last characters that
    could begin a secret (`open_end`), to be held until the next piece of text.

    When a secret was taken out, what could begin a spelling is looked for in the text as it
    came: redacting may have cut it. A key ending in `%` whole at the end may go on as
    `%25` in the next piece, a key `"sk-x"` at the end of `""sk-x"` as the CSV cell's
    `""sk-x""`; redacted now, the rest would show after "[redacted]", where the whole text
    redacted at once shows none of it. Such a tail is held as it came, from the start of the
    spelling that took part of it, and passes `redact` with the next piece, or alone at the
    end: what goes on is always the start of the text given, redacted as a whole."""
    if not any(_opening(secret).firsts.search(text) for secret in _SECRETS):
        return text, ""  # no character a spelling begins with: nothing to take out or hold
    shown = redact(text)
    cut = len(text) - open_end(text)
    if cut == len(text):
        return shown, ""
    if shown == text:
        return text[:cut], text[cut:]  # nothing taken out: what is held is as it came
    while redact(text[:cut]) + redact(text[cut:]) != shown:
        cut -= 1  # inside a spelling redact takes out whole: held from where that begins
    return redact(text[:cut]), text[cut:]


def open_end(text: str) -> int:
    """How many of the last characters of `text` could be the first part of a secret, in a
    spelling `redact` knows (0 when none could). A writer that passes text on in pieces holds
    these back until the next piece shows whether the rest of the secret follows: redacting
    each piece alone would let a secret split over two of them through."""
    longest = 0
    for secret in _SECRETS:
        longest = max(longest, _open_end(secret, text))
    return longest


def _open_end(secret: str, text: str) -> int:
    reach, firsts, heads, *_ = _opening(secret)
    # A spelling begun earlier is longer than every spelling: no text that follows ends it.
    position = max(0, len(text) - reach + 1)
    while (found := firsts.search(text, position)) is not None:
        position = found.start()
        if heads.match(text, position):
            tail = text[position:]  # the first that may begin a spelling is the longest
            if _begins(secret, tail):
                return len(tail)
        position += 1
    return 0


def _begins(secret: str, tail: str) -> bool:
    """Whether `tail` is the start of a spelling of `secret`, cut before its end."""
    opening = _opening(secret)
    for form, pattern in zip(opening.spellings, opening.spelled, strict=True):
        if len(tail) < len(form) and form.startswith(tail):
            return True
        if pattern is not None and tail.startswith(form) and _cut_rest(form[-1], tail[len(form) :]):
            return True  # `_spelled`'s: the form whole, and its last character's escape cut
    if opening.foreign.search(tail):
        return False
    return _begins_escaped(secret.strip(), tail)


def _cut_rest(last: str, rest: str) -> bool:
    """Whether `rest` (perhaps empty) is the rest of an escape of `last` that begins with
    `last` itself, cut before its end: `2` of `%25`, `u00` of `\\u005c`."""
    for escape, folded in _forms(last):
        after = escape[1:]
        if escape[0] == last and len(rest) < len(after):
            if (rest.lower() if folded else rest) == after[: len(rest)]:
                return True
    return False


# How many characters of a secret a pattern of `_opening` looks at: text that begins none of
# them (nearly all) is passed over by patterns, not character by character.
_HEAD = 3


class _Opening(NamedTuple):
    """What is known of a secret's spellings, made once a secret."""

    reach: int  # the length of its longest spelling
    firsts: re.Pattern[str]  # the characters a spelling begins with
    heads: re.Pattern[str]  # where one may begin: its first `_HEAD` characters, or fewer
    spellings: list[str]  # its spellings written out, longest first (`_escaped`'s are not)
    spelled: list[re.Pattern[str] | None]  # `_spelled` of each of them
    # A character that no text `_escaped` matches holds: a tail with one begins no escaped
    # spelling, which `_begins_escaped` would take the length of the key to find.
    foreign: re.Pattern[str]


def _opening(secret: str) -> _Opening:
    """The `_Opening` of `secret`."""
    opening = _OPENINGS.get(secret)
    if opening is None:
        spellings = _spellings(secret)
        stripped = secret.strip()
        escaped = sum(max(len(form) for form, _ in _forms(char)) for char in stripped)
        reach = max(escaped, *map(len, spellings))
        firsts = {form[0] for form in spellings}
        heads = [_head(form, map(re.escape, form)) for form in spellings]
        if stripped:
            firsts |= {form[0] for form, _ in _forms(stripped[0])}
            heads.append(_head(stripped, map(_character, stripped)))
        first = re.compile("[" + "".join(map(re.escape, sorted(firsts))) + "]")
        spelled = [_spelled(form) for form in spellings]
        known = {
            letter
            for char in stripped
            for form, folded in _forms(char)
            for letter in (form.lower() + form.upper() if folded else form)
        }
        foreign = re.compile("[^" + "".join(map(re.escape, sorted(known))) + "]" if known else ".")
        heads_pattern = re.compile("|".join(heads))
        opening = _Opening(reach, first, heads_pattern, spellings, spelled, foreign)
        _OPENINGS[secret] = opening
    return opening


def _head(characters: str, patterns: Iterable[str]) -> str:
    """A pattern of the first `_HEAD` of `characters`, each matched by its pattern of
    `patterns`, or of fewer of them, the last perhaps a cut escape, then the end of the text."""
    pattern = ""  # the innermost `(?:|\\Z)` matches anything that follows
    for char, whole in reversed(list(zip(characters, patterns, strict=True))[:_HEAD]):
        cut = "|".join(_cut_forms(char))  # never empty: a backslash before it is one escape
        pattern = f"(?:{whole}(?:{pattern}|\\Z)|(?:{cut})\\Z)"
    return pattern


def _cut_forms(char: str) -> list[str]:
    """Patterns of the escapes of `char` cut short (`\\`, `\\u0`, `%7`)."""
    cuts = set()
    for form, folded in _forms(char):
        for end in range(1, len(form)):
            cuts.add(f"(?i:{re.escape(form[:end])})" if folded else re.escape(form[:end]))
    return sorted(cuts)


def _begins_escaped(secret: str, tail: str) -> bool:
    """Whether `tail` is the start of a text `_escaped(secret)` matches, cut before its end:
    each character as written or escaped, the last one perhaps cut in the middle of its
    escape (`\\u00`)."""
    paths, seen = [(0, 0)], set()
    while paths:
        at, index = paths.pop()
        if at == len(tail) and index < len(secret):
            return True
        if at == len(tail) or index == len(secret) or (at, index) in seen:
            continue
        seen.add((at, index))
        for form, folded in _forms(secret[index]):
            piece = tail[at : at + len(form)]
            if folded:
                piece = piece.lower()
            if piece == form:
                paths.append((at + len(form), index + 1))
            elif len(piece) < len(form) and form.startswith(piece):
                return True
    return False


def redacting_handler(stream, fmt: str):  # -> logging.Handler; logging is imported late
    """A logging handler writing to `stream` records formatted by `fmt` and then redacted: the
    `--debug` log shows the records of urllib3 as well as surveyctl's, and urllib3 names the
    URL of a request it retries, which may be one a redirect gave, key and all."""
    import logging  # only for --debug: it costs every start 20 ms

    class RedactingFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return redact(super().format(record))

    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter(fmt))
    return handler


def _spellings(secret: str) -> list[str]:
    forms = {
        secret,
        secret.strip(),
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "backslashreplace"))[2:-1],
        secret.replace('"', '""'),  # a CSV or TSV cell quoted: an export of the service's text
    }
    return sorted((form for form in forms if form), key=len, reverse=True)


def _spelled(form: str) -> re.Pattern[str] | None:
    """A pattern of `form` whose last character may go on into its escape, or None when no
    escape of it begins with that character (`form` found is then all of that spelling): the
    key as is found in `...%25` takes the `25` with it, which would else be left after
    "[redacted]", and so does one ending in `\\` found in `...\\u005c`."""
    last = form[-1]
    rests = [escape[1:] for escape, _ in _forms(last) if escape[0] == last and len(escape) > 1]
    pattern = None
    if rests:
        either = "|".join(f"(?i:{re.escape(rest)})" for rest in rests)
        pattern = re.compile(f"{re.escape(form)}(?:{either})?")
    return pattern


def _escaped(secret: str) -> re.Pattern[str]:
    """A pattern of `secret` with each character as written or escaped: a service that repeats
    the key in a JSON body may escape `/` as `\\/` (PHP) or `<`, `>`, `&` as `\\u003c` (Go), and
    `--debug` shows bodies as they came."""
    pattern = _ESCAPED.get(secret)
    if pattern is None:
        body = "".join(_character(char) for char in secret[:-1])
        pattern = re.compile(body + _character(secret[-1], last=True))
        _ESCAPED[secret] = pattern
    return pattern


def _character(char: str, last: bool = False) -> str:
    forms = _forms(char)
    if last:
        # The longest form first: the regex takes the first alternative that lets the rest
        # match, and nothing follows the last character, so `%` before `%25` would leave `25`
        # behind. Elsewhere the order only decides how fast the text is searched.
        forms = sorted(forms, key=lambda form: len(form[0]), reverse=True)
    patterns = (f"(?i:{re.escape(form)})" if folded else re.escape(form) for form, folded in forms)
    return f"(?:{'|'.join(patterns)})"


def _forms(char: str) -> list[tuple[str, bool]]:
    """The ways an encoder writes `char`, each with whether its letters may be capitals: as
    is, after a backslash, `\\uXXXX`, and below U+0100 `\\xNN` and `%NN`."""
    code = ord(char)
    forms = [(char, False), ("\\" + char, False), (f"\\u{code:04x}", True)]
    if code < 0x100:
        forms += [(f"\\x{code:02x}", True), (f"%{code:02x}", True)]
    return forms
