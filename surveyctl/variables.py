"""The process's environment variables that surveyctl reads besides an environment's API key
and state DSN (whose variables surveyctl.yaml names): read here, in the CLI's reach, and passed
to the core, which reads no environment variable itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from surveyctl.errors import ConfigError

PLAN_KEY_VARIABLE = "SURVEYCTL_PLAN_KEY"  # signs saved plans (surveyctl.reconcile.planfile)
SETTLE_VARIABLE = "SURVEYCTL_CREATE_SETTLE_SECONDS"  # see surveyctl.reconcile.recovery
ACTOR_VARIABLE = "SURVEYCTL_ACTOR"  # who makes the state's changes (surveyctl.state.changes)
DEFAULT_SETTLE_SECONDS = 60.0
# Where `state migrate --from postgres` looks by default, and where a plan looks for a state
# kept in PostgreSQL while the file backend is configured (surveyctl.state.placement).
DEFAULT_DSN_VARIABLE = "SURVEYCTL_STATE_DSN"
CI_VARIABLE = "CI"  # set to "true" by CI services
SANDBOX_STRICT_VARIABLE = "SURVEYCTL_SANDBOX_STRICT"  # the embedded sandbox served --strict
# The user's cache folder of surveyctl (surveyctl.manifests.cache); `off` keeps no cache.
CACHE_VARIABLE = "SURVEYCTL_CACHE_DIR"
_YES, _NO = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def plan_signing_key() -> bytes | None:
    """The key of `$SURVEYCTL_PLAN_KEY`, or None when it is not set (or empty)."""
    value = os.environ.get(PLAN_KEY_VARIABLE, "")
    # surrogateescape: the bytes of the variable as set, whatever their encoding
    return value.encode("utf-8", "surrogateescape") if value else None


def running_in_ci() -> bool:
    """Whether `$CI` says this runs in CI (a fresh checkout: no local state)."""
    return os.environ.get(CI_VARIABLE, "").strip().lower() in ("true", "1", "yes")


def sandbox_strict() -> bool:
    """Whether `$SURVEYCTL_SANDBOX_STRICT` asks for the embedded sandbox served --strict.
    Another value than yes or no is refused: taken for "no", a typo would leave the client's
    own sloppiness unchecked without a word."""
    value = os.environ.get(SANDBOX_STRICT_VARIABLE, "").strip().lower()
    if value in _YES:
        return True
    if value in _NO:
        return False
    raise ConfigError(
        f"${SANDBOX_STRICT_VARIABLE} must be 1 or 0 (also true/false, yes/no, on/off), "
        f"not {value[:40]!r}"
    )


def create_settle_seconds() -> float:
    """How old a lost create must be before "no resource shows it" means it made nothing:
    `$SURVEYCTL_CREATE_SETTLE_SECONDS`, else 60; ConfigError when it is not 0 to 86400."""
    value = os.environ.get(SETTLE_VARIABLE, "")
    if not value:
        return DEFAULT_SETTLE_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86400:  # also refuses nan and inf
        raise ConfigError(f"${SETTLE_VARIABLE} must be a number of seconds from 0 to 86400")
    return seconds


def libpq_defaults() -> dict[str, str]:
    """libpq's variables for what a connection string leaves out (host, port, ...): a DSN is
    described and its password redacted as libpq will use them."""
    names = ("PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD")
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def cache_folder() -> Path | None:
    """The user's cache folder of surveyctl: `$SURVEYCTL_CACHE_DIR`, else
    `$XDG_CACHE_HOME/surveyctl`, else `~/.cache/surveyctl`; None when the variable says `off`
    (or 0, false, no), when there is no home folder, and in CI unless the variable names a
    folder: a CI machine starts empty and runs a command once, so it would only pay for
    writing what no later run reads (a workflow that keeps the folder between runs names it)."""
    value = os.environ.get(CACHE_VARIABLE, "").strip()
    if value and value.lower() in _NO:
        return None
    if value:
        return Path(value).expanduser()
    if running_in_ci():
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):  # the XDG rule: a relative value is ignored
        return Path(xdg) / "surveyctl"
    try:
        return Path.home() / ".cache" / "surveyctl"
    except RuntimeError:  # no home folder to be found
        return None


def actor_name() -> str | None:
    """Who makes the changes of this process when `$SURVEYCTL_ACTOR` names them, else None;
    ConfigError for a name holding a line break or another control character, which the
    history would keep for good (and a table of it would show as a row of its own)."""
    name = os.environ.get(ACTOR_VARIABLE, "").strip()
    if not name.isprintable():  # a space is printable; a line break or a tab is not
        raise ConfigError(
            f"${ACTOR_VARIABLE} holds a line break or another control character; set it to a "
            "plain name, such as the CI job's or the person's"
        )
    return name or None
