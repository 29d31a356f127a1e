"""Checks of the values of surveyctl.yaml that name things outside it: an environment's
name (a file and folder name under .surveyctl/) and its host (the root of every API path).

surveyctl.yaml comes with the code under review, so both are checked when it is read: a bad
one is one sentence at its line, never a file written outside the project, a request that
fails in a puzzling way, or a traceback from the URL parser.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from surveyctl.errors import ConfigError
from surveyctl.yamlsafe import MarkedDict

# An environment's name names its state file and catalogue cache under .surveyctl/.
ENVIRONMENT_NAME_RULE = (
    "letters, digits, '.', '_' and '-', 1 to 63 characters, starting with a letter or digit"
)
_ENVIRONMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def check_environment_name(specs: MarkedDict, name: str) -> None:
    """ConfigError at an environment's name unless it follows ENVIRONMENT_NAME_RULE: the name
    is a file or folder name under .surveyctl/ (`state/<name>.json`,
    `cache/catalog/<name>/`), so `../../elsewhere` would write outside the project, and it
    is printed on every command, where a control character would reach the terminal."""
    if not _ENVIRONMENT_NAME.match(name):
        raise ConfigError(
            f"environment name {_shown_name(name)} is not valid: use {ENVIRONMENT_NAME_RULE}",
            specs.where(name),
        )


def _shown_name(name: str) -> str:
    """A rejected name for a message: quoted with its control characters escaped, and cut."""
    return repr(name if len(name) <= 70 else name[:70] + "...")


def host_problem(host: str) -> str | None:
    """What keeps `host` from being the root of the API's paths (`{host}/buyers/v2`), or None.
    Checked when the file is read, so a mistake is one sentence at its line rather than a
    request that fails, or a traceback from the URL parser."""
    if any(c.isspace() or not c.isprintable() for c in host):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(host)
        port = parts.port  # ValueError when it is not a number from 0 to 65535
    except ValueError:
        return "is not a valid URL (a bracket not closed, a port that is not a number?)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http(s) URL with a host name, such as https://api.example.com"
    if port == 0:
        return "has port 0, which no service listens on"
    if parts.query or parts.fragment or host.endswith(("?", "#")):
        return "must not carry a query or fragment (?..., #...): the API's paths follow it"
    return None
