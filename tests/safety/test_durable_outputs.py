"""Every file a command writes that would be work lost after a power cut (a saved plan, an
export, the service's answer, a conformance report, an imported manifest, the files of `init`,
a manifest `fmt` rewrites) is flushed to disk while it is still the temporary file, before the
rename makes it the file, and its folder is flushed after the rename; a rename that reached the
disk before the data would otherwise leave an empty file where the command said it wrote one.

Each command runs through its real path against the sandbox over HTTP; `os.fsync` is watched
in the process, which is what the kernel is asked to do (a power cut cannot be made here)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..reconcile.conftest import Manifests
from ..reconcile.conftest import survey_manifest as project_survey
from .conftest import SURVEY_SPEC, configure


@dataclass
class Flushes:
    """What `os.fsync` was asked to flush, in order: each file's identity (device, inode) and
    the name its descriptor had then."""

    calls: list[tuple[tuple[int, int], str]] = field(default_factory=list)

    def of(self, path: Path) -> list[int]:
        """The positions, in `calls`, of the flushes of what is now at `path`."""
        info = os.stat(path)
        return [n for n, (key, _) in enumerate(self.calls) if key == (info.st_dev, info.st_ino)]

    def before_the_rename(self, path: Path) -> bool:
        """Whether the file now at `path` was flushed while it was still its temporary file."""
        return any(Path(self.calls[n][1]).name.startswith(f".{path.name}.") for n in self.of(path))

    def folder_after(self, path: Path) -> bool:
        """Whether the folder of `path` was flushed after the file itself was."""
        file, folder = self.of(path), self.of(path.parent)
        return bool(file) and any(n > file[0] for n in folder)


@pytest.fixture
def flushes(monkeypatch) -> Flushes:
    real = os.fsync
    seen = Flushes()

    def watched(descriptor) -> None:
        number = descriptor if isinstance(descriptor, int) else descriptor.fileno()
        info = os.fstat(number)
        name = os.readlink(f"/proc/self/fd/{number}")
        seen.calls.append(((info.st_dev, info.st_ino), name))
        real(descriptor)

    monkeypatch.setattr(os, "fsync", watched)
    return seen


pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir(), reason="names descriptors through /proc (Linux)"
)


def test_a_saved_plan_is_flushed_to_disk_before_plan_reports_it(project, run_cli, flushes):
    Manifests(project).write(project_survey("saved"))

    result = run_cli("plan", "manifests", "--out", "change.plan")

    assert result.exit_code == 0, result.stderr
    saved = project / "change.plan"
    assert flushes.before_the_rename(saved)
    assert flushes.folder_after(saved)


def test_a_transactions_export_is_flushed_to_disk_before_the_command_reports_it(
    completes, run_cli, flushes, project
):
    survey_id, _ = completes

    result = run_cli(
        "transactions", "list", str(survey_id), "--format", "csv", "--output", "export.csv"
    )

    assert result.exit_code == 0, result.stderr
    export = project / "export.csv"
    assert export.read_text().count("\n") > 1
    assert flushes.before_the_rename(export)
    assert flushes.folder_after(export)


def test_an_adjustment_answer_is_flushed_to_disk_before_adjust_reports_it(
    completes, run_cli, flushes, project
):
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")

    assert result.exit_code == 0, result.stderr
    answer = project / "answer.json"
    assert flushes.before_the_rename(answer)
    assert flushes.folder_after(answer)


def test_a_conformance_report_is_flushed_to_disk_before_conformance_reports_it(
    project, sandbox, run_cli, flushes
):
    configure(project, sandbox.url)

    result = run_cli("conformance", "--yes", "--output", "report.json")

    assert result.exit_code == 0, result.stderr
    report = project / "report.json"
    assert flushes.before_the_rename(report)
    assert flushes.folder_after(report)


def test_an_imported_manifest_is_flushed_to_disk_before_the_state_records_its_survey(
    project, api, run_cli, flushes
):
    survey_id = api.create_survey(SURVEY_SPEC)["ps_survey_id"]

    result = run_cli("import", str(survey_id), "--name", "adopted", "--out", "manifests/a.yaml")

    assert result.exit_code == 0, result.stderr
    manifest = project / "manifests" / "a.yaml"
    assert flushes.before_the_rename(manifest)
    assert flushes.folder_after(manifest)
    state = project / ".surveyctl" / "state"
    first_state_flush = min(
        n for n, (_, name) in enumerate(flushes.calls) if Path(name).parent == state
    )
    assert flushes.of(manifest)[0] < first_state_flush


def test_every_file_init_writes_is_flushed_to_disk_before_init_reports_it(
    project, run_cli, flushes
):
    result = run_cli("init", "fresh")

    assert result.exit_code == 0, result.stderr
    written = [path for path in (project / "fresh").rglob("*") if path.is_file()]
    assert len(written) >= 4
    assert [path for path in written if not flushes.before_the_rename(path)] == []
    assert [path for path in written if not flushes.folder_after(path)] == []


def test_files_init_writes_are_readable_by_the_team_from_the_start(project, run_cli):
    result = run_cli("init", "fresh")

    assert result.exit_code == 0, result.stderr
    modes = {
        path.name: oct(path.stat().st_mode & 0o777)
        for path in (project / "fresh").rglob("*")
        if path.is_file()
    }
    assert set(modes.values()) == {"0o644"}, modes


def test_a_manifest_fmt_rewrites_is_flushed_to_disk_before_fmt_reports_it(
    project, run_cli, flushes
):
    manifest = Manifests(project).write(project_survey("laid-out"))
    manifest.write_text(manifest.read_text().replace("\n", "\n\n"))

    result = run_cli("fmt", "manifests")

    assert result.exit_code == 0, result.stderr
    assert flushes.before_the_rename(manifest)
    assert flushes.folder_after(manifest)
