"""A disk nearly full, for the files of the project that are not its state: a real kernel limit
on the size of a file the process writes (tests/state/test_full_disk.py), which fails the
write as a full disk does. Each write that does not fit is one sentence naming the file, exit
code 1 and no traceback; the file it would have replaced stays as it was, no temporary file is
left beside it, and nothing is sent that no record could keep."""

from __future__ import annotations

import errno
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from surveyctl.api import ApiClient

from ..conformance.conftest import drafts_left
from ..processes import command, surveyctl
from ..reconcile.conftest import Manifests, survey_manifest
from ..safety.conftest import (  # noqa: F401  (fixtures)
    JOURNAL,
    adjustment_count,
    completes,
    configure,
    live_survey,
)


def on_a_nearly_full_disk(project: Path, limit: int, *args: str) -> subprocess.CompletedProcess:
    """`surveyctl ARGS` run to its end in `project`, each file it writes limited to `limit`
    bytes."""

    def limited_file_size() -> None:  # in the child: writes past the limit fail (EFBIG)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    process = surveyctl(project, *args, preexec_fn=limited_file_size)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def many_quotas(count: int) -> list[dict]:
    return [
        {
            "buyer_quota_id": f"region-{number:02d}",
            "required_count": 1,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        }
        for number in range(count)
    ]


def a_manifest_of_many_quotas(project: Path) -> Path:
    """A manifest of 4 kB whose layout fmt changes (a blank line after each line)."""
    path = Manifests(project).write(survey_manifest("big", quotas=many_quotas(30)))
    path.write_text(path.read_text().replace("\n", "\n\n"))
    return path


def test_a_manifest_fmt_cannot_rewrite_for_a_full_disk_is_left_as_it_was(project):
    manifest = a_manifest_of_many_quotas(project)
    before = manifest.read_text()

    formatted = on_a_nearly_full_disk(project, 1_500, "fmt", "manifests")

    assert formatted.returncode == 1, formatted.stderr
    assert formatted.stderr == (
        "Error: cannot rewrite manifests/big.yaml: the file does not fit (file too large); "
        "free some space; it is left as it was\n"
    )
    assert manifest.read_text() == before
    assert temporary_files(project) == []


def test_an_init_that_fills_the_disk_removes_what_it_wrote_so_it_can_run_again(tmp_path):
    # surveyctl.yaml, .gitignore and the example fit; the manifests' schema does not.
    failed = on_a_nearly_full_disk(tmp_path, 3_000, "init", ".")

    assert failed.returncode == 1, failed.stderr
    assert failed.stderr == (
        "Error: cannot write schemas/manifest.schema.json: the file does not fit (file too "
        "large); free some space; the files init wrote before it are removed again, so it can "
        "run again\n"
    )
    assert not (tmp_path / "surveyctl.yaml").exists()
    assert temporary_files(tmp_path) == []
    again = subprocess.run(command("init", "."), cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "surveyctl.yaml").is_file()


@pytest.mark.usefixtures("completes")
def test_an_export_that_fills_the_disk_keeps_the_earlier_export(project):
    survey_id = (project / "ids.csv").read_text().splitlines()[1].split(",")[1]
    export = project / "transactions.csv"
    export.write_text("an earlier export\n")

    exported = on_a_nearly_full_disk(
        project, 1_000, "transactions", "list", survey_id, "--output", "transactions.csv"
    )

    assert exported.returncode == 1, exported.stderr
    assert exported.stderr.endswith(
        "Error: cannot write --output transactions.csv: the file does not fit (file too "
        "large); free some space\n"
    )
    assert export.read_text() == "an earlier export\n"
    assert temporary_files(project) == []


def test_a_saved_plan_that_fills_the_disk_keeps_the_earlier_plan(project, run_cli):
    manifests = Manifests(project)
    manifests.write(survey_manifest("plan-0"))
    assert run_cli("plan", "manifests", "--out", "plan.json").exit_code == 0
    saved = project / "plan.json"
    earlier = saved.read_text()
    for number in range(1, 5):
        manifests.write(survey_manifest(f"plan-{number}"))

    planned = on_a_nearly_full_disk(project, 3_000, "plan", "manifests", "--out", "plan.json")

    assert planned.returncode == 1, planned.stderr
    assert planned.stderr.endswith(
        "Error: cannot write the plan file: plan.json does not fit (file too large); free some "
        "space\n"
    ), planned.stderr
    assert saved.read_text() == earlier
    assert temporary_files(project) == []


@pytest.mark.usefixtures("completes")
def test_an_adjustment_whose_journal_cannot_take_its_record_is_not_sent(project, sandbox):
    before = adjustment_count(sandbox)

    # The record of the submission, written before it is sent, is longer than 100 bytes.
    refused = on_a_nearly_full_disk(project, 100, "adjust", "ids.csv", "--yes")

    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.endswith("does not fit (file too large); free some space; nothing sent\n")
    assert "cannot write the adjustments journal" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert adjustment_count(sandbox) == before


@pytest.mark.usefixtures("completes")
def test_a_journal_line_that_does_not_fit_leaves_no_half_line(project):
    journal = project.joinpath(*JOURNAL)

    on_a_nearly_full_disk(project, 100, "adjust", "ids.csv", "--yes")

    assert journal.read_bytes() == b""


def test_a_conformance_run_that_cannot_write_its_journal_creates_no_draft_and_leaves_no_file(
    project, sandbox
):
    configure(project, sandbox.url)

    # The journal's entry, written before the draft is created, is longer than 40 bytes.
    checked = on_a_nearly_full_disk(project, 40, "conformance", "--yes")

    assert checked.returncode == 1, checked.stderr
    assert "cannot write the conformance journal: " in checked.stderr
    assert "does not fit (file too large); free some space" in checked.stderr
    assert "Traceback" not in checked.stderr
    assert drafts_left(sandbox.url) == []
    assert temporary_files(project) == []


def test_a_file_error_no_command_expected_is_one_sentence_naming_the_file(
    project, run_cli, monkeypatch
):
    def full(self, status=None):
        raise OSError(errno.ENOSPC, "No space left on device", "exports/surveys.json")

    monkeypatch.setattr(ApiClient, "list_surveys", full)
    result = run_cli("surveys", "list")

    assert result.exit_code == 1
    assert result.stderr.endswith(
        "Error: cannot write exports/surveys.json: the file does not fit (no space left on "
        "device); free some space\n"
    )
    assert "Traceback" not in result.stderr


def test_a_full_disk_no_command_expected_is_one_sentence_without_a_traceback(
    project, run_cli, monkeypatch
):
    def full(self, status=None):
        raise OSError(errno.EFBIG, "File too large")  # a write names no file

    monkeypatch.setattr(ApiClient, "list_surveys", full)
    result = run_cli("surveys", "list")

    assert result.exit_code == 1
    assert result.stderr.endswith(
        "Error: cannot go on: a file could not be written (file too large); free some space\n"
    )
    assert "Traceback" not in result.stderr


def test_an_embedded_sandbox_whose_data_does_not_fit_says_so_and_not_that_it_is_a_bug(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    manifests = Manifests(tmp_path)  # no surveyctl.yaml: the embedded sandbox
    manifests.write(survey_manifest("first"))
    started = subprocess.run(command("plan", "manifests"), cwd=tmp_path, capture_output=True)
    assert started.returncode == 0, started.stderr
    for number in range(10):
        manifests.write(survey_manifest(f"more-{number}", quotas=many_quotas(20)))

    # Its data file (70 kB when made) cannot take ten more surveys of 20 quotas.
    applied = on_a_nearly_full_disk(tmp_path, 100_000, "apply", "manifests", "--auto-approve")

    shown = applied.stdout + applied.stderr
    assert applied.returncode == 1, shown
    assert f"the sandbox cannot write its data in {tmp_path / '.surveyctl' / 'sandbox.db'}" in shown
    assert "free some space" in shown
    assert "a bug" not in shown
    assert "Traceback" not in shown


def test_a_validate_on_a_disk_too_full_for_its_cache_validates_and_leaves_no_temporary_file(
    project, own_cache_folder
):
    manifests = Manifests(project)
    for number in range(10):
        manifests.write(survey_manifest(f"cached-{number}", quotas=many_quotas(5)))

    # The pack of ten parsed manifests is larger than 1 kB.
    validated = on_a_nearly_full_disk(project, 1_000, "validate", "manifests")

    assert validated.returncode == 0, validated.stderr
    assert "Valid: 10 surveys" in validated.stdout
    assert temporary_files(own_cache_folder) == []


def test_a_fmt_on_a_disk_too_full_for_its_cache_formats_and_leaves_no_temporary_file(
    project, own_cache_folder
):
    manifests = Manifests(project)
    for number in range(40):
        manifests.write(survey_manifest(f"laid-out-{number}"))
    assert on_a_nearly_full_disk(project, 100_000, "fmt", "manifests").returncode == 0
    manifests.write(survey_manifest("laid-out-40"))

    # The 41 texts found formatted (a digest of 64 characters each) are more than 1 kB.
    formatted = on_a_nearly_full_disk(project, 1_000, "fmt", "manifests")

    assert formatted.returncode == 0, formatted.stderr
    assert formatted.stdout == "reformatted manifests/laid-out-40.yaml\n"
    assert temporary_files(own_cache_folder) == []


def test_an_embedded_sandbox_that_cannot_make_its_data_file_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    Manifests(tmp_path).write(survey_manifest("first"))  # no surveyctl.yaml: embedded sandbox

    # A new data file (70 kB) is far larger than the limit.
    planned = on_a_nearly_full_disk(tmp_path, 5_000, "plan", "manifests")

    assert planned.returncode == 1, planned.stderr
    assert planned.stderr.endswith(
        f"Error: the embedded sandbox cannot start: {tmp_path / '.surveyctl' / 'sandbox.db'}: "
        "cannot open the sandbox data: disk I/O error; free some space\n"
    ), planned.stderr
