"""Fixtures of the state tests: every backend-facing test runs on the file and on PostgreSQL."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.state import GroupRecord, StateBackend, SurveyRecord, open_state

DSN_VARIABLE = "SURVEYCTL_STATE_DSN"


@pytest.fixture(params=["file", "postgres"])
def backend(request) -> str:
    """The state backend under test."""
    return request.param


@pytest.fixture
def state_setting(backend, request, monkeypatch) -> str:
    """What an environment of surveyctl.yaml adds to keep its state in `backend` (nothing for
    the file); for PostgreSQL a schema of its own and the DSN in $SURVEYCTL_STATE_DSN."""
    if backend == "file":
        return ""
    postgres = request.getfixturevalue("postgres")
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    return (
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, "
        f"schema: {postgres.fresh_schema()}}}"
    )


@pytest.fixture
def staging_project(tmp_path: Path, monkeypatch, state_setting) -> Path:
    """A project with a staging environment whose state lives in the backend under test; the
    state commands never call the marketplace."""
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        "  staging: {host: 'https://staging.invalid', api_key_env: SURVEYCTL_STAGING_KEY"
        f"{state_setting}}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.delenv("SURVEYCTL_STAGING_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def local_project(folder: Path, url: str, state_setting: str, monkeypatch) -> Path:
    """`folder` as a project whose `local` environment is the marketplace at `url` (with its
    key set), its state in the backend under test; the current folder for the test."""
    (folder / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{url}', api_key_env: SURVEYCTL_LOCAL_KEY{state_setting}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", "sandbox-buyer-1")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(folder)
    return folder


def open_staging(project: Path) -> StateBackend:
    """The staging state of `project`, as the CLI opens it."""
    config = load_config(project / "surveyctl.yaml")
    return open_state(config, config.environment("staging"))


@pytest.fixture
def staging_store(staging_project: Path) -> StateBackend:
    """The staging state with two surveys and two groups (`shared` is both kinds)."""
    store = open_staging(staging_project)
    store.record(
        "Survey/brand-tracker-us",
        SurveyRecord(4711, {"male": "q-1", "female": "q-2"}, {"survey_title": "BT"}),
    )
    store.record("ExclusionGroup/brand-trackers", GroupRecord("trackers-2026", [4711], {}))
    store.record("ExclusionGroup/shared", GroupRecord("shared-ref", [], {}))
    store.record("Survey/shared", SurveyRecord(4712))
    yield store
    store.close()


def held_elsewhere(state_path: Path) -> None:
    """Rewrites the file lock of `state_path` as held on another host (a teammate's machine
    sharing the folder): this host cannot tell whether its holder runs, so force-unlock may
    remove it, as it refuses to for a holder it sees running here."""
    from surveyctl.state.file.lock import lock_file

    path = lock_file(state_path)
    record = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**record, "host": "teammate.example"}), encoding="utf-8")


@pytest.fixture
def hangup_fails_the_test():
    """A SIGHUP to the tests' own process fails the test that sent it. The lock records of
    these tests name this process as the holder, so a check of whether the holder runs that
    signals it would otherwise end the whole run unexplained rather than fail one test."""

    def hung_up(signum, frame):
        raise AssertionError("SIGHUP sent to the holder of the lock, this test's own process")

    previous = signal.signal(signal.SIGHUP, hung_up)
    yield
    signal.signal(signal.SIGHUP, previous)
