"""What every command shares: the global options, the configuration and the API client."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from surveyctl.api import ApiClient
from surveyctl.config import Config, Environment, load_config


@dataclass
class CliContext:
    """Global options, with the configuration and client made on first use."""

    env_name: str | None = None
    config_path: Path | None = None
    debug: bool = False
    _config: Config | None = field(default=None, repr=False)
    _client: ApiClient | None = field(default=None, repr=False)

    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config

    def environment(self) -> Environment:
        return self.config().environment(self.env_name)

    def client(self, **client_options) -> ApiClient:
        """The environment's client; names the environment on stderr so nobody mistakes it."""
        if self._client is None:
            from surveyctl.connection import open_client

            environment = self.environment()
            click.echo(f"surveyctl: environment {environment.describe()}", err=True)
            self._client = open_client(self.config(), environment, **client_options)
        return self._client


pass_context = click.make_pass_decorator(CliContext, ensure=True)
