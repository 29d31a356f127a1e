"""An environment of surveyctl.yaml: the marketplace to talk to, and how its plans are guarded.

`environments.NAME` of the configuration is read here into an `Environment`: its host and the
variable holding its key (never the key), whether it is protected, where its state lives (read
by the state backend it names), its guards on the size of one apply, and its identity rule.
Every mistake is one ConfigError at the setting's line (`surveyctl.config` reads the file).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from surveyctl.config_checks import (
    absent,
    host_problem,
    is_variable_name,
    key_shape_problem,
    only_known,
    unset_variable,
)
from surveyctl.errors import ConfigError
from surveyctl.suggest import setting_hint
from surveyctl.yamlsafe import MarkedDict

if TYPE_CHECKING:
    from surveyctl.state.registry import BackendSettings

# The embedded sandbox's first buyer; a published test token, not a secret.
SANDBOX_KEY = "sandbox-buyer-1"
ENVIRONMENT_SETTINGS = ("host", "api_key_env", "protected", "state", "guards", "identity")
# How a plan recognises a resource on the service that its state does not record
# (surveyctl.reconcile.identity): by title and locale, or by the external_project_id that
# surveyctl fills in on create.
IDENTITY_RULES = ("title", "external_project_id")


@dataclass(frozen=True)
class Guards:
    """Limits on the size of one apply; None is no limit. A plan over a limit is refused unless
    its named override is given (surveyctl.reconcile.guards)."""

    max_spend_increase: float | None = None  # US dollars of estimated spend added
    max_destroy: int | None = None  # resources destroyed
    max_changed_percent: float | None = None  # share of managed resources changed or destroyed


@dataclass(frozen=True)
class Environment:
    """A marketplace to talk to: a host and the variable holding its key, or the sandbox."""

    name: str
    host: str | None = None  # None: the embedded sandbox
    api_key_env: str | None = None
    protected: bool = False
    state: BackendSettings = field(default_factory=lambda: _state_backends().default_settings())
    guards: Guards = field(default_factory=Guards)
    identity: str = "title"  # one of IDENTITY_RULES

    @property
    def embedded(self) -> bool:
        return self.host is None

    def api_key(self) -> str:
        """The key from the environment variable; ConfigError when it is not set or has a
        shape no HTTP header can carry (the message names the variable, never the value)."""
        if self.embedded:
            return SANDBOX_KEY
        value = os.environ.get(self.api_key_env or "")
        if not value:
            raise ConfigError(
                f"environment {self.name!r} needs its API key in "
                f"{unset_variable(self.api_key_env or '', 'api_key_env')}, which {absent(value)}"
            )
        problem = key_shape_problem(value)
        if problem:
            raise ConfigError(
                f"environment {self.name!r}: the API key in ${self.api_key_env} {problem}; "
                "set the variable to the key alone"
            )
        return value

    def describe(self) -> str:
        if self.embedded:
            return f"{self.name} (embedded local marketplace, not production)"
        return f"{self.name} ({self.host})" + (" [protected]" if self.protected else "")


# The settings every environment needs, and what to write there.
_ENVIRONMENT_NEEDS = {
    "host": "give the marketplace's http(s) URL, such as host: https://api.example.com",
    "api_key_env": "name the environment variable that holds its API key, such as "
    "api_key_env: SURVEYCTL_PRODUCTION_KEY",
}


def read_environment(specs: MarkedDict, name: str) -> Environment:
    """`environments.NAME` of the configuration, checked."""
    spec = specs[name]
    field = f"environments.{name}"
    if not isinstance(spec, MarkedDict):
        raise ConfigError(
            f"{field} must be a mapping such as {{host: https://..., api_key_env: VARIABLE}}",
            specs.where(name),
        )
    only_known(spec, ENVIRONMENT_SETTINGS, f"{field}: ")
    host, key_env = spec.get("host"), spec.get("api_key_env")
    for setting, what in _ENVIRONMENT_NEEDS.items():
        if setting not in spec:  # said as missing: the checks below speak of a wrong value
            raise ConfigError(f"{field} has no {setting}: {what}", specs.where(name))
    if not isinstance(host, str) or not host.startswith(("http://", "https://")):
        raise ConfigError(f"{field}.host must be an http(s) URL", spec.where("host"))
    problem = host_problem(host)
    if problem:  # the value is not repeated: a host may carry what should not reach a log
        raise ConfigError(f"{field}.host {problem}", spec.where("host"))
    if not is_variable_name(key_env):
        raise ConfigError(
            f"{field}.api_key_env must name the variable that holds the key (letters, digits "
            "and underscores, such as SURVEYCTL_PRODUCTION_KEY), never the key itself",
            spec.where("api_key_env"),
        )
    protected = spec.get("protected", False)
    if not isinstance(protected, bool):
        raise ConfigError(f"{field}.protected must be true or false", spec.where("protected"))
    return Environment(
        name=name,
        host=host.rstrip("/"),
        api_key_env=key_env,
        protected=protected,
        state=_state_settings(spec, field),
        guards=_guards(spec, field),
        identity=_identity(spec, field),
    )


def _identity(environment: MarkedDict, field: str) -> str:
    """`identity:` of an environment: the rule that tells a twin on the service."""
    rule = environment.get("identity", "title")
    if rule not in IDENTITY_RULES:
        raise ConfigError(
            f"{field}.identity must be one of {', '.join(IDENTITY_RULES)}",
            environment.where("identity"),
        )
    return rule


def _state_settings(environment: MarkedDict, field: str) -> BackendSettings:
    """`state:` of an environment, read by the backend it names (absent: the file backend)."""
    spec = environment.get("state")
    where = f"{field}.state"
    if spec is None:
        return _state_backends().default_settings()
    if not isinstance(spec, MarkedDict):
        raise ConfigError(
            f"{where} must be a mapping such as {{backend: postgres, dsn_env: VAR}}",
            environment.where("state"),
        )
    backends = _state_backends()
    return backends.parse(backends.SettingsSpec(spec, where, spec.where))


def _state_backends():
    """The registry of state backends, imported when an environment is first made: loading
    the backends costs about 0.1 s, which `--help` and `--version` need not pay."""
    from surveyctl.state import registry

    return registry


def _guards(environment: MarkedDict, field: str) -> Guards:
    """`guards:` of an environment: non-negative numbers, max_destroy a whole number,
    max_changed_percent at most 100."""
    spec = environment.get("guards")
    where = f"{field}.guards"
    if spec is None:
        return Guards()
    if not isinstance(spec, MarkedDict):
        raise ConfigError(f"{where} must be a mapping", environment.where("guards"))
    known = tuple(f.name for f in fields(Guards))
    for key in spec:
        if key not in known:
            hint = setting_hint(key, known)
            raise ConfigError(f"{where}: unknown guard {key!r}{hint}", spec.where(key))
    for key, value in spec.items():
        whole = key == "max_destroy"
        number = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
        # .nan compares false with every limit, so a guard of NaN would never stop a plan.
        over = key == "max_changed_percent" and number and value > 100
        if not number or not math.isfinite(value) or value < 0 or over:
            kind = "a whole number" if whole else "a number"
            bound = " up to 100" if key == "max_changed_percent" else ""
            raise ConfigError(
                f"{where}.{key} must be {kind} from 0{bound}, not {value!r}", spec.where(key)
            )
    return Guards(**dict(spec))
