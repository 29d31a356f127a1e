"""The secrets of this process, and `redact`, which takes them out of any text a person may see.

Every client registers its API key when it is made, and the PostgreSQL state its DSN and
password; everything surveyctl prints and the files it writes for people pass through `redact`
on their way out (`surveyctl.redacting`). This module imports nothing heavy (nor does the
package, which loads its client on first use), so the CLI's error path and the environment's
key can use it without loading the HTTP stack.
"""

from __future__ import annotations

import re

from surveyctl.config_checks import MIN_KEY_LENGTH

REDACTED = "[redacted]"
_SECRETS: set[str] = set()
_ESCAPED: dict[str, re.Pattern[str]] = {}


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
        for form in _spellings(secret):
            text = text.replace(form, REDACTED)
        if secret.strip():
            text = _escaped(secret.strip()).sub(REDACTED, text)
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


def _escaped(secret: str) -> re.Pattern[str]:
    """A pattern of `secret` with each character as written or escaped: a service that repeats
    the key in a JSON body may escape `/` as `\\/` (PHP) or `<`, `>`, `&` as `\\u003c` (Go), and
    `--debug` shows bodies as they came."""
    pattern = _ESCAPED.get(secret)
    if pattern is None:
        pattern = re.compile("".join(_character(char) for char in secret))
        _ESCAPED[secret] = pattern
    return pattern


def _character(char: str) -> str:
    code = ord(char)
    forms = [re.escape(char), re.escape("\\" + char), f"(?i:\\\\u{code:04x})"]
    if code < 0x100:
        forms += [f"(?i:\\\\x{code:02x})", f"(?i:%{code:02x})"]
    return f"(?:{'|'.join(forms)})"
