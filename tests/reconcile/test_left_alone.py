"""Surveys removed from the manifests of a whole-project plan, over real HTTP: one warning
names them all, and the JSON plan still lists each one."""

from __future__ import annotations

import json

from .conftest import survey_manifest

NAMES = ("alpha", "bravo", "charlie", "delta")


def _three_removed(manifests, run_cli) -> None:
    for name in NAMES:
        manifests.write(survey_manifest(name))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    for name in NAMES[1:]:
        manifests.remove(name)


def test_a_plan_warns_once_of_the_surveys_removed_from_the_manifests(project, manifests, run_cli):
    _three_removed(manifests, run_cli)
    plan = run_cli("plan", "manifests")
    warnings = [line for line in plan.stdout.splitlines() if "no longer in the manifests" in line]
    assert warnings == [
        "  warning: 3 managed resources are no longer in the manifests (3 surveys: bravo, "
        "charlie, delta); each is left alone (plan with --destroy to delete them, or "
        "`surveyctl state rm ADDRESS` to stop managing one)"
    ]


def test_a_json_plan_lists_each_survey_removed_from_the_manifests(project, manifests, run_cli):
    _three_removed(manifests, run_cli)
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    removed = ["Survey/bravo", "Survey/charlie", "Survey/delta"]
    assert plan["kept"] == removed
    assert [n["address"] for n in plan["notes"] if n["severity"] == "warning"] == removed
