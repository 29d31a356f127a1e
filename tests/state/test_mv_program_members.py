"""`surveyctl state mv` of SurveyProgram members: after a program is renamed, the moves its plan
asks for work (one member at a time, or `--program OLD NEW` for all), and a member's name is
checked part by part. The state tests run on the file and on PostgreSQL; the renames are
planned against the sandbox."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from surveyctl.state import GroupRecord, SurveyRecord

from ..reconcile.conftest import program_manifest, title_tag
from .conftest import open_staging

DE = "Survey/brand-tracker[de_DE,2026-09]"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "programs" / "brand-tracker.yaml"


def survey(locale: str, survey_id: int = 4711) -> SurveyRecord:
    return SurveyRecord(survey_id, {}, {"survey_title": "BT", "survey_localization": locale})


@pytest.fixture
def store(staging_project):
    """The staging state holding one member of program brand-tracker."""
    store = open_staging(staging_project)
    store.record(DE, survey("de_DE"))
    yield store
    store.close()


def test_mv_moves_a_member_to_the_same_member_of_the_renamed_program(run_cli, store, project):
    new = "Survey/acme-tracker[de_DE,2026-09]"
    result = run_cli("state", "mv", DE, new)
    assert result.exit_code == 0, result.stderr
    assert f"Moved {DE} to {new}" in result.stdout
    state = open_staging(project).load()
    assert state.resources[new].ps_survey_id == 4711 and DE not in state.resources


def test_mv_takes_a_bare_member_name_keeping_the_kind(run_cli, store, project):
    assert run_cli("state", "mv", DE, "acme-tracker[de_DE,2026-09]").exit_code == 0
    assert "Survey/acme-tracker[de_DE,2026-09]" in open_staging(project).load().resources


@pytest.mark.parametrize(
    ("new", "wrong"),
    [
        ("Acme-Tracker[de_DE,2026-09]", "its program name 'Acme-Tracker' must be lowercase"),
        ("acme-tracker[de-DE,2026-09]", "its market 'de-DE' must be a locale, language_COUNTRY"),
        ("acme-tracker[de_DE,2026 09]", "its wave '2026 09' must be 1 to 32 letters, digits"),
    ],
)
def test_mv_names_the_part_of_a_member_name_that_breaks_the_rule(
    run_cli, store, project, new, wrong
):
    result = run_cli("state", "mv", DE, new)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert f"the new name {new!r} is not a valid program member name: {wrong}" in result.stderr
    assert list(open_staging(project).load().resources) == [DE]


def test_mv_refuses_a_name_that_is_neither_plain_nor_a_member_with_both_rules(run_cli, store):
    result = run_cli("state", "mv", DE, "acme-tracker[de_DE]")
    assert result.exit_code == 1
    assert "is not a valid resource name: use lowercase letters" in result.stderr
    assert "or a program name followed by [market,wave]" in result.stderr


def test_mv_refuses_to_move_a_survey_to_a_member_of_another_market(run_cli, store, project):
    result = run_cli("state", "mv", DE, "Survey/acme-tracker[fr_FR,2026-09]")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "its survey was applied in locale de_DE" in result.stderr
    assert "move it to a member of market de_DE" in result.stderr
    assert list(open_staging(project).load().resources) == [DE]


def test_mv_takes_a_survey_of_the_members_market_into_a_program(run_cli, store, project):
    store.record("Survey/bt-fr", survey("fr_FR", 4712))
    assert run_cli("state", "mv", "bt-fr", "brand-tracker[fr_FR,2026-09]").exit_code == 0
    assert open_staging(project).load().survey("brand-tracker[fr_FR,2026-09]").ps_survey_id == 4712


@pytest.fixture
def program_store(store):
    """Program brand-tracker with two markets, a group, a create in flight, and a survey of
    another program whose name starts the same."""
    store.record("Survey/brand-tracker[de_DE,2026-10]", survey("de_DE", 4712))
    store.record("ExclusionGroup/brand-tracker[de_DE,2026-10]", GroupRecord("g", [4711, 4712]))
    store.journal_create("Survey/brand-tracker[en_GB,2026-10]", {"survey_title": "BT GB"})
    store.record("Survey/brand-tracker-2[de_DE,2026-09]", survey("de_DE", 4713))
    return store


def test_mv_program_moves_every_member_in_one_write(run_cli, program_store, project):
    before = open_staging(project).load().serial
    result = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert result.exit_code == 0, result.stderr
    assert "Moved 4 resource(s) of program brand-tracker to program acme-tracker" in (result.stdout)
    state = open_staging(project).load()
    assert state.serial == before + 1
    assert state.addresses() == [
        "ExclusionGroup/acme-tracker[de_DE,2026-10]",
        "Survey/acme-tracker[de_DE,2026-09]",
        "Survey/acme-tracker[de_DE,2026-10]",
        "Survey/acme-tracker[en_GB,2026-10]",
        "Survey/brand-tracker-2[de_DE,2026-09]",
    ]
    assert state.pending_create("Survey/acme-tracker[en_GB,2026-10]") is not None


def test_mv_program_leaves_a_group_whose_reference_has_the_programs_name(
    run_cli, program_store, project
):
    group = "ExclusionGroup/brand-tracker[de_DE,2026-11]"
    program_store.record(group, GroupRecord("acme-brand-tracker-de_DE-2026-11", [4712]))
    result = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert result.exit_code == 0, result.stderr
    assert f"Left {group} where it is: its reference has 'brand-tracker' in it" in result.stdout
    state = open_staging(project).load()
    assert group in state.resources
    assert "ExclusionGroup/acme-tracker[de_DE,2026-10]" in state.resources


def test_mv_program_moves_nothing_when_a_new_member_is_in_state_already(
    run_cli, program_store, project
):
    program_store.record("Survey/acme-tracker[de_DE,2026-10]", survey("de_DE", 4714))
    before = open_staging(project).load()
    result = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "Survey/acme-tracker[de_DE,2026-10] is already in the state" in result.stderr
    assert open_staging(project).load().to_json() == before.to_json()


def test_mv_program_of_a_program_without_members_in_state_is_refused(run_cli, store):
    result = run_cli("state", "mv", "--program", "brandtracker", "acme-tracker")
    assert result.exit_code == 1
    assert "no member of program 'brandtracker' in the state" in result.stderr


def test_mv_program_to_the_same_name_is_refused_and_moves_nothing(run_cli, program_store, project):
    before = open_staging(project).load()
    result = run_cli("state", "mv", "--program", "brand-tracker", "brand-tracker")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "program 'brand-tracker' already has that name" in result.stderr
    assert open_staging(project).load().to_json() == before.to_json()


def test_mv_program_whose_only_members_stay_writes_nothing(run_cli, store, project):
    # Only a group whose reference has the program's name in it: nothing moves, no new serial.
    group = "ExclusionGroup/brand-tracker[de_DE,2026-11]"
    store.forget(DE)
    store.record(group, GroupRecord("brand-tracker-de_DE-2026-11", [4711]))
    before = open_staging(project).load().serial
    result = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert result.exit_code == 0, result.stderr
    assert "Moved 0 resource(s) of program brand-tracker" in result.stdout
    assert f"Left {group} where it is" in result.stdout
    assert open_staging(project).load().serial == before


# Renaming a program for real: applied against the sandbox, renamed, moved, planned again.


def program(name: str, ref: str) -> dict:
    document = program_manifest(name, ["en_US", "en_GB"], waves=("2026-09", "2026-10"))
    # Reference and name without {program} (their defaults have it): the groups keep them
    # through the rename, so nothing but the state changes.
    document["spec"]["exclusion"] = {
        "waves": 1,
        "exclusion_period": 30,
        "ref": ref + "-{locale}-{wave}",
        "name": "Tracker {locale} {wave}",
    }
    return document


@pytest.fixture
def renamed(project, run_cli):
    """Program brand-tracker applied (4 surveys, 2 groups), then renamed acme-tracker."""
    ref = f"t-{title_tag()}-{project.name[-6:]}"
    folder = project / "manifests"
    folder.mkdir()
    (folder / "tracker.yaml").write_text(yaml.safe_dump(program("brand-tracker", ref)))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    (folder / "tracker.yaml").write_text(yaml.safe_dump(program("acme-tracker", ref)))


def test_the_moves_a_renamed_programs_plan_asks_for_leave_no_changes(renamed, run_cli):
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    moves = {
        command
        for note in plan["notes"]
        for command in re.findall(r"`(surveyctl state mv [^`]+)`", note["message"])
    }
    # One command for every member, surveys and groups alike.
    assert moves == {"surveyctl state mv --program brand-tracker acme-tracker"}
    for command in sorted(moves):
        moved = run_cli(*shlex.split(command)[1:])
        assert moved.exit_code == 0, f"{command}: {moved.stderr}"
    again = run_cli("plan", "manifests", "--detailed-exitcode")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert "No changes." in again.stdout


def test_one_mv_program_after_renaming_a_program_leaves_no_changes(renamed, run_cli):
    moved = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert moved.exit_code == 0, moved.stderr
    again = run_cli("plan", "manifests", "--detailed-exitcode")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert "No changes." in again.stdout


def test_renaming_the_example_program_recreates_no_survey_after_one_mv_program(project, run_cli):
    unique = project.name[-6:] + title_tag()
    text = EXAMPLE.read_text().replace('ref: "acme-', f'ref: "acme-{unique}-')
    text = text.replace('({wave})"', f'({{wave}}) {unique}"')  # titles of this test's own
    (project / "manifests").mkdir()
    manifest = project / "manifests" / "brand-tracker.yaml"
    manifest.write_text(text)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    manifest.write_text(text.replace("name: brand-tracker", "name: acme-tracker"))
    moved = run_cli("state", "mv", "--program", "brand-tracker", "acme-tracker")
    assert moved.exit_code == 0, moved.stderr
    plan = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    assert [n["message"] for n in plan["notes"] if n["severity"] == "error"] == []
    creates = [r["address"] for r in plan["resources"] if r["action"] == "create"]
    # The example's `ref` has {program} in it: new groups, the surveys themselves unchanged.
    assert creates and all(a.startswith("ExclusionGroup/acme-tracker[") for a in creates)
