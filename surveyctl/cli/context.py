"""What every command shares: the global options, the configuration and the API client."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from surveyctl.api import ApiClient
from surveyctl.config import Config, Environment, load_config
from surveyctl.state import StateBackend, open_state


@dataclass
class CliContext:
    """Global options, with the configuration and client made on first use."""

    env_name: str | None = None
    config_path: Path | None = None
    debug: bool = False
    _config: Config | None = field(default=None, repr=False)
    _client: ApiClient | None = field(default=None, repr=False)
    _announced: bool = field(default=False, repr=False)

    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config

    def environment(self) -> Environment:
        return self.config().environment(self.env_name)

    def announce(self) -> None:
        """Names the environment on stderr, once, so nobody mistakes it for another."""
        if not self._announced:
            click.echo(f"surveyctl: environment {self.environment().describe()}", err=True)
            self._announced = True

    def client(self, **client_options) -> ApiClient:
        """The environment's client (starting the embedded sandbox when that is the target)."""
        if self._client is None:
            from surveyctl.connection import open_client

            self.announce()
            self._client = open_client(self.config(), self.environment(), **client_options)
        return self._client

    def state_store(self) -> StateBackend:
        """The state backend of the environment."""
        self.announce()
        return open_state(self.config(), self.environment())


pass_context = click.make_pass_decorator(CliContext, ensure=True)
