"""The CI workflows of examples/ci are valid YAML and every surveyctl command in them parses
with the options this surveyctl has, so they run as written."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
import pytest
import yaml

from surveyctl.cli.main import cli, hoist_global_options

WORKFLOWS = sorted((Path(__file__).parents[2] / "examples" / "ci").glob("*.yml"))


def surveyctl_steps(document: dict) -> list[tuple[dict, list[str]]]:
    """(step, arguments) of every `surveyctl` command a workflow runs."""
    found = []
    for job in document["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                line = line.split(">")[0].strip()
                if line.startswith("surveyctl "):
                    found.append((step, shlex.split(line)[1:]))
    return found


def _commands(workflow: Path) -> list[list[str]]:
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    return [args for _, args in surveyctl_steps(document)]


def _unparsed(context: click.Context) -> list[str]:
    """The tokens a group's context left for its sub-command: click 8 keeps the first of them
    apart (its public name for them is deprecated), click 9 keeps them all in `args`."""
    return [*getattr(context, "_protected_args", ()), *context.args]


def test_both_workflows_are_there():
    assert [w.name for w in WORKFLOWS] == ["apply-on-main.yml", "plan-on-pull-request.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_every_surveyctl_command_of_a_workflow_parses(workflow):
    commands = _commands(workflow)
    assert commands, f"{workflow.name} runs no surveyctl command"
    for args in commands:
        root = cli.make_context("surveyctl", hoist_global_options(args))
        name, command, rest = cli.resolve_command(root, _unparsed(root))
        while isinstance(command, click.Group):
            group_context = command.make_context(name, rest, parent=root)
            name, command, rest = command.resolve_command(group_context, _unparsed(group_context))
        command.make_context(name, rest, parent=root)  # raises on an unknown option


def test_the_plan_workflow_updates_one_comment_and_installs_from_the_repository():
    text = (WORKFLOWS[1]).read_text(encoding="utf-8")
    assert "<!-- surveyctl-plan -->" in text and "--method PATCH" in text
    assert "pip install ./.surveyctl-src" in text and "pip install surveyctl" not in text


def test_the_plan_workflow_edits_only_a_plan_comment_it_wrote_itself():
    # A reviewer's comment that quotes the marker must not be overwritten by the next plan.
    text = (WORKFLOWS[1]).read_text(encoding="utf-8")
    found = text[text.index("gh api --paginate") :]
    query = found[: found.index("// empty")]
    assert 'select(.user.login == "github-actions[bot]")' in query
    assert 'contains("<!-- surveyctl-plan -->")' in query


def test_the_apply_workflow_keeps_state_in_postgresql_not_in_git():
    text = (WORKFLOWS[0]).read_text(encoding="utf-8")
    assert "SURVEYCTL_STATE_DSN" in text and "git commit" not in text


def test_the_plan_workflow_shows_the_whole_plan_in_the_log_when_the_comment_is_cut():
    """A comment over GitHub's limit leaves resources out and sends the reviewer to the job's
    log for the whole plan, so the log must hold it: the plan is saved with --out, and
    `surveyctl show` of that file (no request) writes it as text."""
    document = yaml.safe_load(WORKFLOWS[1].read_text(encoding="utf-8"))
    commands = [args for _, args in surveyctl_steps(document)]
    plan = next(args for args in commands if "plan" in args)
    saved = plan[plan.index("--out") + 1]
    assert ["show", saved] in [args[-2:] for args in commands if "show" in args]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_a_workflow_runs_on_a_change_to_any_folder_of_the_example_manifests(workflow):
    config = yaml.safe_load((WORKFLOWS[0].parents[1] / "surveyctl.yaml").read_text())
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    triggers = document[True]  # YAML 1.1 reads the key `on` as true
    (event,) = triggers.values()
    watched = set(event["paths"])
    missing = [f"{folder.rstrip('/')}/**" for folder in config["manifests"]]
    assert [path for path in missing if path not in watched] == []
    assert "surveyctl.yaml" in watched
