"""A command whose reader goes away (`surveyctl plan | head`, `2>&1 | head`) ends as a Unix
tool does, quietly with 141 (128 + SIGPIPE), not with a traceback called a bug; and an apply
whose progress can no longer be written still makes and records every write it was approved
for. Real processes, real pipes."""

from __future__ import annotations

import os
import subprocess

from surveyctl.api import ApiClient
from surveyctl.state import FileStateStore

from ..processes import CREATE_DONE, surveyctl
from .conftest import configure, survey_manifest, survey_title, write_manifest

SURVEYS = 6


def _surveyctl(project, *args: str, **popen) -> subprocess.Popen:
    return surveyctl(project, *args, env={"SURVEYCTL_LOCAL_KEY": "sandbox-buyer-1"}, **popen)


def test_a_plan_whose_reader_went_away_exits_141_without_a_traceback(project, sandbox):
    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("piped"))
    process = _surveyctl(project, "plan", "manifests")
    process.stdout.close()  # the reader is gone before the plan is printed
    err = process.stderr.read()
    process.wait(timeout=60)

    assert process.returncode == 141, err
    assert "Traceback" not in err and "a bug in surveyctl" not in err


def test_a_table_whose_reader_went_away_exits_141_without_a_word(project, sandbox):
    configure(project, sandbox.url)
    process = _surveyctl(project, "attributes")  # a table that rich writes
    process.stdout.close()
    err = process.stderr.read()
    process.wait(timeout=60)

    assert process.returncode == 141, err
    assert "Traceback" not in err and "Error" not in err


def test_the_root_help_whose_reader_went_away_exits_141_as_every_command(project):
    process = _surveyctl(project, "--help")
    process.stdout.close()
    err = process.stderr.read()
    process.wait(timeout=60)

    assert process.returncode == 141, err
    assert err == ""


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


def _closing(fd: int):
    """What the child runs before surveyctl starts: the shell's `>&-` (1), `2>&-`, `<&-`."""
    return lambda: os.close(fd)


def test_a_command_whose_stdout_is_closed_is_refused_in_one_sentence_before_any_write(
    project, sandbox
):
    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("closed-stdout"))
    process = _surveyctl(
        project, "apply", "manifests", "--auto-approve", stdout=None, preexec_fn=_closing(1)
    )
    _, err = process.communicate(timeout=60)

    assert process.returncode == 1
    assert err.strip() == (
        "Error: standard output is closed (>&-), so nothing the command prints could be read; "
        "send it to /dev/null or a file instead (>/dev/null)"
    )
    with ApiClient(sandbox.url, "sandbox-buyer-1") as client:
        titles = {survey["survey_title"] for survey in client.list_surveys()}
    assert survey_title("closed-stdout") not in titles


def test_a_closed_stdin_is_no_terminal_to_ask(project, sandbox):
    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("closed-stdin"))
    process = _surveyctl(project, "apply", "manifests", preexec_fn=_closing(0))
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1, err
    assert "there is no terminal to ask: confirm with --auto-approve" in err
    assert "Traceback" not in err


def test_a_closed_stderr_silences_messages_and_keeps_output_and_exit_code(project, sandbox):
    configure(project, sandbox.url)
    write_manifest(project, survey_manifest("closed-stderr"))
    process = _surveyctl(project, "plan", "manifests", stderr=None, preexec_fn=_closing(2))
    out, _ = process.communicate(timeout=60)

    assert process.returncode == 0
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in out
