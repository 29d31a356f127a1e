"""Where surveyctl finds its configuration and keeps the embedded sandbox's files: the
surveyctl.yaml of the current folder or of a parent up to the repository root, and one
`.surveyctl/` per project."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from surveyctl.cli.main import cli

STAGING = (
    "environments:\n"
    "  production: {host: 'https://api.example.com', api_key_env: SURVEYCTL_DISCOVERY_KEY}\n"
)


@pytest.fixture
def repository(tmp_path: Path, monkeypatch) -> Path:
    """A repository (a `.git` folder is what marks its root) with a sub-folder as the current
    folder."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "surveys" / "2026").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "surveys" / "2026")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_a_sub_folder_uses_the_surveyctl_yaml_of_the_repository_root(repository):
    (repository / "surveyctl.yaml").write_text(STAGING)
    result = _run("--env", "production", "state", "list")
    assert result.exit_code == 0, result.output
    assert "environment production (https://api.example.com)" in result.stderr


def test_debug_names_the_configuration_file_used(repository):
    (repository / "surveyctl.yaml").write_text(STAGING)
    result = _run("--debug", "state", "list")
    assert f"surveyctl: configuration {repository.resolve() / 'surveyctl.yaml'}" in result.stderr


def test_a_surveyctl_yaml_above_the_repository_root_is_not_used(repository):
    (repository / "surveys" / ".git").mkdir()  # a repository of its own, inside the other one
    (repository / "surveyctl.yaml").write_text(STAGING)
    result = _run("--env", "production", "state", "list")
    assert result.exit_code == 1
    assert "unknown environment 'production'; known: sandbox (no surveyctl.yaml found in" in (
        result.stderr
    )


def test_outside_a_repository_only_the_current_folder_is_looked_at(tmp_path, monkeypatch):
    (tmp_path / "surveyctl.yaml").write_text(STAGING)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    result = _run("--env", "production", "state", "list")
    assert result.exit_code == 1
    assert "which is not in a git repository" in result.stderr


def test_without_surveyctl_yaml_the_embedded_sandbox_is_named_as_the_fallback(repository):
    result = _run("surveys", "list")
    assert result.exit_code == 0, result.output
    assert "surveyctl: no surveyctl.yaml found; using the embedded sandbox" in result.stderr


def test_the_embedded_sandbox_keeps_its_files_at_the_repository_root(repository):
    assert _run("surveys", "list").exit_code == 0
    assert (repository / ".surveyctl" / "sandbox.db").is_file()
    assert not (repository / "surveys" / "2026" / ".surveyctl").exists()


def test_the_sandbox_database_leaves_no_wal_or_shm_file_after_the_command(repository):
    assert _run("surveys", "list").exit_code == 0
    left = sorted(p.name for p in (repository / ".surveyctl").iterdir())
    assert "sandbox.db" in left
    assert not [name for name in left if name.endswith(("-wal", "-shm"))]
