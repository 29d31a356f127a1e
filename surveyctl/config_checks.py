"""Checks of the values of surveyctl.yaml that name things outside it: an environment's
name (a file and folder name under .surveyctl/), its host (the root of every API path), and
the names of the variables that hold its key and its state's connection string (with the shape
a key must have).

surveyctl.yaml comes with the code under review, so each is checked when it is read: a bad
one is one sentence at its line, never a file written outside the project, a request that
fails in a puzzling way, or a traceback from the URL parser.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from surveyctl.errors import ConfigError
from surveyctl.suggest import setting_hint
from surveyctl.version_pin import PinError, allows, parse_pin
from surveyctl.yamlsafe import MarkedDict

# An environment's name names its state file and catalogue cache under .surveyctl/.
ENVIRONMENT_NAME_RULE = (
    "letters, digits, '.', '_' and '-', 1 to 63 characters, starting with a letter or digit"
)
_ENVIRONMENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def valid_environment_name(name: str) -> bool:
    """Whether `name` follows ENVIRONMENT_NAME_RULE."""
    return _ENVIRONMENT_NAME.fullmatch(name) is not None


def check_environment_name(specs: MarkedDict, name: str) -> None:
    """ConfigError at an environment's name unless it follows ENVIRONMENT_NAME_RULE: the name
    is a file or folder name under .surveyctl/ (`state/<name>.json`,
    `cache/catalog/<name>/`), so `../../elsewhere` would write outside the project, and it
    is printed on every command, where a control character would reach the terminal."""
    # fullmatch: `$` of match() also takes a name that ends in a line break.
    if not valid_environment_name(name):
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
    if "@" in host:
        # The host is shown in every message about the environment, so a password in it would
        # reach CI logs; the message names the setting, never the value. Any "@" counts: an
        # unencoded "/", "?" or "#" in a password would hide it from a URL parser.
        return "must not carry a user or password (the API key is read from api_key_env)"
    if any(c.isspace() or not c.isprintable() for c in host):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(host)
        port = parts.port  # ValueError when it is not a number from 0 to 65535
    except ValueError:
        return "is not a valid URL (a bracket not closed, a port that is not a number?)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http(s) URL with a host name, such as https://api.example.com"
    problem = _host_name_problem(parts.hostname, bracketed="[" in parts.netloc)
    if problem:
        return problem
    if port == 0:
        return "has port 0, which no service listens on"
    if parts.query or parts.fragment or host.endswith(("?", "#")):
        return "must not carry a query or fragment (?..., #...): the API's paths follow it"
    return None


# DNS's longest label, which the IDNA codec urllib3 encodes every host name with also allows.
MAX_LABEL_LENGTH = 63


def _host_name_problem(name: str, bracketed: bool) -> str | None:
    """What keeps the host name of a URL from being one that requests and urllib3 connect to,
    or None. They refuse it only when the first request is made (some with a traceback of
    urllib3's LocationParseError), so the same rules are checked here."""
    if "%" in name and not bracketed:  # an IPv6 address's zone is written %25eth0
        # urllib3 decodes some escapes and refuses others: what it would look up is unclear.
        return "must not percent-encode its host name (%..): write the name as it is"
    labels = name.split(".")
    if "" in labels[:-1]:  # the last is empty in a name written with its root, `example.com.`
        return "has an empty label in its host name (two dots in a row, or a dot first)"
    if any(len(label) > MAX_LABEL_LENGTH for label in labels if label.isascii()):
        return (
            f"has a label longer than {MAX_LABEL_LENGTH} characters in its host name, "
            "the most DNS allows between two dots"
        )
    if name.startswith("*"):
        return "must not start its host name with '*': a wildcard names no one host"
    if not name.isascii():
        return _idna_problem(labels)
    return None


def _idna_problem(labels: list[str]) -> str | None:
    """What keeps a non-ASCII host name from being encoded for DNS, or None: the check
    urllib3 makes (IDNA 2008, each label lower-cased), with the package it makes it with."""
    import idna  # a dependency of requests; imported here only, for the rare non-ASCII name

    try:
        for label in labels:
            if not label.isascii():
                idna.encode(label.lower(), strict=True, std3_rules=True)
    except idna.IDNAError:
        return (
            "has a host name that is not a valid internationalised domain name (IDNA 2008: "
            "a character it does not allow, or a label too long once encoded)"
        )
    return None


# What an environment variable's name looks like. The settings that name one (api_key_env,
# a state's dsn_env) are checked against it: a key or a connection string written there by
# mistake would otherwise be printed by every message that names the variable.
_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The shortest API key surveyctl accepts: keys are redacted wherever they appear, and a short one
# would also take ordinary words with it.
MIN_KEY_LENGTH = 8


def is_variable_name(value: object) -> bool:
    """Whether `value` can be the name of an environment variable (and so is no secret that
    was written in its place: a key or a connection string has other characters)."""
    # fullmatch: `$` of match() also takes a name that ends in a line break.
    return isinstance(value, str) and _VARIABLE_NAME.fullmatch(value) is not None


# A name that reads as a variable's, not as a key: upper case words joined by underscores.
_CONVENTIONAL_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")


def may_show_variable(name: str) -> bool:
    """Whether a message may repeat the name of a variable that is not set: it reads as a
    variable's, or is too short to be a key (a key of letters and digits is a valid variable
    name too, and one pasted in its place is, of course, no variable that is set)."""
    return _CONVENTIONAL_NAME.fullmatch(name) is not None or len(name) < MIN_KEY_LENGTH


def unset_variable(name: str, setting: str) -> str:
    """How a message names a variable that is not set: `$NAME`, unless the name could be a key
    written in its place; such a name is not repeated, the message points at the setting."""
    if may_show_variable(name):
        return f"${name}"
    return f"the variable its `{setting}` names in surveyctl.yaml (not shown: it may be a key)"


def absent(value: str | None) -> str:
    """How a message says a variable gave nothing: "is empty", which is what a CI job gets for
    a secret it was not given, told apart from "is not set"."""
    return "is empty" if value == "" else "is not set"


def key_shape_problem(value: str) -> str | None:
    """What keeps `value` from being sent as the access-token header, or None.

    A key is visible ASCII only. Anything else is a copy-and-paste accident (a trailing line
    break from `echo`, a leading space, a Windows line end, a typographic character), and the
    HTTP library would refuse it with a message that repeats the header value, key included.
    """
    if any(c in "\r\n" for c in value):
        return "contains a line break"
    if value != value.strip():
        return "starts or ends with whitespace"
    if any(c.isspace() for c in value):
        return "contains whitespace"
    if any(ord(c) > 0x7E for c in value):
        return "contains a character that is not plain ASCII"
    if any(ord(c) < 0x21 for c in value):
        return "contains a control character"
    if len(value) < MIN_KEY_LENGTH:
        # A key that short would be redacted from every word it happens to spell.
        return f"is shorter than {MIN_KEY_LENGTH} characters, too short to be an API key"
    return None


def only_known(data: MarkedDict, known: tuple[str, ...], prefix: str) -> None:
    """ConfigError at the first setting of `data` that is not one of `known`."""
    for key in data:
        if key not in known:
            hint = setting_hint(key, known)
            raise ConfigError(f"{prefix}unknown setting {key!r}{hint}", data.where(key))


def check_required_version(data: MarkedDict, version: str) -> None:
    """ConfigError at `required_version` when it is not a pin in the accepted syntax, or when
    `version` (this surveyctl's) is not one it allows: a team pins one version, and a
    surveyctl outside it would plan with other rules than the rest of the team's, or write a
    state the others refuse (docs/state.md, "Two versions of surveyctl on one project")."""
    if "required_version" not in data:
        return
    pin, where = data["required_version"], data.where("required_version")
    if not isinstance(pin, str):
        raise ConfigError(
            'required_version must be a quoted string of version clauses, such as ">=0.1.0, <0.3"',
            where,
        )
    try:
        clauses = parse_pin(pin)
    except PinError as problem:
        raise ConfigError(f"required_version {_shown_name(pin)} {problem}", where) from None
    if not allows(clauses, version):
        raise ConfigError(
            f"required_version {_shown_name(pin)} does not allow this surveyctl ({version}): "
            "install a version it allows (the one the team runs), or change required_version "
            "when the whole team moves to another; nothing was changed",
            where,
        )
