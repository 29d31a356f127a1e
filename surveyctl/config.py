"""Configuration: `surveyctl.yaml` and environment variables -> the chosen Environment.

```yaml
manifests: [surveys/, groups/]      # read when no paths are given
environments:
  staging:    {host: https://staging.example.com, api_key_env: SURVEYCTL_STAGING_KEY}
  production: {host: https://api.example.com, api_key_env: SURVEYCTL_PRODUCTION_KEY,
               protected: true}
default_environment: staging
```
`sandbox` is built in: the embedded local marketplace, data in `.surveyctl/sandbox.db`. It is
the environment when nothing is configured. The key of an environment is read from the
variable it names, never from a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from surveyctl.errors import ConfigError

CONFIG_FILE = "surveyctl.yaml"
SANDBOX = "sandbox"
ENV_VARIABLE = "SURVEYCTL_ENV"
WORK_DIR = ".surveyctl"
# The embedded sandbox's first buyer; a published test token, not a secret.
SANDBOX_KEY = "sandbox-buyer-1"


@dataclass(frozen=True)
class Environment:
    """A marketplace to talk to: a host and the variable holding its key, or the sandbox."""

    name: str
    host: str | None = None  # None: the embedded sandbox
    api_key_env: str | None = None
    protected: bool = False

    @property
    def embedded(self) -> bool:
        return self.host is None

    def api_key(self) -> str:
        """The key from the environment variable; ConfigError when it is not set or has a
        shape no HTTP header can carry (the message names the variable, never the value)."""
        if self.embedded:
            return SANDBOX_KEY
        value = os.environ.get(self.api_key_env or "", "")
        if not value:
            raise ConfigError(
                f"environment {self.name!r} needs its API key in ${self.api_key_env}, "
                "which is not set"
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


BUILTIN_SANDBOX = Environment(name=SANDBOX)


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
    return None


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
    unknown = set(spec) - {"host", "api_key_env", "protected"}
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
        name=name, host=host.rstrip("/"), api_key_env=key_env, protected=bool(spec.get("protected"))
    )
