"""Configuration: `surveyctl.yaml` and environment variables -> the chosen Environment.

```yaml
manifests: [surveys/, groups/]      # read when no paths are given
environments:
  staging:    {host: https://staging.example.com, api_key_env: SURVEYCTL_STAGING_KEY}
  production: {host: https://api.example.com, api_key_env: SURVEYCTL_PRODUCTION_KEY,
               protected: true,
               state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN, schema: surveyctl},
               guards: {max_spend_increase: 5000, max_destroy: 0, max_changed_percent: 30}}
default_environment: staging
```
`sandbox` is built in: the embedded local marketplace, data in `.surveyctl/sandbox.db`. It is
the environment when nothing is configured. The key of an environment is read from the
variable it names, never from a file; so is the connection string of a PostgreSQL state.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from surveyctl.errors import ConfigError

CONFIG_FILE = "surveyctl.yaml"
SANDBOX = "sandbox"
ENV_VARIABLE = "SURVEYCTL_ENV"
WORK_DIR = ".surveyctl"
# The embedded sandbox's first buyer; a published test token, not a secret.
SANDBOX_KEY = "sandbox-buyer-1"


STATE_BACKENDS = ("file", "postgres")
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class StateSettings:
    """Where an environment keeps its state: `file` (the default) or `postgres`, whose
    connection string is in the variable `dsn_env`, in `schema`."""

    backend: str = "file"
    dsn_env: str | None = None
    schema: str = "surveyctl"


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
    state: StateSettings = field(default_factory=StateSettings)
    guards: Guards = field(default_factory=Guards)

    @property
    def embedded(self) -> bool:
        return self.host is None

    def api_key(self) -> str:
        """The key from the environment variable; ConfigError when it is not set."""
        if self.embedded:
            return SANDBOX_KEY
        value = os.environ.get(self.api_key_env or "", "")
        if not value:
            raise ConfigError(
                f"environment {self.name!r} needs its API key in ${self.api_key_env}, "
                "which is not set"
            )
        return value

    def describe(self) -> str:
        if self.embedded:
            return f"{self.name} (embedded local marketplace, not production)"
        return f"{self.name} ({self.host})" + (" [protected]" if self.protected else "")


BUILTIN_SANDBOX = Environment(name=SANDBOX)


@dataclass(frozen=True)
class Config:
    """The project's settings; `root` is the folder of surveyctl.yaml, or the current one."""

    root: Path
    path: Path | None = None
    manifests: list[str] = field(default_factory=list)
    environments: dict[str, Environment] = field(default_factory=dict)
    default_environment: str = SANDBOX

    @property
    def work_dir(self) -> Path:
        return self.root / WORK_DIR

    @property
    def state_dir(self) -> Path:
        return self.work_dir / "state"

    @property
    def cache_dir(self) -> Path:
        return self.work_dir / "cache"

    @property
    def sandbox_db(self) -> Path:
        return self.work_dir / "sandbox.db"

    def environment(self, name: str | None = None) -> Environment:
        """`name`, else $SURVEYCTL_ENV, else default_environment, else the sandbox."""
        chosen = name or os.environ.get(ENV_VARIABLE) or self.default_environment
        if chosen in self.environments:
            return self.environments[chosen]
        if chosen == SANDBOX:
            return BUILTIN_SANDBOX
        known = ", ".join(sorted({SANDBOX, *self.environments}))
        where = f" in {self.path}" if self.path else ""
        raise ConfigError(f"unknown environment {chosen!r}{where}; known: {known}")


def load_config(path: Path | None = None, cwd: Path | None = None) -> Config:
    """Reads `path`, or surveyctl.yaml of `cwd` if there is one, else the defaults."""
    cwd = cwd or Path.cwd()
    if path is None:
        candidate = cwd / CONFIG_FILE
        if not candidate.is_file():
            return Config(root=cwd)
        path = candidate
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such configuration file") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping")
    unknown = set(data) - {"manifests", "environments", "default_environment"}
    if unknown:
        raise ConfigError(f"{path}: unknown setting {sorted(unknown)[0]!r}")
    manifests = data.get("manifests") or []
    if not isinstance(manifests, list) or not all(isinstance(m, str) for m in manifests):
        raise ConfigError(f"{path}: manifests must be a list of paths")
    environments = {
        name: _environment(path, name, spec)
        for name, spec in (data.get("environments") or {}).items()
    }
    default = data.get("default_environment") or SANDBOX
    if default != SANDBOX and default not in environments:
        raise ConfigError(f"{path}: default_environment {default!r} is not defined")
    return Config(
        root=path.resolve().parent,
        path=path,
        manifests=manifests,
        environments=environments,
        default_environment=default,
    )


def _environment(path: Path, name: str, spec: object) -> Environment:
    if not isinstance(spec, dict):
        raise ConfigError(f"{path}: environments.{name} must be a mapping")
    unknown = set(spec) - {"host", "api_key_env", "protected", "state", "guards"}
    if unknown:
        raise ConfigError(f"{path}: environments.{name}: unknown setting {sorted(unknown)[0]!r}")
    host, key_env = spec.get("host"), spec.get("api_key_env")
    if not isinstance(host, str) or not host.startswith(("http://", "https://")):
        raise ConfigError(f"{path}: environments.{name}.host must be an http(s) URL")
    if not isinstance(key_env, str) or not key_env:
        raise ConfigError(
            f"{path}: environments.{name}.api_key_env must name the variable that holds the key"
        )
    return Environment(
        name=name,
        host=host.rstrip("/"),
        api_key_env=key_env,
        protected=bool(spec.get("protected")),
        state=_state_settings(path, name, spec.get("state")),
        guards=_guards(path, name, spec.get("guards")),
    )


def _state_settings(path: Path, name: str, spec: object) -> StateSettings:
    """`state: {backend, dsn_env, schema}` of an environment (absent: the file backend)."""
    where = f"{path}: environments.{name}.state"
    if spec is None:
        return StateSettings()
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a mapping such as {{backend: postgres, dsn_env: VAR}}")
    unknown = set(spec) - {"backend", "dsn_env", "schema"}
    if unknown:
        raise ConfigError(f"{where}: unknown setting {sorted(unknown)[0]!r}")
    backend = spec.get("backend", "file")
    if backend not in STATE_BACKENDS:
        raise ConfigError(f"{where}.backend must be one of {', '.join(STATE_BACKENDS)}")
    if backend == "file":
        if set(spec) - {"backend"}:
            raise ConfigError(f"{where}: dsn_env and schema apply to backend postgres only")
        return StateSettings()
    dsn_env, schema = spec.get("dsn_env"), spec.get("schema", "surveyctl")
    if not isinstance(dsn_env, str) or not dsn_env:
        raise ConfigError(
            f"{where}.dsn_env must name the variable that holds the PostgreSQL connection string"
        )
    if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
        raise ConfigError(
            f"{where}.schema must be a lowercase PostgreSQL name (letters, digits, underscores)"
        )
    return StateSettings(backend="postgres", dsn_env=dsn_env, schema=schema)


def _guards(path: Path, name: str, spec: object) -> Guards:
    """`guards:` of an environment: non-negative numbers, max_destroy a whole number,
    max_changed_percent at most 100."""
    if spec is None:
        return Guards()
    where = f"{path}: environments.{name}.guards"
    if not isinstance(spec, dict):
        raise ConfigError(f"{where} must be a mapping")
    known = {f.name for f in fields(Guards)}
    unknown = set(spec) - known
    if unknown:
        raise ConfigError(
            f"{where}: unknown guard {sorted(unknown)[0]!r}; known: {', '.join(sorted(known))}"
        )
    for key, value in spec.items():
        whole = key == "max_destroy"
        number = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
        if not number or value < 0 or (key == "max_changed_percent" and value > 100):
            kind = "a whole number" if whole else "a number"
            bound = " up to 100" if key == "max_changed_percent" else ""
            raise ConfigError(f"{where}.{key} must be {kind} from 0{bound}, not {value!r}")
    return Guards(**spec)
