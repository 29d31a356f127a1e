"""A file system with no room left (a small tmpfs, filled up): writing a file there fails with
"no space left on device" as a full disk does. The one sentence names the file being written,
not the folder it is in, the exit code is 1 and no traceback is shown; the file it would have
replaced stays as it was, and no temporary file is left beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..reconcile.conftest import Manifests, survey_manifest
from ..safety.conftest import (  # noqa: F401  (fixtures)
    SURVEY_SPEC,
    completes,
    fill_file_system,
    live_survey,
    small_mount,
)

FULL = "does not fit (no space left on device); free some space"


@pytest.fixture
def small(request) -> Path:
    """`small/` in the project: a file system of its own, 256 kB (safety's small_mount)."""
    return request.getfixturevalue("small_mount")


@pytest.fixture
def full(small: Path) -> Path:
    """`small/` with no room left."""
    fill_file_system(small)
    return small


def temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def test_a_plan_saved_to_a_full_file_system_names_the_plan_file(project, run_cli, full):
    Manifests(project).write(survey_manifest("planned"))

    result = run_cli("plan", "manifests", "--out", "small/change.plan")

    assert result.exit_code == 1, result.stderr
    assert result.stderr.endswith(f"Error: cannot write the plan file: small/change.plan {FULL}\n")
    assert "Traceback" not in result.stderr
    assert temporary_files(full) == []


@pytest.mark.usefixtures("completes")
def test_an_export_to_a_full_file_system_names_the_file_and_keeps_the_earlier_one(
    project, run_cli, small
):
    survey_id = (project / "ids.csv").read_text().splitlines()[1].split(",")[1]
    earlier = small / "export.csv"
    earlier.write_text("an earlier export\n")
    fill_file_system(small)

    result = run_cli("transactions", "list", survey_id, "--output", "small/export.csv")

    assert result.exit_code == 1, result.stderr
    assert result.stderr.endswith(
        f"Error: cannot write --output small/export.csv: the file {FULL}\n"
    )
    assert earlier.read_text() == "an earlier export\n"
    assert temporary_files(small) == []


def test_an_import_to_a_full_file_system_names_the_manifest_and_records_nothing(
    project, api, run_cli, full
):
    survey_id = api.create_survey(SURVEY_SPEC)["ps_survey_id"]

    result = run_cli(
        "import", str(survey_id), "--name", "big", "--out", "small/big.yaml", "--force"
    )

    assert result.exit_code == 1, result.stderr
    assert result.stderr.endswith(
        f"Error: cannot write the manifest: small/big.yaml {FULL}; Survey/big was not recorded\n"
    )
    assert not (full / "big.yaml").exists()
    assert temporary_files(full) == []


def test_an_init_on_a_full_file_system_names_the_file_it_could_not_write(run_cli, full):
    result = run_cli("init", "small")

    assert result.exit_code == 1, result.stderr
    assert result.stderr.endswith(
        f"Error: cannot write small/surveyctl.yaml: the file {FULL}; init wrote no file\n"
    )
    assert temporary_files(full) == []
