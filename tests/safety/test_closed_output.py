"""A command whose reader goes away (`surveyctl plan | head`, `2>&1 | head`) ends as a Unix
tool does, quietly with 141 (128 + SIGPIPE), not with a traceback called a bug; and an apply
whose progress can no longer be written still makes and records every write it was approved
for. Real processes, real pipes."""

from __future__ import annotations

import subprocess

from surveyctl.api import ApiClient
from surveyctl.state import FileStateStore

from ..processes import CREATE_DONE, surveyctl
from .conftest import configure, survey_manifest, write_manifest

SURVEYS = 6


def _surveyctl(project, *args: str) -> subprocess.Popen:
    return surveyctl(project, *args, env={"SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1"})


def test_a_plan_whose_reader_went_away_exits_141_without_a_traceback(project, sandbox):
    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("piped"))
    process = _surveyctl(project, "plan", "manifests")
    process.stdout.close()  # the reader is gone before the plan is printed
    err = process.stderr.read()
    process.wait(timeout=60)

    assert process.returncode == 141, err
    assert "Traceback" not in err and "a bug in surveyctl" not in err


def test_an_apply_whose_progress_reader_went_away_makes_and_records_every_write(
    project, served_sandbox
):
    url = served_sandbox(latency_ms=200)
    configure(project, url)
    for index in range(SURVEYS):
        write_manifest(project, survey_manifest(f"progress-{index}"))
    process = _surveyctl(project, "apply", "manifests", "--auto-approve", "--parallelism", "1")
    for line in process.stderr:
        if CREATE_DONE in line:
            process.stderr.close()  # `2>&1 | head`: the next progress line has no reader
            break
    out, _ = process.communicate(timeout=120)

    assert process.returncode == 0, out
    assert f"Apply complete! Resources: {SURVEYS} added" in out
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    with ApiClient(url, "sandbox-buyer-1") as client:
        live = {survey["ps_survey_id"] for survey in client.list_surveys()}
    assert {record.ps_survey_id for record in state.resources.values()} == live
    assert len(live) == SURVEYS
