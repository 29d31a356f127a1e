"""The manifests' warnings in a plan and an apply, over real HTTP: CI runs `plan`, not
`validate`, so what `validate` warns of is shown there too, at its file:line, once, and a
warning changes no exit code."""

from __future__ import annotations

import json

from .conftest import survey_manifest

NO_TID = "https://survey.example.com/s"


def _without_transaction_id(manifests) -> None:
    manifests.write(survey_manifest("alpha", live_url=NO_TID))


def _tid_warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if "transaction_id" in line and "warning" in line]


def test_a_plan_shows_the_manifests_warning_with_its_file_and_line(project, manifests, run_cli):
    _without_transaction_id(manifests)
    validated = run_cli("validate", "manifests")
    where = validated.stdout.split(": warning:")[0].split()[-1]  # manifests/alpha.yaml:L:C
    plan = run_cli("plan", "manifests")
    warnings = _tid_warnings(plan.stdout)
    assert len(warnings) == 1
    assert warnings[0].startswith("  warning: Survey/alpha: ")
    assert warnings[0].endswith(f"({where})")


def test_a_json_plan_lists_the_manifests_warning_as_a_note(project, manifests, run_cli):
    _without_transaction_id(manifests)
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    notes = [n for n in plan["notes"] if "transaction_id" in n["message"]]
    assert [(n["severity"], n["address"]) for n in notes] == [("warning", "Survey/alpha")]
    assert notes[0]["location"].startswith("manifests/alpha.yaml:")


def test_a_markdown_plan_lists_the_manifests_warning(project, manifests, run_cli):
    _without_transaction_id(manifests)
    plan = run_cli("plan", "manifests", "--format", "markdown")
    warnings = [line for line in plan.stdout.splitlines() if "carries no" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("- warning: `Survey/alpha`: ")


def test_a_warning_alone_is_no_change_for_the_detailed_exit_code(project, manifests, run_cli):
    _without_transaction_id(manifests)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert len(_tid_warnings(plan.stdout)) == 1


def test_an_apply_shows_the_manifests_warning_once(project, manifests, run_cli):
    _without_transaction_id(manifests)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert len(_tid_warnings(applied.stdout + applied.stderr)) == 1


def test_a_targeted_plan_leaves_out_the_warnings_of_resources_outside_it(
    project, manifests, run_cli
):
    _without_transaction_id(manifests)
    manifests.write(survey_manifest("bravo"))
    plan = run_cli("plan", "manifests", "--target", "Survey/bravo")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert _tid_warnings(plan.stdout) == []
