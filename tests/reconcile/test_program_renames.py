"""A SurveyProgram renamed or split after its surveys exist: the plan creates none of them a
second time, and the `state mv` it names moves exactly the members concerned. Real sandbox over
HTTP."""

from __future__ import annotations

import json
import re
import shlex

import yaml

from surveyctl.state import FileStateStore

from .conftest import program_manifest as program
from .conftest import survey_manifest


def _write(project, file: str, document: dict) -> None:
    folder = project / "manifests"
    folder.mkdir(exist_ok=True)
    (folder / file).write_text(yaml.safe_dump(document, sort_keys=False))


def _apply(run_cli) -> None:
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def _plan(run_cli) -> dict:
    result = run_cli("plan", "manifests", "--format", "json")
    return json.loads(result.stdout)


def _creates(plan: dict) -> list[str]:
    return [r["address"] for r in plan["resources"] if r["action"] == "create"]


def _moves(plan: dict) -> set[str]:
    return {
        command
        for note in plan["notes"]
        for command in re.findall(r"`(surveyctl state mv [^`]+)`", note["message"])
    }


def _survey_id(project, address: str) -> int:
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    return state.resources[address].ps_survey_id


def test_renaming_a_program_whose_titles_name_it_creates_no_survey_again(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US"], "{program} {country} {wave}"))
    _apply(run_cli)
    _write(project, "tracker.yaml", program("acme", ["en_US"], "{program} {country} {wave}"))
    plan = _plan(run_cli)
    assert _creates(plan) == []
    assert _moves(plan) == {"surveyctl state mv --program tracker acme"}


def test_renaming_a_program_does_not_create_its_closed_wave_again(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US"]))
    _apply(run_cli)
    closed = str(_survey_id(project, "Survey/tracker[en_US,w1]"))
    for status in ("live", "paused", "closed"):
        assert run_cli("status", closed, status, "--yes").exit_code == 0
    _write(project, "tracker.yaml", program("acme", ["en_US"]))
    plan = _plan(run_cli)
    assert _creates(plan) == []
    assert _moves(plan) == {"surveyctl state mv --program tracker acme"}


def test_splitting_a_market_into_its_own_program_names_a_state_mv_per_member(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US", "en_GB"]))
    _apply(run_cli)
    _write(project, "tracker.yaml", program("tracker", ["en_US"]))
    _write(project, "tracker-uk.yaml", program("tracker-uk", ["en_GB"]))
    plan = _plan(run_cli)
    # `--program tracker tracker-uk` would move the en_US members of `tracker` away too.
    assert _moves(plan) == {
        f"surveyctl state mv 'Survey/tracker[en_GB,{w}]' 'Survey/tracker-uk[en_GB,{w}]'"
        for w in ("w1", "w2")
    }
    for command in sorted(_moves(plan)):
        moved = run_cli(*shlex.split(command)[1:])
        assert moved.exit_code == 0, moved.stderr
    again = run_cli("plan", "manifests", "--detailed-exitcode")
    assert again.exit_code == 0, again.stdout + again.stderr


def test_splitting_a_program_does_not_create_its_closed_wave_again(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US", "en_GB"]))
    _apply(run_cli)
    closed = str(_survey_id(project, "Survey/tracker[en_GB,w1]"))
    for status in ("live", "paused", "closed"):
        assert run_cli("status", closed, status, "--yes").exit_code == 0
    _write(project, "tracker.yaml", program("tracker", ["en_US"]))
    _write(project, "tracker-uk.yaml", program("tracker-uk", ["en_GB"]))
    plan = _plan(run_cli)
    # The closed survey keeps its title: it is the member moved, not an earlier wave of it.
    assert _creates(plan) == []
    assert _moves(plan) == {
        f"surveyctl state mv 'Survey/tracker[en_GB,{w}]' 'Survey/tracker-uk[en_GB,{w}]'"
        for w in ("w1", "w2")
    }


def test_the_next_wave_in_a_new_program_is_created_beside_the_closed_wave_it_follows(
    project, run_cli
):
    # The titles do not name the wave: the closed wave of the removed program has the title of
    # the new one, and is an earlier wave of it (another wave), not that member moved.
    _write(project, "tracker.yaml", program("tracker", ["en_US"], "Tracker {country}", ("y1",)))
    _apply(run_cli)
    closed = str(_survey_id(project, "Survey/tracker[en_US,y1]"))
    for status in ("live", "paused", "closed"):
        assert run_cli("status", closed, status, "--yes").exit_code == 0
    _write(project, "tracker.yaml", program("acme", ["en_US"], "Tracker {country}", ("y2",)))
    plan = _plan(run_cli)
    assert _creates(plan) == ["Survey/acme[en_US,y2]"]
    assert [n["message"] for n in plan["notes"] if n["severity"] == "error"] == []


def test_renaming_a_program_and_adding_a_market_creates_only_the_new_markets_surveys(
    project, run_cli
):
    _write(project, "tracker.yaml", program("tracker", ["en_US"], "{program} {country} {wave}"))
    _apply(run_cli)
    renamed = program("acme", ["en_US", "en_GB"], "{program} {country} {wave}")
    _write(project, "tracker.yaml", renamed)
    plan = _plan(run_cli)
    assert _creates(plan) == ["Survey/acme[en_GB,w1]", "Survey/acme[en_GB,w2]"]
    assert _moves(plan) == {"surveyctl state mv --program tracker acme"}


def test_renaming_a_program_beside_a_new_survey_creates_only_the_new_survey(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US"], "{program} {country} {wave}"))
    _apply(run_cli)
    _write(project, "tracker.yaml", program("acme", ["en_US"], "{program} {country} {wave}"))
    # Its address comes before the renamed members': it is looked at first.
    _write(project, "aaa.yaml", survey_manifest("aaa"))
    plan = _plan(run_cli)
    assert _creates(plan) == ["Survey/aaa"]
    assert _moves(plan) == {"surveyctl state mv --program tracker acme"}


def test_a_target_plan_of_a_renamed_programs_member_creates_no_survey_again(project, run_cli):
    _write(project, "tracker.yaml", program("tracker", ["en_US"], "{program} {country} {wave}"))
    _apply(run_cli)
    _write(project, "tracker.yaml", program("acme", ["en_US"], "{program} {country} {wave}"))
    result = run_cli("plan", "manifests", "--format", "json", "--target", "acme[en_US,w1]")
    plan = json.loads(result.stdout)
    assert _creates(plan) == []
    assert _moves(plan) == {"surveyctl state mv --program tracker acme"}


def test_allow_duplicate_beside_a_renamed_programs_member_names_its_survey_as_listed(
    project, run_cli, api
):
    one_wave = {"title": "{program} {country} {wave}", "waves": ("w1",)}
    _write(project, "tracker.yaml", program("tracker", ["en_US"], **one_wave))
    _apply(run_cli)
    made = _survey_id(project, "Survey/tracker[en_US,w1]")
    created = api.get_survey(made)["project_creation_date"]
    _write(project, "tracker.yaml", program("acme", ["en_US"], **one_wave))
    plan = run_cli("plan", "manifests", "--allow-duplicate")
    assert (
        f"  warning: Survey/acme[en_US,w1]: exists on the service as survey {made} (draft, "
        f"created {created}, managed as Survey/tracker[en_US,w1]) but is not in state under this "
        "address; created once more, as --allow-duplicate says"
    ) in plan.stdout.splitlines(), plan.stdout


def test_a_renamed_programs_member_is_withheld_naming_the_program_it_was_a_member_of(
    project, run_cli
):
    one_wave = {"title": "{program} {country} {wave}", "waves": ("w1",)}
    _write(project, "tracker.yaml", program("tracker", ["en_US"], **one_wave))
    _apply(run_cli)
    made = _survey_id(project, "Survey/tracker[en_US,w1]")
    _write(project, "tracker.yaml", program("acme", ["en_US"], **one_wave))
    plan = run_cli("plan", "manifests")
    assert plan.exit_code == 1
    assert (
        f"  error: Survey/acme[en_US,w1]: exists on the service as survey {made} (the same market "
        "and wave of program tracker, which no manifest names any more), which the state manages "
        "as Survey/tracker[en_US,w1], no longer in the manifests; if the manifest was renamed, run "
        "`surveyctl state mv --program tracker acme` and plan again (it keeps its id and its "
        "fieldwork); --allow-duplicate creates another one beside it"
    ) in plan.stdout.splitlines(), plan.stdout
