"""The state backends surveyctl knows, each registered once by its own package.

A backend package (`surveyctl.state.file`, `surveyctl.state.postgres`) defines its settings,
checks them, and opens its store; it ends with one `register(Backend(...))` line, and
`surveyctl.state` imports it. Nothing else names a backend: the configuration's `state:`
setting is read by `parse`, `state migrate --from` offers `names()`, and `open_state` asks the
backend the settings name. Adding one (say S3) is one new package and one import line.

`parse` reads a `state:` mapping whether it comes from surveyctl.yaml (with a line for each
key) or from command-line options (without), so both say the same thing about a bad setting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from surveyctl.errors import ConfigError, Location
from surveyctl.suggest import setting_hint

if TYPE_CHECKING:  # only for the type: the configuration imports this module
    from surveyctl.config import Config
    from surveyctl.state.backend import StateBackend

DEFAULT = "file"  # the backend of an environment without a `state:` setting


class BackendSettings(Protocol):
    """What a backend's settings have in common: the name of the backend they belong to."""

    @property
    def backend(self) -> str: ...


@dataclass(frozen=True)
class SettingsSpec:
    """A `state:` mapping being read: its values, the field it is (`environments.x.state`),
    and the line of each key when it comes from a file."""

    values: Mapping[str, Any]
    field: str
    locate: Callable[[str], Location | None] = lambda key: None

    def error(self, key: str, problem: str) -> ConfigError:
        """`<field>.<key> <problem>`, at the line of `key`."""
        return ConfigError(f"{self.field}.{key} {problem}", self.locate(key))


@dataclass(frozen=True)
class Backend:
    """A state backend: its name, the settings it accepts besides `backend`, how it checks
    them, and how it opens the store of one environment (the configuration supplies the
    folders and the environment variables a backend may need)."""

    name: str
    fields: tuple[str, ...]
    settings: Callable[[SettingsSpec], BackendSettings]
    open: Callable[[Any, Config, str], StateBackend]


_BACKENDS: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    """Makes `backend` known by its name (a second one of the same name replaces it)."""
    _BACKENDS[backend.name] = backend
    return backend


def unregister(name: str) -> None:
    """Forgets a backend (tests that register one of their own)."""
    _BACKENDS.pop(name, None)


def names() -> list[str]:
    """The registered backends, the default first."""
    return sorted(_BACKENDS, key=lambda name: (name != DEFAULT, name))


def get(name: str) -> Backend:
    """The backend called `name`; ConfigError naming the known ones otherwise."""
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ConfigError(f"unknown state backend {name!r}; known: {', '.join(names())}") from None


def default_settings() -> BackendSettings:
    """The settings of an environment that has no `state:` setting."""
    return get(DEFAULT).settings(SettingsSpec({}, "state"))


def parse(spec: SettingsSpec) -> BackendSettings:
    """The settings a `state:` mapping names: `backend` (default `file`) and that backend's
    own settings, checked by it; ConfigError at the first wrong one."""
    name = spec.values.get("backend", DEFAULT)
    if not isinstance(name, str) or name not in _BACKENDS:
        raise spec.error("backend", f"must be one of {', '.join(names())}")
    backend = _BACKENDS[name]
    for key in spec.values:
        if key == "backend" or key in backend.fields:
            continue
        owners = [other.name for other in _BACKENDS.values() if key in other.fields]
        if owners:
            problem = f"{key} applies to backend {' and '.join(owners)} only"
        else:
            known = ["backend", *backend.fields]
            problem = f"unknown setting {key!r}{setting_hint(key, known)}"
        raise ConfigError(f"{spec.field}: {problem}", spec.locate(key))
    return backend.settings(spec)
