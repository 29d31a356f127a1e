"""`surveyctl conformance` against the sandbox over real HTTP: the verdicts, the draft removed
whatever ends the run (the end, Ctrl-C, kill -9 and the next run), and the approval rule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from surveyctl.sandbox.process import served

from .conftest import drafts_left

KEY = "sandbox-buyer-1"
# Rows about the service's leniency (fields the spec does not list, padded state codes, quota
# PUT fields): they hold against the sandbox's default mode and differ against --strict.
LENIENCY = {
    "put-get-body",
    "put-unknown-field",
    "state-padded",
    "feasibility-criterias",
    "quota-put-id",
    "quota-put-title",
}
NEVER_CHECKED = {
    "status-moves",
    "transactions",
    "adjustments",
    "return-link",
    "rate-limit",
    "qbp-live",
    "groups",
    "after-live",
    "text-check",
    "other-buyer-403",
}


def _verdicts(report: dict) -> dict[str, str]:
    return {row["id"]: row["verdict"] for row in report["rows"]}


def _run(folder: Path, url: str, *options: str) -> dict:
    """One run against the sandbox at `url`, its JSON report read from --output (the table it
    showed is kept in `folder`/table.txt)."""
    from click.testing import CliRunner

    from surveyctl.cli.main import cli

    config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_C_KEY"}}}
    (folder / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    before = os.getcwd()
    os.chdir(folder)
    os.environ["SURVEYCTL_C_KEY"] = KEY
    try:
        result = CliRunner().invoke(
            cli, ["--env", "local", "conformance", "--output", "report.json", *options]
        )
    finally:
        os.chdir(before)
        del os.environ["SURVEYCTL_C_KEY"]
    assert result.exit_code == 0, result.output
    (folder / "table.txt").write_text(result.stdout, encoding="utf-8")
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, sandbox) -> Path:
    """The folder of one run against the session's sandbox (its default, faithful mode)."""
    folder = tmp_path_factory.mktemp("conformance")
    _run(folder, sandbox.url)
    return folder


@pytest.fixture(scope="module")
def report(run_folder) -> dict:
    """That run's JSON report."""
    return json.loads((run_folder / "report.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def strict_report(tmp_path_factory, strict_sandbox) -> dict:
    """One run against the sandbox served --strict."""
    return _run(tmp_path_factory.mktemp("conformance-strict"), strict_sandbox.url)


def test_every_checkable_assumption_holds_against_the_sandbox(report):
    verdicts = _verdicts(report)
    checkable = set(verdicts) - NEVER_CHECKED
    assert len(checkable) >= 30
    assert {name: verdicts[name] for name in checkable} == dict.fromkeys(checkable, "holds")


def test_a_draft_of_another_locale_leaves_the_us_state_rows_unchecked_and_the_rest_holding(
    tmp_path, sandbox
):
    rows = {row["id"]: row for row in _run(tmp_path, sandbox.url, "--locale", "de_DE")["rows"]}
    state_rows = {"state-unpadded", "state-padded"}
    assert {name: rows[name]["verdict"] for name in state_rows} == dict.fromkeys(
        state_rows, "not checked"
    )
    assert "en_US catalogue only; the draft is de_DE" in rows["state-padded"]["seen"]
    checkable = set(rows) - NEVER_CHECKED - state_rows
    assert {name: rows[name]["verdict"] for name in checkable} == dict.fromkeys(checkable, "holds")


def test_what_cannot_be_checked_safely_is_reported_not_checked(report):
    verdicts = _verdicts(report)
    assert {name: verdicts[name] for name in NEVER_CHECKED} == dict.fromkeys(
        NEVER_CHECKED, "not checked"
    )


def test_the_report_says_whether_the_list_carries_mod_on(report):
    mod_on = _verdicts(report)["list-mod_on"] == "holds"
    assert report["list_carries_mod_on"] is mod_on


def test_the_draft_is_deleted_and_in_no_status_list_afterwards(report, sandbox):
    assert report["draft"]["removed"] is True
    assert report["draft"]["how"] == "deleted"
    assert drafts_left(sandbox.url) == []


def test_a_row_names_its_source_and_what_was_seen(report):
    row = next(row for row in report["rows"] if row["id"] == "unknown-survey-404")
    assert row["source"] == "public facts"
    assert "404" in row["seen"] and "1006" in row["seen"]


def test_the_drafts_transactions_are_read_in_pages_of_500_and_found_empty(report):
    row = next(row for row in report["rows"] if row["id"] == "transactions-page")
    assert row["verdict"] == "holds"
    assert row["seen"].endswith("with limit=500: 0 transactions, total_pages '1'")


def test_the_table_keeps_its_columns_in_line_on_every_row(run_folder):
    # A source longer than its column ("spec 1.5, 2.7, 3, sandbox decision") pushed the
    # result and what was seen of its row out of line with every other row.
    table = (run_folder / "table.txt").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if " | " in line]
    assert len(rows) > 40
    bars = {tuple(i for i, c in enumerate(row) if c == "|")[:3] for row in rows}
    assert len(bars) == 1, bars


def test_the_leniency_rows_differ_against_a_strict_sandbox(strict_report):
    verdicts = _verdicts(strict_report)
    assert {name: verdicts[name] for name in LENIENCY} == dict.fromkeys(LENIENCY, "differs")


def test_the_other_checkable_rows_hold_against_a_strict_sandbox(strict_report):
    verdicts = _verdicts(strict_report)
    others = set(verdicts) - NEVER_CHECKED - LENIENCY
    assert {name: verdicts[name] for name in others} == dict.fromkeys(others, "holds")


def test_a_protected_environment_needs_env_and_yes(project, run_cli, sandbox):
    config = {
        "environments": {
            "prod": {"host": sandbox.url, "api_key_env": "SURVEYCTL_LOCAL_KEY", "protected": True}
        },
        "default_environment": "prod",
    }
    (project / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = run_cli("conformance", "--yes")
    assert result.exit_code == 1
    assert "name it with --env prod" in result.stderr
    assert not (project / ".surveyctl" / "conformance").exists()


def test_an_unknown_locale_is_refused_before_any_check_or_draft(project, run_cli):
    result = run_cli("conformance", "--locale", "xx_XX")
    assert result.exit_code == 1
    assert "Error: environment 'local' has no attribute catalogue for locale 'xx_XX'" in (
        result.stderr
    )
    assert result.stdout == ""  # no table of rows that "differ"
    assert not (project / ".surveyctl" / "conformance").exists()


# -- interrupted runs: a real process, a real signal -----------------------------------------


def _project(folder: Path, url: str) -> dict[str, str]:
    config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_C_KEY"}}}
    (folder / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return {**os.environ, "SURVEYCTL_C_KEY": KEY}


COMMAND = [sys.executable, "-m", "surveyctl", "--env", "local", "conformance", "--format", "json"]


def _start(folder: Path, environ: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        COMMAND, cwd=folder, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _wait_for_draft(folder: Path, process: subprocess.Popen) -> int:
    """The id of the draft once the run has journalled it."""
    journal = folder / ".surveyctl" / "conformance" / "local.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            survey_id = json.loads(journal.read_text(encoding="utf-8")).get("ps_survey_id")
        except (OSError, ValueError):
            survey_id = None
        if survey_id:
            return survey_id
        time.sleep(0.02)
    raise AssertionError(f"no draft journalled: {process.communicate()}")


def test_a_kill_9_leaves_one_draft_that_the_next_run_removes(tmp_path):
    with served(tmp_path / "s.db", latency_ms=40) as sandbox:
        environ = _project(tmp_path, sandbox.url)
        process = _start(tmp_path, environ)
        survey_id = _wait_for_draft(tmp_path, process)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()
        assert [s["ps_survey_id"] for s in drafts_left(sandbox.url)] == [survey_id]

        again = subprocess.run(
            COMMAND,
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
        report = json.loads(again.stdout)
        assert report["leftover_draft"] == {
            "ps_survey_id": survey_id,
            "removed": True,
            "how": "deleted",
        }
        assert drafts_left(sandbox.url) == []


@pytest.mark.parametrize(
    ("stop", "exit_code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
    # SIGTERM: a cancelled CI job or a stopped container ends the run with it.
    ids=["ctrl-c exits 130", "sigterm exits 143"],
)
def test_a_stop_signal_in_the_middle_removes_the_draft_and_exits_128_plus_its_number(
    tmp_path, stop, exit_code
):
    with served(tmp_path / "s.db", latency_ms=40) as sandbox:
        process = _start(tmp_path, _project(tmp_path, sandbox.url))
        _wait_for_draft(tmp_path, process)
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == exit_code
        assert b"no draft is left" in stderr
        assert drafts_left(sandbox.url) == []


def test_a_second_run_while_one_is_running_is_refused_and_leaves_the_first_runs_draft(tmp_path):
    with served(tmp_path / "s.db", latency_ms=80) as sandbox:
        environ = _project(tmp_path, sandbox.url)
        first = _start(tmp_path, environ)
        survey_id = _wait_for_draft(tmp_path, first)
        second = subprocess.run(
            COMMAND, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 1
        assert "another `surveyctl --env local conformance` of environment 'local' is running" in (
            second.stderr
        )
        assert "left on the account" not in second.stderr
        assert survey_id in [s["ps_survey_id"] for s in drafts_left(sandbox.url)]
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert json.loads(out)["leftover_draft"] is None
        assert drafts_left(sandbox.url) == []
