"""The file backend, the zero-setup default: `.surveyctl/state/<environment>.json`, its change
log and its lock beside it (see `surveyctl.state` for the format, `store` and `changelog`).

It takes no settings: `state: {backend: file}` is the same as no `state:` setting at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveyctl.state.file.store import FileStateStore
from surveyctl.state.records import state_file
from surveyctl.state.registry import Backend, SettingsSpec, register

if TYPE_CHECKING:
    from surveyctl.config import Config

NAME = "file"


@dataclass(frozen=True)
class FileSettings:
    """The file backend's settings: none but its name."""

    backend: str = NAME


def _settings(spec: SettingsSpec) -> FileSettings:
    return FileSettings()


def _open(settings: FileSettings, config: Config, environment: str) -> FileStateStore:
    return FileStateStore(state_file(config.state_dir, environment), environment)


register(Backend(NAME, (), _settings, _open))

__all__ = ["FileSettings", "FileStateStore"]
