"""What every command shares: the global options, the configuration and the API client."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # imported when used, so that `--help` and `--version` stay light
    from surveyctl.api import ApiClient
    from surveyctl.catalog import Catalog
    from surveyctl.config import Config, Environment
    from surveyctl.manifests.cache import ParsedCache
    from surveyctl.reconcile.run import RunOptions, Workspace
    from surveyctl.state import State, StateBackend
    from surveyctl.suggested import CommandPrefix


@dataclass
class CliContext:
    """Global options, with the configuration and client made on first use."""

    env_name: str | None = None
    config_path: Path | None = None
    debug: bool = False
    no_color: bool = False  # --no-color; cli/console.py decides colour from it and NO_COLOR
    # Seconds to wait for a connection and for each answer (None: the client's default).
    timeout: float | None = None
    # Connections the client keeps open: as many as requests may be in flight at once
    # (None: the client's default).
    pool_size: int | None = None
    _config: Config | None = field(default=None, repr=False)
    _client: ApiClient | None = field(default=None, repr=False)
    _announced: bool = field(default=False, repr=False)
    _key_remembered: bool = field(default=False, repr=False)

    def config(self) -> Config:
        if self._config is None:
            from surveyctl.config import load_config

            self._config = load_config(self.config_path)
            if self.debug:
                click.echo(f"surveyctl: {self._config.describe_source()}", err=True)
        return self._config

    def environment(self) -> Environment:
        environment = self.config().environment(self.env_name)
        if not self._key_remembered:
            _remember_key(environment)
            self._key_remembered = True
        return environment

    def manifest_cache(self) -> ParsedCache | None:
        """The user's cache of manifest files read before (None when $SURVEYCTL_CACHE_DIR is
        off or its folder cannot be used)."""
        from surveyctl.manifests.cache import ParsedCache
        from surveyctl.variables import cache_folder

        folder = cache_folder()
        return None if folder is None else ParsedCache.at(folder / "manifests")

    def command_prefix(self) -> CommandPrefix:
        """The global options a command suggested to the user repeats: the environment when it
        was chosen with --env or $SURVEYCTL_ENV (which may not be set where the line is
        pasted), the configuration when it was given with --config."""
        import os

        from surveyctl.config import ENV_VARIABLE
        from surveyctl.suggested import CommandPrefix

        env = self.env_name or os.environ.get(ENV_VARIABLE) or None
        config = None if self.config_path is None else str(self.config_path)
        return CommandPrefix(env=env, config=config)

    @property
    def env_named(self) -> bool:
        """Whether the environment was named with `--env`, as a protected environment requires
        before a write goes ahead without a question ($SURVEYCTL_ENV does not count)."""
        return self.env_name is not None and self.env_name == self.environment().name

    def announce(self) -> None:
        """Names the environment on stderr, once, so nobody mistakes it for another."""
        if not self._announced:
            config, environment = self.config(), self.environment()
            if config.path is None and environment.embedded and not self.debug:
                # A command run outside the project would otherwise plan against a fresh
                # sandbox without a word (--debug has said it already).
                click.echo(f"surveyctl: {config.describe_source()}", err=True)
            click.echo(f"surveyctl: environment {environment.describe()}", err=True)
            self._announced = True

    def client(self) -> ApiClient:
        """The environment's client (starting the embedded sandbox when that is the target)."""
        if self._client is None:
            from surveyctl.connection import open_client

            self.announce()
            stops: list = []
            options: dict = {"on_retry": _say_retry, "on_start": stops.append}
            if self.pool_size is not None:
                options["pool_size"] = self.pool_size
            if self.timeout is not None:
                options["timeout"] = self.timeout
            self._client = open_client(self.config(), self.environment(), **options)
            stop = stops[0] if stops else None
            # The embedded sandbox stops with the command, closing its SQLite file, so no
            # -wal or -shm file is left beside it.
            current = click.get_current_context(silent=True)
            if current is not None:  # outside a command (a test), its caller closes it
                root = current.find_root()
                root.call_on_close(self._client.close)
                if stop is not None:
                    root.call_on_close(stop)
        return self._client

    def workspace(
        self, options: RunOptions, refresh_catalog: bool = False, offline: bool = False
    ) -> Workspace:
        """The environment's state, catalogue (none when `offline`) and (lazily) client, for a
        plan or apply run; the client's pool is sized for `options.parallelism` requests in
        flight."""
        from surveyctl.reconcile.run import Workspace

        self.pool_size = max(self.pool_size or 0, options.parallelism)
        return Workspace(
            config=self.config(),
            environment=self.environment(),
            state=self.state_store(),
            marketplace=self.client,
            catalog=None if offline else self.catalog(refresh=refresh_catalog),
            manifest_cache=self.manifest_cache(),
        )

    def catalog(self, refresh: bool = False, classes: list[int] | None = None) -> Catalog:
        """The environment's attribute catalogue; no connection is opened while the cache is
        fresh. Only the attribute `classes` given, when given: such a part of the catalogue is
        fetched each time, as the cache holds it whole."""
        from surveyctl.catalog import Catalog

        self.announce()
        config, environment = self.config(), self.environment()
        return Catalog(
            self.client,
            environment.name,
            None if classes else config.cache_dir,
            refresh=refresh,
            classes=classes,
            signing_key=self.catalog_key(),
        )

    def catalog_key(self) -> str | None:
        """The key that signs the environment's catalogue cache: its API key, or None when it
        has none (no cache then: the fetch says what is missing)."""
        from surveyctl.errors import ConfigError

        try:
            return self.environment().api_key()
        except ConfigError:
            return None

    def placed_state(self, store: StateBackend, verify: bool = True) -> State:
        """`store`'s state read afresh, refused (MisplacedState) when it is not where the team
        keeps it: what a command that writes the state reads first."""
        from surveyctl.state.placement import load_placed

        return load_placed(self.config(), self.environment(), store, verify)

    def state_store(self) -> StateBackend:
        """The state backend of the environment."""
        from surveyctl.state import open_state

        self.announce()
        return open_state(self.config(), self.environment())


def _remember_key(environment: Environment) -> None:
    """Registers the environment's API key for redaction as soon as the environment is known,
    not only when a client is made: `state show` and friends print what the state recorded,
    which may repeat it, without ever making a client. The embedded sandbox's key is published
    (docs/sandbox.md) and `sandbox serve` prints it: there is nothing to hide."""
    if environment.embedded:
        return
    from surveyctl.api.secrets import remember
    from surveyctl.errors import ConfigError

    try:
        remember(environment.api_key())
    except ConfigError:
        pass  # unset or badly shaped: the command that needs it says so


def _say_retry(notice: object) -> None:
    """Each retry on stderr, so a wait on an unreachable or failing service is explained."""
    click.echo(f"surveyctl: {notice}", err=True)


pass_context = click.make_pass_decorator(CliContext, ensure=True)


def suggesting(text: str, json_string: bool = False) -> str:
    """`text` with the commands it suggests carrying the global options of the command running
    (surveyctl.suggested); as it is outside a command."""
    ctx = click.get_current_context(silent=True)
    obj = None if ctx is None else ctx.find_object(CliContext)
    if obj is None:
        return text
    return obj.command_prefix().carry(text, json_string=json_string)
