"""A state backend defined in this test alone (its settings, its check, its store) is read from
surveyctl.yaml, planned and applied through, and migrated from, with no edit to a core module:
adding a backend is one package and one `register` line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from surveyctl.state import FileStateStore, SurveyRecord
from surveyctl.state import registry as backends

from ..reconcile.conftest import Manifests, survey_manifest


@dataclass(frozen=True)
class FolderSettings:
    """The toy backend: the state file in a folder the settings name."""

    folder: str
    backend: str = "folder"


def _settings(spec: backends.SettingsSpec) -> FolderSettings:
    folder = spec.values.get("folder")
    if not isinstance(folder, str) or not folder:
        raise spec.error("folder", "must name a folder")
    return FolderSettings(folder)


def _open(settings: FolderSettings, config, environment: str) -> FileStateStore:
    return FileStateStore(config.root / settings.folder / f"{environment}.json", environment)


@pytest.fixture
def folder_backend():
    backends.register(backends.Backend("folder", ("folder",), _settings, _open))
    yield
    backends.unregister("folder")


def configure(project: Path, url: str, state: str) -> None:
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{url}', api_key_env: SURVEYCTL_LOCAL_KEY{state}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )


def test_an_apply_keeps_its_state_in_a_backend_registered_by_a_test(
    folder_backend, run_cli, project, sandbox
):
    configure(project, sandbox.url, ", state: {backend: folder, folder: team-state}")
    Manifests(project).write(survey_manifest("tracker"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    stored = FileStateStore(project / "team-state" / "local.json", "local").load()
    assert list(stored.resources) == ["Survey/tracker"]
    assert not (project / ".surveyctl" / "state" / "local.json").exists()
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0 and "No changes." in replanned.stdout


def test_a_wrong_setting_of_a_registered_backend_names_the_file_line_and_field(
    folder_backend, run_cli, project, sandbox
):
    configure(project, sandbox.url, ", state: {backend: folder, folder: ''}")
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert "surveyctl.yaml:2:" in result.stderr
    assert "environments.local.state.folder must name a folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_state_migrate_offers_a_registered_backend_and_copies_from_it(
    folder_backend, run_cli, project, sandbox
):
    configure(project, sandbox.url, "")
    old = FileStateStore(project / "old-state" / "local.json", "local")
    old.record("Survey/tracker", SurveyRecord(4711, {}, {"survey_title": "T"}))
    old.flush()
    result = run_cli("state", "migrate", "--from", "folder", "--setting", "folder=old-state")
    assert result.exit_code == 0, result.stdout + result.stderr
    copied = FileStateStore(project / ".surveyctl" / "state" / "local.json", "local").load()
    assert copied.survey("tracker").ps_survey_id == 4711
    assert copied.lineage == old.load().lineage


def test_state_migrate_refuses_a_backend_nobody_registered(run_cli, project):
    result = run_cli("state", "migrate", "--from", "folder")
    assert result.exit_code == 2
    assert "'folder' is not one of 'file', 'postgres'" in result.stderr
