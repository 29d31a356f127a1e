"""Fixtures for hostile-input tests: manifests in the project folder and a project pointed at a
sandbox of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..reconcile.conftest import Manifests, survey_manifest, unique  # noqa: F401  (re-exported)


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def point_project_at(project: Path, url: str, env_var: str = "SURVEYCTL_LOCAL_KEY") -> None:
    """Makes the project's `local` environment the marketplace at `url`, key in `env_var`."""
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  local: {{host: '{url}', api_key_env: {env_var}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
