"""Links in the manifest folders: followed inside the project, refused when they lead out of
it (a pull request could add one to `/`, or to a file of the machine that runs the plan), and
a loop of links is one sentence, not a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import make_survey, run_surveyctl

# The old code walked a link to / until the system refused a folder; the commands take well
# under a second.
GUARD_SECONDS = 60


def _surveyctl(project: Path, *args: str) -> subprocess.CompletedProcess:
    return run_surveyctl(project, *args, timeout=GUARD_SECONDS)


@pytest.fixture
def project(tmp_path):
    """A project folder (no repository, no surveyctl.yaml) with one survey in manifests/."""
    root = tmp_path / "project"
    (root / "manifests").mkdir(parents=True)
    (root / "manifests" / "survey.yaml").write_text(make_survey(), encoding="utf-8")
    return root


@pytest.fixture
def elsewhere(tmp_path):
    """A folder beside the project holding a survey manifest."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "other.yaml").write_text(make_survey(name="other-survey"), encoding="utf-8")
    return folder


def test_a_link_to_a_folder_outside_the_project_is_an_error_and_is_not_walked(project, elsewhere):
    (project / "manifests" / "shared").symlink_to(elsewhere)
    result = _surveyctl(project, "validate", "--offline", "manifests")
    assert result.returncode == 1
    assert (
        f"error: manifests/shared is a link to {elsewhere}, outside {project}: a link in the "
        "manifests must stay inside the project" in result.stdout
    )
    assert "other-survey" not in result.stdout
    assert "1 error and 0 warnings" in result.stdout


def test_a_link_to_the_root_of_the_machine_in_the_configured_folders_stops_the_plan(project):
    (project / "surveyctl.yaml").write_text("manifests: [manifests/]\n", encoding="utf-8")
    (project / "manifests" / "everything").symlink_to("/")
    result = _surveyctl(project, "plan", "--offline")
    assert result.returncode == 1
    assert f"manifests/everything is a link to /, outside {project}" in result.stderr
    assert "nothing was planned" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_linked_manifest_file_outside_the_project_is_not_read(project, tmp_path):
    # Its text would show in the parse error, in a plan posted to a pull request.
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: [hunter2\n", encoding="utf-8")
    (project / "manifests" / "innocent.yaml").symlink_to(secret)
    result = _surveyctl(project, "validate", "--offline", "manifests")
    assert result.returncode == 1
    assert f"manifests/innocent.yaml is a link to {secret}, outside {project}" in result.stdout
    assert "hunter2" not in result.stdout + result.stderr


def test_a_link_to_a_folder_inside_the_project_is_read(project):
    common = project / "common"
    common.mkdir()
    (common / "shared.yaml").write_text(make_survey(name="shared-survey"), encoding="utf-8")
    (project / "manifests" / "common").symlink_to("../common")
    result = _surveyctl(project, "validate", "--offline", "manifests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 surveys and 0 exclusion groups in 2 files" in result.stdout


def test_a_folder_named_outside_the_project_may_hold_links_within_itself(project, elsewhere):
    (elsewhere / "waves").mkdir()
    (elsewhere / "waves" / "wave.yaml").write_text(make_survey(name="wave"), encoding="utf-8")
    (elsewhere / "current").symlink_to("waves")
    result = _surveyctl(project, "validate", "--offline", str(elsewhere))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 surveys and 0 exclusion groups in 2 files" in result.stdout


def test_a_loop_of_links_is_one_sentence_per_link(project):
    (project / "manifests" / "x.yaml").symlink_to("y.yaml")
    (project / "manifests" / "y.yaml").symlink_to("x.yaml")
    result = _surveyctl(project, "validate", "--offline", "manifests")
    assert result.returncode == 1
    assert "error: Cannot read manifests/x.yaml: Too many levels of symbolic links" in (
        result.stdout
    )
    assert "error: Cannot read manifests/y.yaml: Too many levels of symbolic links" in (
        result.stdout
    )
    assert "Traceback" not in result.stderr


def test_fmt_names_every_finding_of_the_walk(project):
    (project / "manifests" / "x.yaml").symlink_to("y.yaml")
    (project / "manifests" / "y.yaml").symlink_to("x.yaml")
    result = _surveyctl(project, "fmt", "--check", "manifests")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: Cannot read manifests/x.yaml: Too many levels of symbolic links.",
        "error: Cannot read manifests/y.yaml: Too many levels of symbolic links.",
        "Error: 2 errors in finding the manifests; nothing was formatted",
    ]
