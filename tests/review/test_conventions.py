"""The conventions users of Terraform-like tools expect: options anywhere, colour rules,
closing summaries, progress on stderr, uncut tables, shell completion."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from surveyctl.cli.main import hoist_global_options

from .conftest import EMPLOYMENT, survey_manifest

REPOSITORY = Path(__file__).resolve().parents[2]
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


# -- global options after the sub-command ----------------------------------------------------


def test_env_is_accepted_after_the_sub_command(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--env", "nowhere")
    assert result.exit_code == 1
    assert "unknown environment 'nowhere'" in result.stderr
    assert run_cli("plan", "manifests", "--env", "local").exit_code == 0


def test_config_and_debug_are_accepted_after_nested_sub_commands(run_cli, project):
    (project / "other.yaml").write_text("manifests: [elsewhere/]\n")
    result = run_cli("state", "list", "--config", "other.yaml", "--debug")
    assert result.exit_code == 0, result.stderr
    assert "environment sandbox" in result.stderr  # other.yaml has no `local` environment


def test_options_after_a_double_dash_are_left_to_the_command():
    args = ["plan", "a", "--env=x", "--", "--debug"]
    assert hoist_global_options(args) == ["--env=x", "plan", "a", "--", "--debug"]


# -- values a script may leave empty ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("validate", ""),
        ("fmt", ""),
        ("plan", ""),
        ("apply", "", "--auto-approve"),
        ("render", ""),
        ("show", ""),
        ("plan", "manifests", "--out", ""),
        ("--config", "", "plan"),
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_current_folder(run_cli, manifests, args):
    manifests.write(survey_manifest("tracker"))
    result = run_cli(*args)
    assert result.exit_code == 2
    assert "an empty path names no file or folder" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [("plan", "-"), ("plan", "manifests", "--out", "-"), ("show", "-"), ("adjust", "-")],
)
def test_a_dash_is_refused_not_taken_for_a_file_named_dash(run_cli, manifests, project, args):
    manifests.write(survey_manifest("tracker"))
    result = run_cli(*args)
    assert result.exit_code == 2
    assert "'-' is not standard input or output here: name a file (./- for one called -)" in (
        result.stderr
    )
    assert not (project / "-").exists()


@pytest.mark.parametrize(
    "command",
    [
        ("status", "10001", "live"),
        ("transactions", "set-status", "10001", "T1", "--status", "21"),
        ("adjust", "ids.csv"),
        ("apply", "manifests"),
    ],
    ids=["status-move", "set-status", "adjust", "apply"],
)
def test_a_change_refused_for_want_of_yes_names_the_environment_first(
    run_cli, manifests, project, command
):
    manifests.write(survey_manifest("tracker"))
    (project / "ids.csv").write_text("survey_id,transaction_id\n10001,T1\n")
    result = run_cli(*command)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    refusal = next(i for i, line in enumerate(lines) if "a confirmation is needed" in line)
    assert any(line.startswith("surveyctl: environment local") for line in lines[:refusal])


@pytest.mark.parametrize("command", ["validate", "render", "plan", "apply"])
def test_offline_with_refresh_catalog_is_a_usage_error_not_one_ignored(run_cli, manifests, command):
    manifests.write(survey_manifest("tracker"))
    result = run_cli(command, "manifests", "--refresh-catalog", "--offline")
    assert result.exit_code == 2
    assert (
        "Error: --offline uses no attribute catalogue and --refresh-catalog fetches it again: "
        "give one"
    ) in result.stderr


def test_an_option_taken_for_the_file_of_out_is_a_usage_error_not_a_file(run_cli, project):
    result = run_cli("transactions", "list", "10001", "--out", "--status", "21")
    assert result.exit_code == 2
    assert (
        "'--status' is an option, not a file: give the file right after the option "
        "(./--status for a file of that name)"
    ) in result.stderr
    assert not (project / "--status").exists()


def test_a_misspelt_option_taken_for_the_file_of_out_is_a_usage_error_naming_the_option(
    run_cli, project
):
    result = run_cli("plan", "--out", "--fromat", "json")
    assert result.exit_code == 2
    assert (
        "'--fromat' starts with '-' and reads as an option, not a file (did you mean "
        "'--format'?): give the file right after the option, and use ./--fromat for a file "
        "whose name starts with -"
    ) in result.stderr
    assert "Saved the plan" not in result.output
    assert not (project / "--fromat").exists()


def test_a_file_whose_name_starts_with_a_dash_is_written_when_named_with_dot_slash(
    run_cli, manifests, project
):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--out", "./-plan.json")
    assert result.exit_code == 0, result.stderr
    assert (project / "-plan.json").is_file()


def test_fmt_of_an_empty_path_rewrites_no_manifest(run_cli, manifests, project):
    path = project / "manifests" / "tracker.yaml"
    path.write_text("kind: Survey\nname: tracker\nspec:\n    survey_title: T\n")
    run_cli("fmt", "")
    assert path.read_text() == "kind: Survey\nname: tracker\nspec:\n    survey_title: T\n"


# -- colour ----------------------------------------------------------------------------------


def _plan_on_a_terminal(project: Path, *extra: str, env: dict | None = None) -> str:
    """`surveyctl plan` with its stdout on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.run(
        [sys.executable, "-m", "surveyctl", "plan", "manifests", *extra],
        cwd=project,
        env={**os.environ, **(env or {})},
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.returncode == 0, process.stderr
    return b"".join(chunks).decode()


def test_a_plan_on_a_terminal_is_coloured(project, manifests):
    manifests.write(survey_manifest("tracker"))
    assert ANSI_COLOUR.search(_plan_on_a_terminal(project))


def test_no_color_and_NO_COLOR_turn_colour_off(project, manifests, monkeypatch):
    manifests.write(survey_manifest("tracker"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    plain = _plan_on_a_terminal(project, "--no-color")
    assert "+ Survey/tracker will be created" in plain
    assert not ANSI_COLOUR.search(plain)
    assert not ANSI_COLOUR.search(_plan_on_a_terminal(project, env={"NO_COLOR": "1"}))


# -- apply's closing line and progress -------------------------------------------------------


def test_apply_ends_with_resources_added_changed_and_destroyed(run_cli, manifests):
    manifests.write(survey_manifest("kept"))
    manifests.write(survey_manifest("dropped"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("kept", offer_price=3.0))
    manifests.write(survey_manifest("added"))
    (manifests.folder / "dropped.yaml").unlink()
    result = run_cli("apply", "manifests", "--auto-approve", "--destroy")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "Apply complete! Resources: 1 added, 1 changed, 1 destroyed."
    )


def test_apply_without_changes_says_zero_resources(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    run_cli("apply", "manifests", "--auto-approve")
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.stdout.splitlines()[-1] == (
        "Apply complete! Resources: 0 added, 0 changed, 0 destroyed."
    )


def test_plan_and_apply_report_each_resource_on_stderr_without_a_terminal(run_cli, manifests):
    manifests.write(survey_manifest("first"))
    manifests.write(survey_manifest("second"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    progress = [line for line in applied.stderr.splitlines() if line.startswith("apply ")]
    assert len(progress) == 2
    assert {re.sub(r" \(\d/2\).*", "", p) for p in progress} == {
        "apply Survey/first",
        "apply Survey/second",
    }
    assert all(re.search(r"\([12]/2\): create ok created ps_survey_id \d+$", p) for p in progress)
    planned = run_cli("plan", "manifests")
    reads = sorted(line for line in planned.stderr.splitlines() if line.startswith("read "))
    assert [re.sub(r" \(\d/2\)$", "", r) for r in reads] == [
        "read Survey/first",
        "read Survey/second",
    ]
    assert "read " not in planned.stdout and "apply " not in applied.stdout


# -- tables when piped -----------------------------------------------------------------------


def test_a_piped_table_is_not_cut_or_wrapped(run_cli, attribute):
    employment = attribute(EMPLOYMENT)
    result = run_cli("attributes", "--search", employment.desc)
    (row,) = [line for line in result.stdout.splitlines() if line.lstrip().startswith("215 ")]
    last = employment.answers[-1]
    assert f"{last.condition_code}={last.eng_text}" in row


def test_attributes_as_tsv_have_four_tab_separated_columns(run_cli, attribute):
    result = run_cli("attributes", "--search", attribute(EMPLOYMENT).desc, "--format", "tsv")
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["code", "name", "question", "answers"]
    assert all(len(row) == 4 for row in rows)
    assert [row[0] for row in rows[1:]] == ["215"]


def test_transactions_as_tsv_keep_every_key(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    api.set_survey_status(survey_id, 22)
    api.simulate_traffic(survey_id, {"respondents": 5, "seed": 1})
    result = run_cli("transactions", "list", str(survey_id), "--format", "tsv")
    header, *rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert "Transaction ID" in header and "Respondent Buyer CPI" in header
    assert len(rows) == 5 and all(len(row) == len(header) for row in rows)


# -- shell completion ------------------------------------------------------------------------


def _surveyctl(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "surveyctl"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_readme_documents_completion_for_bash_zsh_and_fish():
    readme = (REPOSITORY / "README.md").read_text()
    for shell in ("bash", "zsh", "fish"):
        documented = re.search(rf"_SURVEYCTL_COMPLETE={shell}_source surveyctl", readme)
        assert documented, shell
        script = _surveyctl({"_SURVEYCTL_COMPLETE": f"{shell}_source"})
        assert script.returncode == 0
        assert "_SURVEYCTL_COMPLETE" in script.stdout


def test_completion_offers_the_lazy_sub_commands():
    completed = _surveyctl(
        {"_SURVEYCTL_COMPLETE": "bash_complete", "COMP_WORDS": "surveyctl pl", "COMP_CWORD": "1"}
    )
    assert "plain,plan" in completed.stdout.splitlines()
