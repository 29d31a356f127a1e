"""An exclusion group's change names its surveys: a reviewer cannot judge `[10001, 10016]`."""

from __future__ import annotations

import json

import pytest

from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.planfile import load_plan
from surveyctl.state import fingerprint

from .conftest import survey_manifest


def _group(ref: str, surveys: list[str]) -> dict:
    return {
        "kind": "ExclusionGroup",
        "name": "trackers",
        "spec": {
            "buyer_surveygroup_ref": ref,
            "name": "Trackers",
            "exclusion_period": 30,
            "surveys": surveys,
        },
    }


def _ids(run_cli) -> dict[str, int]:
    shown = run_cli("state", "show")
    assert shown.exit_code == 0, shown.stderr
    return {
        address.split("/", 1)[1]: record["ps_survey_id"]
        for address, record in json.loads(shown.stdout)["resources"].items()
        if address.startswith("Survey/")
    }


@pytest.fixture
def regrouped(run_cli, manifests, unique):
    """A group of `first` and `second`, applied, whose manifest now names `first` and `third`."""
    for name in ("first", "second", "third"):
        manifests.write(survey_manifest(name))
    manifests.write(_group(f"trackers-{unique}", ["first", "second"]))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stderr
    manifests.write(_group(f"trackers-{unique}", ["first", "third"]))
    return _ids(run_cli)


def test_a_group_change_shows_each_survey_by_name_and_id(run_cli, regrouped):
    ids = regrouped
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0, result.stderr
    before = sorted([("first", ids["first"]), ("second", ids["second"])], key=lambda p: p[1])
    after = sorted([("first", ids["first"]), ("third", ids["third"])], key=lambda p: p[1])
    shown = ", ".join(f"{name} ({number})" for name, number in before) + " -> "
    shown += ", ".join(f"{name} ({number})" for name, number in after)
    assert f"~ surveys_in_group: {shown}" in result.stdout


def test_the_json_plan_keeps_ids_in_the_change_and_names_in_its_display(run_cli, regrouped):
    ids = regrouped
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    group = next(r for r in plan["resources"] if r["address"] == "ExclusionGroup/trackers")
    change = next(c for c in group["changes"] if c["path"] == "surveys_in_group")
    assert sorted(change["new"]) == sorted([ids["first"], ids["third"]])
    assert f"third ({ids['third']})" in change["display"]["new"]
    assert plan["survey_names"][str(ids["second"])] == "second"


def test_a_saved_plan_shows_the_names_without_reading_state(run_cli, regrouped, project):
    ids = regrouped
    assert run_cli("plan", "manifests", "--out", "group.plan").exit_code == 0
    (project / ".surveyctl" / "state" / "sandbox.json").unlink(missing_ok=True)
    shown = run_cli("show", "group.plan")
    assert f"second ({ids['second']})" in shown.stdout


def test_a_long_group_change_lists_the_surveys_added_and_removed(run_cli, manifests, unique):
    names = [f"tracker-{n:02d}" for n in range(12)]
    for name in names:
        manifests.write(survey_manifest(name))
    manifests.write(_group(f"trackers-{unique}", names[:11]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(_group(f"trackers-{unique}", names[1:]))
    ids = _ids(run_cli)
    result = run_cli("plan", "manifests")
    assert (
        f"~ surveys_in_group: 11 surveys -> 11 surveys (added: tracker-11 ({ids['tracker-11']}); "
        f"removed: tracker-00 ({ids['tracker-00']}))"
    ) in result.stdout


def test_a_saved_plan_whose_survey_names_are_not_names_is_refused(run_cli, regrouped, project):
    assert run_cli("plan", "manifests", "--out", "group.plan").exit_code == 0
    saved = project / "group.plan"
    document = json.loads(saved.read_text())
    document["plan"]["survey_names"] = {"10001": "`rm -rf`\n```"}  # checksum made again
    document["checksum"] = fingerprint(document["plan"])
    saved.write_text(json.dumps(document))
    with pytest.raises(SurveyctlError, match="survey_names"):
        load_plan(saved)
