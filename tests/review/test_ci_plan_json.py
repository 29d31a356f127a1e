"""`plan --format json` in a CI job: a program reads stdout as one JSON document, also when
the plan could not be made, so a bot can say what failed instead of failing to parse."""

from __future__ import annotations

import json

from .conftest import survey_manifest


def test_a_plan_that_cannot_be_made_still_writes_one_json_document(run_cli, manifests):
    manifests.write(survey_manifest("tracker", expected_ir="forty"))
    result = run_cli("plan", "manifests", "--format", "json", "--detailed-exitcode")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["failed"] is True
    assert document["environment"] == "local"
    assert "nothing was planned" in document["error"]


def test_the_json_of_a_failed_plan_lists_each_finding_at_its_file_and_line(run_cli, manifests):
    manifests.write(survey_manifest("tracker", expected_ir="forty"))
    result = run_cli("plan", "manifests", "--format", "json")
    (finding,) = json.loads(result.stdout)["diagnostics"]
    assert finding["severity"] == "error"
    assert "expected_ir" in finding["summary"]
    assert finding["file"].endswith("tracker.yaml") and finding["line"] > 0


def test_the_json_of_a_plan_that_was_made_says_it_did_not_fail(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["failed"] is False


def test_apply_of_a_saved_plan_names_manifests_relative_to_the_project_as_plan_does(
    run_cli, manifests, project
):
    """The merge job's report points at `manifests/x.yaml:1:1`, a path of the repository, not
    at the runner's checkout folder."""
    (project / "surveyctl.yaml").write_text(
        (project / "surveyctl.yaml").read_text(encoding="utf-8") + "manifests: [manifests/]\n",
        encoding="utf-8",
    )
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "--out", "change.plan").exit_code == 0
    result = run_cli("apply", "change.plan", "--format", "json")
    assert result.exit_code == 0, result.stderr
    (resource,) = json.loads(result.stdout)["plan"]["resources"]
    assert resource["location"] == "manifests/tracker.yaml:1:1"


def _documented_json(title: str) -> str:
    """The fenced example under `title` in docs/plan.md."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "plan.md").read_text(encoding="utf-8")
    section = text[text.index(title) :]
    return section[section.index("```json") : section.index("```\n", section.index("```json") + 7)]


def test_every_top_level_field_of_the_json_plan_is_documented(run_cli, manifests):
    """A bot is written against docs/plan.md: every field it may meet is there."""
    manifests.write(survey_manifest("tracker"))
    document = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    documented = _documented_json("## JSON format")
    missing = [key for key in document if f'"{key}"' not in documented]
    assert missing == []
