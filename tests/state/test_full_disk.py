"""A disk nearly full: here a real kernel limit on the size of a file the process writes, which
fails the write as a full disk does. An apply whose writes are in the change log but whose
state file cannot be rewritten reports them, with a warning; one whose log stops taking lines
halts and the next apply settles what it did; an import whose manifest cannot be written says
so in one sentence and records nothing; a plan whose attribute cache cannot be written plans."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from pathlib import Path

from surveyctl.state import FileStateStore

from ..processes import surveyctl
from ..reconcile.conftest import Manifests, survey_manifest
from ..safety.conftest import SURVEY_SPEC

# Larger than one line of the change log, smaller than the state file of SURVEYS surveys.
FILE_SIZE_LIMIT = 2_000
SURVEYS = 8


def on_a_nearly_full_disk(
    project: Path, *args: str, limit: int = FILE_SIZE_LIMIT
) -> subprocess.CompletedProcess:
    """`surveyctl ARGS` run to its end in `project`, each file it writes limited to `limit`
    bytes."""

    def limited_file_size() -> None:  # in the child: writes past it fail (EFBIG), not kill it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    process = surveyctl(project, *args, preexec_fn=limited_file_size)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_an_apply_whose_state_file_cannot_be_rewritten_reports_its_recorded_writes(
    project, run_cli
):
    manifests = Manifests(project)
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"full-{number}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    state_path = project / ".surveyctl" / "state" / "local.json"
    assert state_path.stat().st_size > FILE_SIZE_LIMIT
    manifests.write(survey_manifest("full-0", offer_price=4))

    applied = on_a_nearly_full_disk(project, "apply", "manifests", "--auto-approve")

    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "Apply complete! Resources: 0 added, 1 changed, 0 destroyed." in applied.stdout
    assert "every write of this command is kept in" in applied.stderr
    assert "local.changes.jsonl" in applied.stderr
    state = FileStateStore(state_path).load()
    assert state.resources["Survey/full-0"].last_applied["offer_price"] == 4
    assert json.loads(Path(state_path).read_text())["serial"] < state.serial  # in the log only
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_an_apply_whose_change_log_fills_the_disk_halts_and_the_next_apply_settles_it(
    project, run_cli
):
    manifests = Manifests(project)
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"full-{number}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"full-{number}", offer_price=4))

    # One write at a time: two lines of the log fit under the limit, the third does not.
    halted = on_a_nearly_full_disk(
        project, "apply", "manifests", "--auto-approve", "--parallelism", "1"
    )

    shown = halted.stdout + halted.stderr
    assert halted.returncode == 1, shown
    assert "not attempted (a state write failed)" in shown
    assert "Traceback" not in shown
    rerun = run_cli("apply", "manifests", "--auto-approve")
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    assert {r.last_applied["offer_price"] for r in state.resources.values()} == {4}


def test_a_history_that_fills_the_disk_keeps_no_half_line_and_loses_no_change(project, run_cli):
    manifests = Manifests(project)
    for number in range(SURVEYS):
        manifests.write(survey_manifest(f"full-{number}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    history = project / ".surveyctl" / "state" / "local.history.jsonl"
    before = history.read_bytes()
    manifests.write(survey_manifest("full-0", offer_price=4))

    # The state file is smaller than the history, which takes 100 more bytes, not the change.
    applied = on_a_nearly_full_disk(
        project, "apply", "manifests", "--auto-approve", limit=len(before) + 100
    )

    assert applied.returncode == 0, applied.stderr
    assert "cannot write the state history: " in applied.stderr
    assert "every write of this command is kept in" in applied.stderr
    assert history.read_bytes() == before
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0
    changed = run_cli("state", "history", "Survey/full-0")
    assert changed.stdout.rstrip().endswith("changed"), changed.stdout


def test_an_import_whose_manifest_cannot_be_written_is_one_sentence_and_records_nothing(
    project, api
):
    # A manifest of 20 quotas is larger than the files the disk still takes; the lock fits.
    quotas = [
        {
            "buyer_quota_id": f"region-{number:02d}",
            "required_count": 10,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
        }
        for number in range(20)
    ]
    survey_id = api.create_survey({**SURVEY_SPEC, "quotas": quotas})["ps_survey_id"]
    (project / "manifests").mkdir()

    imported = on_a_nearly_full_disk(
        project, "import", str(survey_id), "--name", "big", "--out", "manifests/big.yaml"
    )

    assert imported.returncode == 1, imported.stderr
    assert imported.stderr.endswith(
        "cannot write the manifest: manifests/big.yaml does not fit (file too large); free some "
        "space; Survey/big was not recorded\n"
    ), imported.stderr
    assert "Traceback" not in imported.stderr
    assert not (project / "manifests" / "big.yaml").exists()
    assert FileStateStore(project / ".surveyctl" / "state" / "local.json").load().resources == {}


def test_a_plan_on_a_disk_too_full_for_the_attribute_cache_still_plans(project):
    gender = [{"attribute": "Gender", "answers": ["Male", "Female"]}]
    Manifests(project).write(survey_manifest("named", qualifications=gender))

    # The catalogue's cache file is far larger than the limit.
    planned = on_a_nearly_full_disk(project, "plan", "manifests")

    assert planned.returncode == 0, planned.stderr
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in planned.stdout


def test_an_apply_that_cannot_write_its_lock_record_is_one_sentence_and_sends_nothing(project, api):
    Manifests(project).write(survey_manifest("locked-out"))

    # The lock record, written before anything is sent, is longer than 100 bytes.
    applied = on_a_nearly_full_disk(project, "apply", "manifests", "--auto-approve", limit=100)

    assert applied.returncode == 1, applied.stderr
    assert applied.stderr.endswith(
        f"Error: cannot take the state lock: {project / '.surveyctl' / 'state' / 'local.lock.json'}"
        " does not fit (file too large); free some space\n"
    ), applied.stderr
    assert api.list_surveys() == []
    assert not (project / ".surveyctl" / "state" / "local.lock.json").exists()
