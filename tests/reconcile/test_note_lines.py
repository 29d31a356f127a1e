"""A plan's notes about a manifest field point at that field's line, as `validate` does, over
real HTTP: a reviewer goes to the quotas, not to the top of the file."""

from __future__ import annotations

import json

from .conftest import survey_manifest


def _quotas_line(path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, 1) if line.strip() == "quotas:")
    return f"manifests/flexible.yaml:{number}:3"


def _flexibility(plan: dict) -> list[dict]:
    return [n for n in plan["notes"] if n["message"].startswith("quota flexibility")]


def test_the_quota_flexibility_note_of_a_create_points_at_the_quotas(project, manifests, run_cli):
    path = manifests.write(survey_manifest("flexible", completes_required=150))
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    assert [n["location"] for n in _flexibility(plan)] == [_quotas_line(path)]


def test_the_quota_flexibility_note_of_an_update_points_at_the_quotas(project, manifests, run_cli):
    manifests.write(survey_manifest("flexible"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    path = manifests.write(survey_manifest("flexible", completes_required=150))
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    assert [n["location"] for n in _flexibility(plan)] == [_quotas_line(path)]
