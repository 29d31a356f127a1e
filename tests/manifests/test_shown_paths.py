"""Findings name a manifest by the path a reviewer knows, not the machine's."""

from __future__ import annotations

import yaml

from tests.reconcile.conftest import survey_manifest


def _configured_with_an_error(project):
    folder = project / "surveys"
    folder.mkdir()
    manifest = survey_manifest("tracker", expected_ir=500)
    (folder / "tracker.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    config = project / "surveyctl.yaml"
    config.write_text(config.read_text() + "manifests: [surveys/]\n", encoding="utf-8")


def test_a_finding_in_a_configured_manifest_names_it_relative_to_the_project(project, run_cli):
    _configured_with_an_error(project)
    result = run_cli("validate", "--offline")
    assert result.exit_code == 1
    assert "surveys/tracker.yaml:" in result.stdout
    assert str(project) not in result.stdout


def test_a_plan_of_the_configured_manifests_names_them_relative_too(project, run_cli):
    _configured_with_an_error(project)
    result = run_cli("plan")
    assert result.exit_code == 1
    assert "surveys/tracker.yaml:" in result.stdout + result.stderr
    assert str(project) not in result.stdout + result.stderr
