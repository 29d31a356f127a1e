"""The README's commands work from the repository root as written, against the sandbox."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from click.testing import CliRunner

from surveyctl.cli.main import cli

REPOSITORY = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b")


def _loop_commands() -> list[list[str]]:
    """The commands of the README's block around `surveyctl plan --format markdown` that need
    neither a terminal (apply asks) nor a value of the reader's (SURVEY_ID and the like)."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "--format markdown" in b]
    commands = []
    for line in block.splitlines():
        command = line.split("  #")[0].strip()
        if not command.startswith("surveyctl ") or PLACEHOLDER.search(command):
            continue
        if shlex.split(command)[1] == "apply":
            continue
        commands.append(shlex.split(command)[1:])
    return commands


def test_the_readme_loop_runs_in_a_copy_of_the_repository_root(tmp_path, monkeypatch):
    for name in ("surveyctl.yaml", "README.md"):
        shutil.copy(REPOSITORY / name, tmp_path / name)
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    shutil.copytree(REPOSITORY / "schemas", tmp_path / "schemas")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    commands = _loop_commands()
    assert ["plan", "--format", "markdown"] in commands
    for args in commands:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        assert "environment sandbox" in result.stderr or args[0] in ("init", "show", "fmt")


# README commands that need what the quickstart does not make: a PostgreSQL state, a server
# that runs until Ctrl-C, a survey made elsewhere (old-tracker), a lock left behind.
NEEDS_MORE = ("state migrate", "state try-postgres", "state rm Survey/old-tracker")


def _after_quickstart_commands() -> list[tuple[dict[str, str], list[str]]]:
    """(variables, arguments) of the README's blocks of state commands and of conventions that
    need no value of the reader's, in the README's order."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    blocks = [
        b
        for b in re.findall(r"```sh\n(.*?)```", readme, re.S)
        if "surveyctl state list" in b or "surveyctl plan --adopt" in b or "NO_COLOR=1" in b
    ]
    commands = []
    for line in "\n".join(blocks).splitlines():
        words = shlex.split(line.split("  #")[0])
        variables = dict(w.split("=", 1) for w in words if re.fullmatch(r"[A-Z_]+=.*", w))
        args = words[len(variables) + 1 :]
        if words[len(variables) : len(variables) + 1] != ["surveyctl"]:
            continue
        if PLACEHOLDER.search(" ".join(args)) or " ".join(args).startswith(NEEDS_MORE):
            continue
        commands.append((variables, args))
    return commands


def test_the_readmes_state_and_conventions_commands_run_after_the_quickstart(tmp_path, monkeypatch):
    shutil.copy(REPOSITORY / "surveyctl.yaml", tmp_path / "surveyctl.yaml")
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    assert CliRunner().invoke(cli, ["apply", "examples/", "--auto-approve"]).exit_code == 0
    commands = _after_quickstart_commands()
    assert [a[:2] for _, a in commands][:2] == [["state", "list"], ["state", "show"]]
    assert ["attributes", "--format", "tsv"] in [a for _, a in commands]
    for variables, args in commands:
        result = CliRunner().invoke(cli, args, env=variables, catch_exceptions=False)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        if args[:2] == ["state", "mv"]:  # it follows a manifest's rename, which is not made here
            back = ["state", "mv", args[-1], args[-2]]
            assert CliRunner().invoke(cli, back, catch_exceptions=False).exit_code == 0


def _operations_line(start: str) -> list[str]:
    """The README's operations command that starts with `start`, without its comment."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    (line,) = [x for x in readme.splitlines() if x.startswith(start)]
    return shlex.split(line.split("  #")[0])[1:]


def test_the_readme_sets_the_status_of_a_transaction_it_can_move(tmp_path, monkeypatch):
    shutil.copy(REPOSITORY / "surveyctl.yaml", tmp_path / "surveyctl.yaml")
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)

    def run(args: list[str], **values: str):
        filled = [values.get(arg, arg) for arg in args]
        result = CliRunner().invoke(cli, filled, catch_exceptions=False)
        assert result.exit_code == 0, (filled, result.stdout, result.stderr)
        return result.stdout

    run(["apply", "--auto-approve", "--target", "Survey/brand-tracker-us"])
    survey_id = run(["state", "list"]).split("ps_survey_id=")[1].split()[0]
    run([*_operations_line("surveyctl status SURVEY_ID live"), "--yes"], SURVEY_ID=survey_id)
    run(_operations_line("surveyctl sandbox simulate SURVEY_ID --respondents 5 --hold"),
        SURVEY_ID=survey_id)  # fmt: skip
    listed = run([*_operations_line("surveyctl transactions list SURVEY_ID --status 16,19"),
                  "--format", "jsonl"], SURVEY_ID=survey_id)  # fmt: skip
    transaction_id = json.loads(listed.splitlines()[0])["Transaction ID"]
    set_status = _operations_line("surveyctl transactions set-status SURVEY_ID TRANSACTION_ID")
    done = run([*set_status, "--yes"], SURVEY_ID=survey_id, TRANSACTION_ID=transaction_id)
    assert f"Recorded: transaction {transaction_id} has status 21." in done
