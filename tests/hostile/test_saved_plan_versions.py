"""A saved plan is applied by the surveyctl that made it: another one (CI pinned to one release,
a laptop on another) plans otherwise, so it is refused in one sentence naming both, before
anything is planned or sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl import __version__
from surveyctl.build import build
from surveyctl.reconcile.plan import FieldChange, Note, Plan, ResourceChange, Spend
from surveyctl.reconcile.planfile import PlanFileError, read_plan, save_plan
from surveyctl.state import FileStateStore, fingerprint

from .conftest import survey_manifest

PLAN = "change.plan"


def _saved(run_cli, manifests, project: Path, edit) -> None:
    """A plan of one new survey, saved, then edited as another surveyctl would have written it
    (its checksum made again to fit)."""
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--out", PLAN)
    assert result.exit_code == 0, result.stdout + result.stderr
    path = project / PLAN
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document["plan"])
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document), encoding="utf-8")


def _nothing_recorded(project: Path) -> bool:
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    state = store.load()
    return not state.resources and not state.journal


def test_a_plan_made_by_another_surveyctl_is_refused_naming_both(project, manifests, run_cli):
    _saved(run_cli, manifests, project, lambda plan: plan["made_by"].update(build="fedcba987654"))

    result = run_cli("apply", PLAN, "--auto-approve")

    assert result.exit_code == 1
    assert f"made by surveyctl {__version__} (build fedcba987654)" in result.stderr
    assert f"this is surveyctl {__version__} (build {build()})" in result.stderr
    assert "make a new plan with this one" in result.stderr
    assert _nothing_recorded(project)


def test_a_plan_of_a_surveyctl_that_did_not_say_which_it_was_is_refused(
    project, manifests, run_cli
):
    _saved(run_cli, manifests, project, lambda plan: plan.pop("made_by"))

    result = run_cli("apply", PLAN, "--auto-approve")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {PLAN}: the plan was made by an earlier surveyctl, which did not record which "
        f"one, and this is surveyctl {__version__} (build {build()}): a plan is applied by the "
        "surveyctl that made it, as another one plans otherwise; apply it with that one, or make "
        "a new plan with this one"
    )
    assert _nothing_recorded(project)


def test_a_plan_field_this_surveyctl_does_not_know_is_named(project, manifests, run_cli):
    _saved(run_cli, manifests, project, lambda plan: plan.update(approvals=["ann"]))

    result = run_cli("apply", PLAN, "--auto-approve")

    assert result.exit_code == 1
    assert "not a valid plan at top level: 'approvals' is not a field of a plan" in result.stderr
    assert "__init__" not in result.stderr
    assert _nothing_recorded(project)


def test_a_resource_field_this_surveyctl_does_not_know_is_named(project, manifests, run_cli):
    _saved(run_cli, manifests, project, lambda plan: plan["resources"][0].update(cost=3))

    result = run_cli("show", PLAN)

    assert result.exit_code == 1
    assert "not a valid plan at resources.0: 'cost' is not a field of a plan" in result.stderr
    assert "__init__" not in result.stderr


def _every_part() -> Plan:
    """A plan with one of each part: a resource with its spend, a change and a drift, a note."""
    plan = Plan("local", "lineage", 3)
    plan.resources.append(
        ResourceChange(
            "Survey",
            "tracker",
            "update",
            remote_id=10001,
            body={"survey_title": "Tracker"},
            changes=[FieldChange("survey_title", "Old", "Tracker")],
            drift=[FieldChange("offer_price", 2.5, 3.0)],
            spend=Spend(250.0, 250.0),
        )
    )
    plan.notes.append(Note("warning", "Survey/tracker", "drifted"))
    return plan


@pytest.mark.parametrize(
    ("where", "part"),
    [
        ("resources.0.spend", lambda plan: plan["resources"][0]["spend"]),
        ("resources.0.changes.0", lambda plan: plan["resources"][0]["changes"][0]),
        ("resources.0.drift.0", lambda plan: plan["resources"][0]["drift"][0]),
        ("notes.0", lambda plan: plan["notes"][0]),
    ],
)
def test_a_field_this_surveyctl_does_not_know_is_named_wherever_it_is(tmp_path, where, part):
    path = tmp_path / PLAN
    save_plan(_every_part(), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    part(document["plan"])["later"] = 1
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document), encoding="utf-8")

    with pytest.raises(PlanFileError) as refused:
        read_plan(path)

    assert str(refused.value) == (
        f"{path}: not a valid plan at {where}: 'later' is not a field of a plan this surveyctl "
        "makes; make a new plan"
    )


def test_a_plan_with_one_of_each_part_is_read_back_as_saved(tmp_path):
    save_plan(_every_part(), tmp_path / PLAN)

    assert read_plan(tmp_path / PLAN).plan == _every_part()


def test_a_plan_without_notes_is_read_with_none(tmp_path):
    path = tmp_path / PLAN
    save_plan(_every_part(), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["plan"]["notes"]
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document), encoding="utf-8")

    assert read_plan(path).plan.notes == []
