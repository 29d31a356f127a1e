"""Opens an API client for an environment, starting the embedded sandbox when that is the target."""

from __future__ import annotations

from collections.abc import Callable

from surveyctl.api import ApiClient
from surveyctl.config import Config, Environment
from surveyctl.errors import SurveyctlError


def open_client(
    config: Config,
    environment: Environment,
    on_start: Callable[[Callable[[], None]], None] | None = None,
    **client_options,
) -> ApiClient:
    """A client for `environment`; the embedded sandbox is started on a free loopback port.

    Messages name the environment and its host; the embedded sandbox's port is chosen afresh
    by every command and means nothing to its user, so its messages never show it.
    `on_start` is given the embedded sandbox's stop function, for the caller to call when done.
    """
    if environment.embedded:
        from surveyctl.sandbox.errors import SandboxError
        from surveyctl.sandbox.server import SandboxOptions, start

        config.work_dir.mkdir(parents=True, exist_ok=True)
        try:
            running = start(SandboxOptions(db_path=config.sandbox_db, strict=config.sandbox_strict))
        except SandboxError as exc:  # the sandbox has its own errors: say it in one sentence
            raise SurveyctlError(f"the embedded sandbox cannot start: {exc}") from exc
        if on_start is not None:
            on_start(running.stop)
        return ApiClient(
            running.url,
            environment.api_key(),
            target=f"the embedded sandbox (environment {environment.name!r})",
            show_host=False,
            **client_options,
        )
    return ApiClient(
        environment.host,
        environment.api_key(),
        target=f"environment {environment.name!r} at {environment.host}",
        **client_options,
    )
