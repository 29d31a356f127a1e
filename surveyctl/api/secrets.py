"""The API keys of this process, and `redact`, which takes them out of any text a person may see.

Every client registers its key when it is made; error messages, `--debug` logs and tracebacks
pass through `redact` on their way out. This module imports nothing heavy, so the CLI's error
path can use it without loading the HTTP stack.
"""

from __future__ import annotations

from surveyctl.config_checks import MIN_KEY_LENGTH

REDACTED = "[redacted]"
_SECRETS: set[str] = set()


def remember(api_key: str) -> None:
    """Registers a key to redact. Keys shorter than MIN_KEY_LENGTH are refused when they are
    read from the environment (surveyctl.config), and would take ordinary words with them."""
    if len(api_key) >= MIN_KEY_LENGTH:
        _SECRETS.add(api_key)


def redact(text: str) -> str:
    """`text` without any API key a client of this process holds, in any of the spellings an
    error message may use (as is, stripped, or escaped as Python shows str and bytes values:
    requests' InvalidHeader repeats the header value that way)."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        for form in _spellings(secret):
            text = text.replace(form, REDACTED)
    return text


def _spellings(secret: str) -> list[str]:
    forms = {
        secret,
        secret.strip(),
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "backslashreplace"))[2:-1],
    }
    return sorted((form for form in forms if form), key=len, reverse=True)
