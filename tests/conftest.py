"""Shared fixtures: a sandbox on a loopback port, an API client, and a CLI in a project folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from surveyctl.api import ApiClient
from surveyctl.cli.main import cli

BUYER_1_KEY = "sandbox-buyer-1"
BUYER_2_KEY = "sandbox-buyer-2"


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    """One sandbox server for the session; tests create their own surveys in it."""
    from surveyctl.sandbox.server import SandboxOptions, start

    running = start(
        SandboxOptions(
            db_path=tmp_path_factory.mktemp("sandbox") / "sandbox.db", check_responses=True
        )
    )
    yield running
    running.stop()


@pytest.fixture
def api(sandbox) -> ApiClient:
    """A client of buyer 1, without retries so that every answer is seen as it is."""
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    yield client
    client.close()


@pytest.fixture
def other_buyer_api(sandbox) -> ApiClient:
    client = ApiClient(sandbox.url, BUYER_2_KEY, retries=0)
    yield client
    client.close()


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch) -> Path:
    """A project folder whose surveyctl.yaml points the `local` environment at the sandbox."""
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", BUYER_1_KEY)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run_cli(project: Path) -> Callable[..., Result]:
    """Runs `surveyctl ARGS...` in the project folder; stdout and stderr stay apart."""

    def run(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    return run


@pytest.fixture
def start_sandbox(tmp_path):
    """`start_sandbox(**options)` starts a sandbox of its own (faults, latency, extra keys) for
    one test; every one started is stopped afterwards."""
    from surveyctl.sandbox.server import SandboxOptions, start

    running = []

    def make(**options):
        sandbox = start(SandboxOptions(db_path=tmp_path / f"own-{len(running)}.db", **options))
        running.append(sandbox)
        return sandbox

    yield make
    for sandbox in running:
        sandbox.stop()
