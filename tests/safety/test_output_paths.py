"""Nothing moves before its output can be written: output paths are checked first."""

from __future__ import annotations

import os

import pytest

from .conftest import adjustment_count, configure, survey_manifest, write_manifest

UNREACHABLE = "http://127.0.0.1:9"


def test_adjust_with_a_missing_output_folder_submits_nothing(sandbox, completes, run_cli):
    survey_id, ids = completes
    before = adjustment_count(sandbox)
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "nodir/a.json")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: cannot write --output nodir/a.json: the folder nodir does not exist"
    )
    assert adjustment_count(sandbox) == before


def test_adjust_with_an_output_that_is_a_folder_submits_nothing(
    sandbox, completes, run_cli, project, api
):
    survey_id, ids = completes
    (project / "answers").mkdir()
    before = adjustment_count(sandbox)
    result = run_cli("adjust", "ids.csv", "--yes", "--output", "answers")
    assert result.exit_code == 1
    assert "cannot write --output answers: it is a folder" in result.stderr
    assert adjustment_count(sandbox) == before
    assert api.get_transaction(survey_id, ids[0])["Reconciliation Status"] == 0


def test_transactions_list_refuses_an_unwritable_output_before_any_request(project, run_cli):
    # An unreachable service: had a request been made first, the error would be about it.
    configure(project, UNREACHABLE)
    result = run_cli("transactions", "list", "10001", "--output", "nodir/c.csv")
    assert result.exit_code == 1
    assert "cannot write --output nodir/c.csv: the folder nodir does not exist" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("target", ["/proc/p.plan", "/sys/p.plan"])
def test_plan_refuses_an_output_in_a_pseudo_file_system_before_any_request(
    project, run_cli, target
):
    configure(project, UNREACHABLE)
    write_manifest(project, survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--out", target)
    assert result.exit_code == 1
    assert f"cannot write --out {target}: a file cannot be written in" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# 256 bytes: longer than the name any common file system allows.
TOO_LONG = "a" * 256


def test_plan_refuses_an_output_name_longer_than_the_system_allows_in_one_sentence(
    project, run_cli
):
    configure(project, UNREACHABLE)
    write_manifest(project, survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--out", f"{TOO_LONG}.plan")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: cannot write --out {TOO_LONG}.plan: File name too long"
    )


def test_transactions_list_refuses_an_output_name_longer_than_the_system_allows(project, run_cli):
    configure(project, UNREACHABLE)
    result = run_cli("transactions", "list", "10001", "--output", TOO_LONG)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: cannot write --output {TOO_LONG}: File name too long"


def test_import_refuses_an_output_name_longer_than_the_system_allows(project, run_cli):
    configure(project, UNREACHABLE)
    result = run_cli("import", "10001", "--name", "tracker", "--out", f"{TOO_LONG}.yaml")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: cannot write --out {TOO_LONG}.yaml: File name too long"
    )
    assert not (project / ".surveyctl" / "state" / "local.json").exists()


def test_import_refuses_an_unwritable_output_before_touching_state(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    (project / "taken").write_text("a file where a folder is needed")
    result = run_cli("import", str(survey_id), "--name", "tracker", "--out", "taken/t.yaml")
    assert result.exit_code == 1
    assert "cannot write --out taken/t.yaml: taken is not a folder" in result.stderr
    assert not (project / ".surveyctl" / "state" / "local.json").exists()


def test_a_writable_output_in_a_new_folder_is_accepted_by_import(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "tracker", "--out", "new/dir/t.yaml")
    assert result.exit_code == 0, result.stderr
    assert (project / "new" / "dir" / "t.yaml").is_file()


def test_a_plan_saved_to_a_named_pipe_is_written_into_it_and_the_pipe_stays_a_pipe(
    project, sandbox, run_cli
):
    import os
    import stat
    import threading

    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("piped"))
    pipe = project / "plan.fifo"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    result = run_cli("plan", "manifests", "--out", str(pipe))
    reader.join(10)

    assert result.exit_code == 0, result.stderr
    assert received and b'"kind": "surveyctl-plan"' in received[0]
    # Renamed over, it would have become a regular file (as root, even /dev/null).
    assert stat.S_ISFIFO(pipe.stat().st_mode)


FULL_DEVICE = "/dev/full"  # every write to it fails with "no space left on device"
needs_full_device = pytest.mark.skipif(
    not os.path.exists(FULL_DEVICE), reason="needs /dev/full (Linux)"
)


@needs_full_device
def test_a_transactions_export_to_a_full_disk_is_one_sentence(project, sandbox, completes, run_cli):
    survey_id, _ = completes
    result = run_cli("transactions", "list", str(survey_id), "--output", FULL_DEVICE)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: cannot write --output {FULL_DEVICE}: the file does not fit (no space left on "
        "device); free some space"
    )


@needs_full_device
def test_a_conformance_report_that_cannot_be_saved_is_shown_and_the_failure_said(
    project, sandbox, run_cli
):
    configure(project, sandbox.url)
    result = run_cli("conformance", "--yes", "--output", FULL_DEVICE)
    assert result.exit_code == 1
    assert "assumption" in result.stdout  # the report of the run is not lost
    assert (
        f"cannot write --output {FULL_DEVICE}: the file does not fit (no space left on "
        "device); free some space; the report is above" in result.stderr
    )
    assert "Traceback" not in result.stderr
