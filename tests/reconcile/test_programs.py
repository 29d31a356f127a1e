"""SurveyPrograms planned and applied over real HTTP against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from surveyctl.state import FileStateStore, fingerprint

from ..overlapping import OverlappingReads
from .conftest import group_manifest, survey_manifest, title_tag

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "programs" / "brand-tracker.yaml"
MARKETS = ["en_US", "en_GB"]


def program(ref: str | None, waves: list[str], price: float = 2.5) -> dict:
    """A program of MARKETS x `waves`; with `ref`, each wave excludes the one before it."""
    spec: dict = {
        "template": {
            # The tag: tests share the sandbox account, and titles tell surveys apart there.
            "survey_title": "Tracker {country} {wave} " + title_tag(),
            "survey_category_code": 231,
            "completes_required": 200,
            "expected_ir": 50,
            "expected_loi": 10,
            "offer_price": price,
            "field_time": 10,
            "live_url": "https://survey.example.com/s?m={locale}&w={wave}&tid=[%%transaction_id%%]",
            "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
        },
        "markets": {"en_US": {"spec": {"completes_required": 300}}, "en_GB": None},
        "waves": waves,
    }
    if ref is not None:
        spec["exclusion"] = {"waves": 1, "exclusion_period": 30, "ref": ref + "-{locale}-{wave}"}
    return {"kind": "SurveyProgram", "name": "tracker", "spec": spec}


def loose_program(waves: list[str]) -> dict:
    """`program(None, waves)` with lifecycle.prevent_destroy false: destroy may delete its
    members."""
    loose = program(None, waves)
    loose["lifecycle"] = {"prevent_destroy": False}
    return loose


@pytest.fixture
def write_program(project):
    def write(document: dict) -> None:
        folder = project / "manifests"
        folder.mkdir(exist_ok=True)
        (folder / "tracker.yaml").write_text(yaml.safe_dump(document, sort_keys=False))

    return write


def _state(project) -> dict:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json").load().resources


def _apply(run_cli) -> None:
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.output + result.stderr


def test_the_example_program_applies_every_market_and_wave(run_cli, project, unique):
    text = EXAMPLE.read_text().replace('ref: "acme-', f'ref: "acme-{unique}-')
    text = text.replace('({wave})"', f'({{wave}}) {unique}"')  # titles of this test's own
    (project / "manifests").mkdir()
    (project / "manifests" / "brand-tracker.yaml").write_text(text)
    document = yaml.safe_load(text)
    markets, waves = len(document["spec"]["markets"]), len(document["spec"]["waves"])
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.output + result.stderr
    surveys = [a for a in _state(project) if a.startswith("Survey/brand-tracker[")]
    assert len(surveys) == markets * waves
    assert "Survey/brand-tracker[de_DE,2026-10]" in surveys
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0, replanned.stdout


def test_adding_a_wave_plans_one_create_per_market_shown_as_one_group(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2", "w3"]))
    result = run_cli("plan", "manifests")
    assert f"Plan: {len(MARKETS)} to add, 0 to change, 0 to destroy." in result.stdout
    # 300 x 2.5 (en_US) + 200 x 2.5 (en_GB)
    assert (
        "+ 2 surveys of program tracker will be created: wave w3 in markets en_GB, en_US "
        "(+$1,250.00)\n"
    ) in result.stdout
    assert result.stdout.count("+ expected_loi: 10\n") == 1  # the template's, shared
    assert "    + Survey/tracker[en_US,w3] (+$750.00)\n        + completes_required: 300\n" in (
        result.stdout
    )


def test_a_template_change_beside_a_markets_own_change_shows_the_shared_field_once(
    run_cli, write_program
):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    changed = program(None, ["w1", "w2"])
    changed["spec"]["template"]["expected_loi"] = 12
    changed["spec"]["markets"]["en_GB"] = {"spec": {"offer_price": 3}}
    write_program(changed)
    result = run_cli("plan", "manifests")
    # the spend of the 4 surveys: en_GB's 2 waves x 200 completes x 0.5
    assert "~ 4 surveys of program tracker: expected_loi 10 -> 12 (+$200.00)\n" in result.stdout
    assert result.stdout.count("expected_loi: 10 -> 12") == 1
    assert "    ~ 2 of them (en_GB): offer_price 2.5 -> 3\n" in result.stdout


def test_a_template_price_change_updates_every_member_as_one_grouped_change(run_cli, write_program):
    write_program(program(None, ["w1", "w2", "w3"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2", "w3"], price=2.75))
    result = run_cli("plan", "manifests")
    assert "Plan: 0 to add, 6 to change, 0 to destroy." in result.stdout
    # 3 x 300 x 0.25 + 3 x 200 x 0.25
    assert "~ 6 surveys of program tracker: offer_price 2.5 -> 2.75 (+$375.00)" in result.stdout
    assert result.stdout.count("offer_price: 2.5 -> 2.75") == 1
    assert "Survey/tracker[en_GB,w1] will be updated" not in result.stdout


def test_the_json_plan_lists_every_member_of_a_grouped_change(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2"], price=3))
    result = run_cli("plan", "manifests", "--format", "json")
    (group,) = json.loads(result.stdout)["program_groups"]
    assert group["count"] == 4
    assert sorted(group["members"]) == [
        f"Survey/tracker[{market},{wave}]" for market in sorted(MARKETS) for wave in ("w1", "w2")
    ]


def test_the_markdown_plan_collapses_the_member_list(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2"], price=3))
    result = run_cli("plan", "manifests", "--format", "markdown")
    assert "| program `tracker` (4 surveys) | update | offer_price | +$500.00 |" in result.stdout
    assert "<details><summary>4 members</summary>" in result.stdout


def test_a_grouped_change_names_answers_in_each_markets_own_language(run_cli, write_program):
    document = program(None, ["w1", "w2"])
    document["spec"]["markets"] = {"en_US": None, "de_DE": None}
    write_program(document)
    _apply(run_cli)
    document["spec"]["template"]["qualifications"][0]["condition_codes"] = ["112"]
    write_program(document)
    result = run_cli("plan", "manifests")
    english = "qualifications[Gender].answers Male (111), Female (112) -> Female (112)"
    german = "qualifications[Gender].answers Männlich (111), Weiblich (112) -> Weiblich (112)"
    assert f"~ 2 surveys of program tracker: {english}" in result.stdout
    assert f"~ 2 surveys of program tracker: {german}" in result.stdout


def test_a_change_of_one_market_is_shown_per_member(run_cli, write_program):
    write_program(program(None, ["w1"]))
    _apply(run_cli)
    changed = program(None, ["w1"])
    changed["spec"]["markets"]["en_GB"] = {"spec": {"offer_price": 3}}
    changed["spec"]["markets"]["en_US"]["spec"]["offer_price"] = 4
    write_program(changed)
    result = run_cli("plan", "manifests")
    assert "~ Survey/tracker[en_GB,w1]" in result.stdout
    assert "~ Survey/tracker[en_US,w1]" in result.stdout
    assert "surveys of program" not in result.stdout


def test_removing_a_wave_destroys_nothing_and_shows_it_retired(run_cli, write_program, project):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w2"]))
    result = run_cli("plan", "manifests", "--destroy", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert (
        "  note: 2 surveys of program tracker, wave w1 in markets en_GB, en_US: retired from "
        "program tracker: kept, never destroyed"
    ) in result.stdout.splitlines()
    assert "2 retired program members are kept" in result.stdout
    assert "Survey/tracker[en_GB,w1]" in _state(project)


def test_a_retired_wave_still_live_is_said_to_be_taking_completes(run_cli, write_program, project):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    survey_id = _state(project)["Survey/tracker[en_GB,w1]"].ps_survey_id
    assert run_cli("status", str(survey_id), "live", "--yes").exit_code == 0
    write_program(program(None, ["w2"]))
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert (
        "  note: Survey/tracker[en_GB,w1]: retired from program tracker: kept, never destroyed, "
        f"and survey {survey_id} is still live, taking completes; "
        f"`surveyctl status {survey_id} paused` stops it"
    ) in result.stdout.splitlines()


def test_removing_a_market_retires_its_members_with_a_note(run_cli, write_program, project):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    us_only = program(None, ["w1", "w2"])
    us_only["spec"]["markets"].pop("en_GB")
    write_program(us_only)
    result = run_cli("plan", "manifests", "--destroy", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert (
        "  note: 2 surveys of program tracker, waves w1, w2 in market en_GB: retired from "
        "program tracker: kept, never destroyed"
    ) in result.stdout.splitlines()
    assert "no longer makes it" not in result.stdout
    assert "Survey/tracker[en_GB,w2]" in _state(project)


def test_a_retired_wave_keeps_its_spend_in_the_plan(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w2"]))
    document = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    planned = {r["address"]: r for r in document["resources"]}
    # en_US: 300 completes at $2.50; en_GB: 200. The retired w1 still spends what it spends.
    assert planned["Survey/tracker[en_US,w1]"]["spend"] == {"before": 750.0, "after": 750.0}
    assert planned["Survey/tracker[en_GB,w1]"]["spend"] == {"before": 500.0, "after": 500.0}
    assert document["spend_total"] == {"before": 2500.0, "after": 2500.0}


def test_a_program_without_prevent_destroy_lets_destroy_delete_a_removed_wave(
    run_cli, write_program
):
    loose = loose_program(["w1", "w2"])
    write_program(loose)
    _apply(run_cli)
    loose["spec"]["waves"] = ["w2"]
    write_program(loose)
    result = run_cli("plan", "manifests", "--destroy")
    assert "Plan: 0 to add, 0 to change, 2 to destroy." in result.stdout


def test_letting_a_program_destroy_in_the_edit_that_drops_a_wave_lets_destroy_delete_it(
    run_cli, write_program
):
    write_program(program(None, ["w1", "w2"]))  # applied keeping its retired members
    _apply(run_cli)
    write_program(loose_program(["w2"]))
    result = run_cli("plan", "manifests", "--destroy")
    assert "Plan: 0 to add, 0 to change, 2 to destroy." in result.stdout
    assert "prevent_destroy forbids" not in result.stdout + result.stderr


@pytest.mark.parametrize("saved", [False, True], ids=["manifests", "saved plan"])
def test_letting_a_program_destroy_in_the_edit_that_drops_a_wave_lets_apply_delete_it(
    run_cli, write_program, project, saved
):
    write_program(program(None, ["w1", "w2"]))  # applied keeping its retired members
    _apply(run_cli)
    write_program(loose_program(["w2"]))
    if saved:
        assert run_cli("plan", "manifests", "--destroy", "--out", "p.plan").exit_code == 0
        result = run_cli("apply", "p.plan", "--destroy", "--auto-approve")
    else:
        result = run_cli("apply", "manifests", "--destroy", "--auto-approve")
    assert result.exit_code == 0, result.output + result.stderr
    assert "0 added, 0 changed, 2 destroyed" in result.stdout
    assert sorted(_state(project)) == ["Survey/tracker[en_GB,w2]", "Survey/tracker[en_US,w2]"]


def test_a_removed_survey_recorded_protected_is_not_released_by_a_program(
    run_cli, write_program, project
):
    write_program(program(None, ["w1"]))
    other = survey_manifest("other")
    other["lifecycle"] = {"prevent_destroy": True}
    (project / "manifests" / "other.yaml").write_text(yaml.safe_dump(other))
    _apply(run_cli)
    write_program(loose_program(["w1"]))
    (project / "manifests" / "other.yaml").unlink()
    result = run_cli("apply", "manifests", "--destroy", "--auto-approve")
    assert result.exit_code == 1
    assert (
        "  error: Survey/other: lifecycle.prevent_destroy forbids deleting it; restore its "
        "manifest or `surveyctl state rm` it"
    ) in result.stdout.splitlines()
    assert "Survey/other" in _state(project)


def test_a_removed_program_keeps_its_members_recorded_prevent_destroy(
    run_cli, write_program, project
):
    write_program(program(None, ["w1"]))
    _apply(run_cli)
    other = project / "manifests" / "tracker.yaml"
    other.write_text(yaml.safe_dump(survey_manifest("other")))  # the program gone, all of it
    result = run_cli("plan", "manifests", "--destroy")
    assert "Survey/tracker[en_GB,w1]: lifecycle.prevent_destroy forbids deleting it" in (
        result.stdout + result.stderr
    )


def test_the_exclusion_between_waves_is_on_the_service(
    run_cli, write_program, project, api, unique
):
    write_program(program(f"t-{unique}", ["w1", "w2", "w3"]))
    _apply(run_cli)
    state = _state(project)
    ids = {wave: state[f"Survey/tracker[en_GB,{wave}]"].ps_survey_id for wave in ("w1", "w2", "w3")}
    group = api.get_group(f"t-{unique}-en_GB-w3")
    assert sorted(group["surveys_in_group"]) == sorted([ids["w2"], ids["w3"]])
    first = api.get_group(f"t-{unique}-en_GB-w2")
    assert sorted(first["surveys_in_group"]) == sorted([ids["w1"], ids["w2"]])
    assert f"t-{unique}-en_GB-w3" in api.get_survey(ids["w2"])["buyer_surveygroup_refs"]


def test_an_exclusion_group_of_a_program_member_and_a_survey_holds_both_on_the_service(
    run_cli, write_program, manifests, project, api, unique
):
    write_program(program(None, ["w1"]))
    manifests.write(survey_manifest("study"))
    manifests.write(group_manifest(f"apart-{unique}", "study", "tracker[en_GB,w1]"))
    _apply(run_cli)
    state = _state(project)
    held = api.get_group(f"apart-{unique}")["surveys_in_group"]
    assert sorted(held) == sorted(
        [state["Survey/study"].ps_survey_id, state["Survey/tracker[en_GB,w1]"].ps_survey_id]
    )


def test_target_a_program_plans_all_its_members(run_cli, write_program, manifests):
    write_program(program(None, ["w1", "w2"]))
    manifests.write(survey_manifest("other"))
    result = run_cli("plan", "manifests", "--target", "tracker")
    assert "Plan: 4 to add, 0 to change, 0 to destroy." in result.stdout


def test_a_mistyped_program_name_in_target_is_told_the_program(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    result = run_cli("plan", "manifests", "--target", "trackr")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: --target trackr: no resource has that name (did you mean 'tracker'?)"
    )


def test_a_program_targeted_as_an_address_is_told_how_programs_are_targeted(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    result = run_cli("plan", "manifests", "--target", "SurveyProgram/tracker")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: --target SurveyProgram/tracker: a program is targeted by its name alone "
        "(`--target tracker`, every member), or one member by its market and wave "
        "(`--target 'tracker[MARKET,WAVE]'`)"
    )


def test_target_one_member_plans_only_it(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    result = run_cli("plan", "manifests", "--target", "tracker[en_GB,w2]")
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in result.stdout
    assert "+ Survey/tracker[en_GB,w2] will be created" in result.stdout


def test_target_one_member_plans_its_survey_and_its_exclusion_group(run_cli, write_program, unique):
    write_program(program(f"t-{unique}", ["w1", "w2"]))
    result = run_cli("plan", "manifests", "--format", "json", "--target", "tracker[en_GB,w2]")
    assert result.exit_code == 0, result.stderr
    planned = {r["address"] for r in json.loads(result.stdout)["resources"]}
    # The group holds the wave before it, so that survey is planned too, as for any group.
    assert planned == {
        "Survey/tracker[en_GB,w2]",
        "ExclusionGroup/tracker[en_GB,w2]",
        "Survey/tracker[en_GB,w1]",
    }


def test_render_prints_one_members_exact_body(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    result = run_cli("render", "manifests", "--name", "tracker[en_US,w2]")
    body = json.loads(result.stdout)
    assert body["survey_title"] == f"Tracker US w2 {title_tag()}"
    assert body["completes_required"] == 300


def test_render_prints_one_members_exact_body_when_its_wave_has_an_exclusion_group(
    run_cli, write_program
):
    write_program(program("tracker-excl", ["w1", "w2"]))
    result = run_cli("render", "manifests", "--name", "tracker[en_US,w2]")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["survey_title"] == f"Tracker US w2 {title_tag()}"


def test_import_attaches_hand_run_surveys_to_a_program_with_no_changes(
    run_cli, write_program, own_market, project
):
    write_program(program(None, ["w1", "w2"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    made = {name: own_market.create_survey(body)["ps_survey_id"] for name, body in rendered.items()}
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 0, result.output + result.stderr
    assert "Attached 4 resource(s) to program tracker" in result.stdout
    state = _state(project)
    assert {name: state[f"Survey/{name}"].ps_survey_id for name in made} == made
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout
    assert "No changes." in plan.stdout


def test_import_of_a_program_refuses_a_member_that_matches_two_surveys(
    run_cli, write_program, own_market, project
):
    write_program(program(None, ["w1"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    body = rendered["tracker[en_GB,w1]"]
    first, second = (own_market.create_survey(body)["ps_survey_id"] for _ in range(2))
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 1
    assert f"matches 2 surveys by title and locale ({first}, {second})" in result.output
    assert not (project / ".surveyctl" / "state" / "local.json").exists() or not _state(project)


def test_a_template_change_keeps_members_in_their_exclusion_groups(
    run_cli, write_program, project, api, unique
):
    write_program(program(f"k-{unique}", ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(f"k-{unique}", ["w1", "w2"], price=3))
    _apply(run_cli)
    state = _state(project)
    ids = [state[f"Survey/tracker[en_US,{wave}]"].ps_survey_id for wave in ("w1", "w2")]
    group = api.get_group(f"k-{unique}-en_US-w2")
    assert sorted(group["surveys_in_group"]) == sorted(ids)
    assert api.get_survey(ids[0])["offer_price"] == 3


def test_a_saved_plan_of_a_program_applies(run_cli, write_program, project):
    write_program(program(None, ["w1"]))
    saved = run_cli("plan", "manifests", "--out", "change.plan")
    assert saved.exit_code == 0, saved.output + saved.stderr
    applied = run_cli("apply", "change.plan", "--auto-approve")
    assert applied.exit_code == 0, applied.output + applied.stderr
    assert "Survey/tracker[en_GB,w1]" in _state(project)


def test_import_attaches_hand_made_exclusion_groups_by_their_reference(
    run_cli, write_program, own_market, unique
):
    write_program(program(f"h-{unique}", ["w1", "w2"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    made = {name: own_market.create_survey(body)["ps_survey_id"] for name, body in rendered.items()}
    for market in MARKETS:
        own_market.create_group(
            {
                "buyer_surveygroup_ref": f"h-{unique}-{market}-w2",
                "name": f"tracker {market} w2: earlier waves excluded",
                "exclusion_period": 30,
                "surveys_in_group": [made[f"tracker[{market},w1]"], made[f"tracker[{market},w2]"]],
            }
        )
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert "Attached 6 resource(s) to program tracker" in result.stdout, result.output
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout


def _hand_made(run_cli, own_market, wave: str | None = None) -> dict[str, int]:
    """Creates the members' surveys by hand (of `wave` only, if given); name -> id."""
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    return {
        name: own_market.create_survey(body)["ps_survey_id"]
        for name, body in rendered.items()
        if wave is None or name.endswith(f",{wave}]")
    }


def test_import_of_a_program_leaves_groups_not_on_the_marketplace_to_be_created(
    run_cli, write_program, own_market, project, unique
):
    write_program(program(f"n-{unique}", ["w1", "w2"]))
    _hand_made(run_cli, own_market)
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        "Attached 4 resource(s) to program tracker; 0 already managed, 2 not found on the "
        "marketplace (plan creates them)."
    ) in result.stdout
    assert not any(address.startswith("ExclusionGroup/") for address in _state(project))
    plan = run_cli("plan", "manifests")
    assert "Plan: 2 to add, 0 to change, 0 to destroy." in plan.stdout


def test_import_of_a_program_leaves_a_group_of_a_survey_not_found_to_be_created(
    run_cli, write_program, own_market, project, unique
):
    write_program(program(f"m-{unique}", ["w1", "w2"]))
    _hand_made(run_cli, own_market, wave="w1")  # w2 was never run, so its groups cannot be
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 0, result.output + result.stderr
    assert "Attached 2 resource(s) to program tracker; 0 already managed, 4 not found" in (
        result.stdout
    )


def test_importing_a_program_again_attaches_nothing_and_counts_what_is_managed(
    run_cli, write_program, own_market, unique
):
    write_program(program(f"a-{unique}", ["w1", "w2"]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 0, result.output + result.stderr
    assert "Attached 0 resource(s) to program tracker; 6 already managed, 0 not found" in (
        result.stdout
    )


def test_import_of_a_program_no_manifest_names_lists_the_programs_there_are(
    run_cli, write_program, own_market
):
    write_program(program(None, ["w1"]))
    result = run_cli("import", "--program", "traker", "--manifests", "manifests", "--yes")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "no SurveyProgram is named 'traker'; programs: tracker" in result.stderr


def test_import_of_a_program_matches_by_the_environments_identity_rule(
    run_cli, write_program, own_market, project
):
    config = project / "surveyctl.yaml"
    config.write_text(
        config.read_text().replace(
            "api_key_env: SURVEYCTL_LOCAL_KEY",
            "api_key_env: SURVEYCTL_LOCAL_KEY, identity: external_project_id",
        )
    )
    write_program(program(None, ["w1"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    retitled = {
        **rendered["tracker[en_GB,w1]"],
        "survey_title": "Retitled by hand " + title_tag(),
        "external_project_id": "local/Survey/tracker[en_GB,w1]",
    }
    made = own_market.create_survey(retitled)["ps_survey_id"]

    result = run_cli("import", "--program", "tracker", "--manifests", "manifests", "--yes")

    assert result.exit_code == 0, result.output + result.stderr
    assert _state(project)["Survey/tracker[en_GB,w1]"].ps_survey_id == made


def _emptied(path: Path, addresses: str) -> int:
    """Empties the list `addresses` of the unsigned plan file at `path`, its checksum made
    again as an editor would; how many addresses it held."""
    document = json.loads(path.read_text())
    held = len(document["plan"][addresses])
    document["plan"][addresses] = []
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document))
    return held


def test_a_saved_plan_edited_to_hide_retired_members_is_refused(run_cli, write_program, project):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w2"], price=3.0))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    assert _emptied(project / "change.plan", "retired") == 2
    applied = run_cli("apply", "change.plan", "--auto-approve")
    assert applied.exit_code == 1
    assert "the plan file is not what its manifests plan now for Survey/tracker[" in (
        applied.stderr
    )


def test_importing_a_member_whose_program_was_not_read_says_to_name_its_manifest(
    write_program, run_cli, project
):
    write_program(program(None, ["w1"]))
    _apply(run_cli)
    member = "tracker[en_US,w1]"
    survey_id = _state(project)[f"Survey/{member}"].ps_survey_id
    assert run_cli("state", "rm", f"Survey/{member}", "--yes").exit_code == 0

    refused = run_cli("import", str(survey_id), "--name", member, "--yes")
    assert refused.exit_code == 1
    assert (
        f"--name '{member}' is a member of program 'tracker', whose manifest is not among the "
        "manifests read; name it with --manifests FILE" in refused.stderr
    )
    named = run_cli("import", str(survey_id), "--name", member, "--manifests", "manifests", "--yes")
    assert named.exit_code == 0, named.stderr
    assert _state(project)[f"Survey/{member}"].ps_survey_id == survey_id


def test_a_changed_exclusion_ref_says_how_a_program_moves_its_groups_and_that_way_works(
    run_cli, write_program, project, unique
):
    write_program(program(f"t-{unique}", ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(f"u-{unique}", ["w1", "w2"]))
    refused = run_cli("plan", "manifests")
    assert refused.exit_code == 1
    group = "ExclusionGroup/tracker[en_GB,w2]"
    assert (
        f"restore the program's exclusion.ref, or `surveyctl state rm {group}` (the old group "
        "stays on the service) and plan a new group under the new one" in refused.stdout
    )
    groups = [a for a in _state(project) if a.startswith("ExclusionGroup/")]
    for address in groups:
        assert run_cli("state", "rm", address, "--yes").exit_code == 0
    _apply(run_cli)
    assert all(_state(project)[a].buyer_surveygroup_ref.startswith(f"u-{unique}-") for a in groups)
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_a_saved_plan_edited_to_release_no_member_is_refused(run_cli, write_program, project):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(loose_program(["w2"]))
    assert run_cli("plan", "manifests", "--destroy", "--out", "p.plan").exit_code == 0
    assert _emptied(project / "p.plan", "released") == 2
    applied = run_cli("apply", "p.plan", "--destroy", "--auto-approve")
    assert applied.exit_code == 1
    assert "the plan file is not what its manifests plan now for Survey/tracker[" in (
        applied.stderr
    )
    assert "Survey/tracker[en_GB,w1]" in _state(project)


def test_dropping_a_programs_exclusion_warns_that_its_groups_stay_in_force(
    run_cli, write_program, project, unique
):
    write_program(program(f"t-{unique}", ["w1", "w2"]))
    _apply(run_cli)
    groups = sorted(a for a in _state(project) if a.startswith("ExclusionGroup/"))
    assert groups
    write_program(program(None, ["w1", "w2"]))
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    for group in groups:
        member = group.split("[", 1)[1].rstrip("]").replace(",", ", ")
        assert (
            f"  warning: {group}: retired from program tracker, which no longer makes it for "
            f"{member}: kept and still in force on the marketplace, never destroyed; to delete "
            "it, set the program's lifecycle prevent_destroy: false and plan with --destroy"
        ) in result.stdout.splitlines()
    assert "retired from program tracker: kept, never destroyed" not in result.stdout


def test_import_of_a_program_reads_its_members_surveys_side_by_side(
    run_cli, write_program, own_market, project
):
    from surveyctl.manifests import load_desired
    from surveyctl.reconcile.identity import Rule
    from surveyctl.reconcile.program_import import adopt_program
    from surveyctl.state import State

    write_program(program(None, ["w1", "w2"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    for body in rendered.values():
        own_market.create_survey(body)
    client = OverlappingReads(own_market)

    found = adopt_program(
        client, load_desired([project / "manifests"]), State.empty(), "tracker", Rule("")
    )

    assert len(found.records) == len(rendered)
    assert client.most > 1


def test_import_of_a_program_reads_its_members_groups_side_by_side(
    run_cli, write_program, own_market, project, unique
):
    from surveyctl.manifests import load_desired
    from surveyctl.reconcile.identity import Rule
    from surveyctl.reconcile.program_import import adopt_program
    from surveyctl.state import State

    write_program(program(f"x-{unique}", ["w1", "w2", "w3"]))
    rendered = json.loads(run_cli("render", "manifests", "--name", "tracker").stdout)["surveys"]
    for body in rendered.values():
        own_market.create_survey(body)
    client = OverlappingReads(own_market, "get_group")

    found = adopt_program(
        client, load_desired([project / "manifests"]), State.empty(), "tracker", Rule("")
    )

    assert len(found.unmatched) > 1  # no group was made: each was looked for, and not found
    assert client.most > 1


_RENAMED = "renames that wave to this one, run"


def test_a_renamed_wave_is_noted_with_the_state_mv_that_keeps_each_survey(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "nov"]))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0, result.stderr
    for market in MARKETS:
        assert (
            f"  note: Survey/tracker[{market},nov]: created beside Survey/tracker[{market},w2], "
            "of a wave its program no longer lists (dropped in this edit or an earlier one: the "
            "state does not say which), the same survey but for the wave id: "
            "if this edit renames that wave to this one, run `surveyctl state mv "
            f"'Survey/tracker[{market},w2]' 'Survey/tracker[{market},nov]'` and plan again, so "
            "that the survey keeps its id and fieldwork instead of running twice; if this is a "
            "new wave, apply as planned (manifests/tracker.yaml:"
        ) in result.stdout


def test_the_state_mv_a_renamed_wave_is_noted_with_leaves_nothing_to_create(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "nov"]))
    for market in MARKETS:
        moved = run_cli(
            "state", "mv", f"Survey/tracker[{market},w2]", f"Survey/tracker[{market},nov]"
        )
        assert moved.exit_code == 0, moved.stderr
    result = run_cli("plan", "manifests")
    assert "Plan: 0 to add, 2 to change, 0 to destroy." in result.stdout  # the titles
    assert _RENAMED not in result.stdout


def test_a_wave_added_while_the_others_stay_is_not_taken_for_a_rename(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2", "w3"]))
    result = run_cli("plan", "manifests")
    assert f"Plan: {len(MARKETS)} to add, 0 to change, 0 to destroy." in result.stdout
    assert _RENAMED not in result.stdout


def test_a_closed_wave_dropped_as_the_next_begins_is_not_taken_for_a_rename(
    run_cli, write_program, project
):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    for market in MARKETS:
        survey_id = str(_state(project)[f"Survey/tracker[{market},w1]"].ps_survey_id)
        for status in ("live", "paused", "closed"):
            assert run_cli("status", survey_id, status, "--yes").exit_code == 0
    write_program(program(None, ["w2", "w3"]))
    result = run_cli("plan", "manifests")
    assert f"Plan: {len(MARKETS)} to add, 0 to change, 0 to destroy." in result.stdout
    assert _RENAMED not in result.stdout


def test_a_dropped_wave_unlike_the_new_one_is_not_taken_for_a_rename(run_cli, write_program):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w3"], price=3.0))
    result = run_cli("plan", "manifests")
    assert _RENAMED not in result.stdout


def _destroy_plan_of_w2_renamed_nov(run_cli, write_program):
    """`plan --destroy` of a loose program of waves w1, w2 applied, then w2 renamed nov: it
    plans 2 creates and 2 deletes."""
    loose = loose_program(["w1", "w2"])
    write_program(loose)
    _apply(run_cli)
    loose["spec"]["waves"] = ["w1", "nov"]
    write_program(loose)
    result = run_cli("plan", "manifests", "--destroy")
    assert "Plan: 2 to add, 0 to change, 2 to destroy." in result.stdout
    return result


def test_a_renamed_wave_that_destroy_would_delete_is_noted_too(run_cli, write_program):
    result = _destroy_plan_of_w2_renamed_nov(run_cli, write_program)
    assert result.stdout.count(_RENAMED) == 2


def test_a_new_wave_beside_a_wave_dropped_in_an_earlier_edit_is_not_said_to_end_as_it_begins(
    run_cli, write_program
):
    write_program(program(None, ["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w2"]))  # w1 dropped, its surveys kept open
    _apply(run_cli)
    write_program(program(None, ["w2", "w3"]))  # a month later, the next wave
    result = run_cli("plan", "manifests")
    note = next(line for line in result.stdout.splitlines() if "[en_GB,w3]: created" in line)
    assert "(dropped in this edit or an earlier one: the state does not say which)" in note
    assert "if this is a new wave, apply as planned" in note
    assert "ended as this one begins" not in note


def test_a_renamed_wave_deleted_by_destroy_is_one_group_beside_the_new_waves_creates(
    run_cli, write_program
):
    result = _destroy_plan_of_w2_renamed_nov(run_cli, write_program)
    assert (
        "+ 2 surveys of program tracker will be created: wave nov in markets en_GB, en_US "
        "(+$1,250.00)\n"
    ) in result.stdout
    assert (
        "- 2 surveys of program tracker will be destroyed: wave w2 in markets en_GB, en_US "
        "(-$1,250.00)\n"
    ) in result.stdout
    assert result.stdout.count("will be destroyed") == 1


def test_a_removed_programs_protected_member_is_refused_by_name_beside_the_others_group(
    run_cli, write_program, project
):
    write_program(loose_program(["w1", "w2"]))
    _apply(run_cli)
    write_program(program(None, ["w1", "w2"]))  # protected again, applied to one member only
    protected = "tracker[en_GB,w1]"
    targeted = run_cli("apply", "manifests", "--target", protected, "--auto-approve")
    assert targeted.exit_code == 0, targeted.stdout + targeted.stderr
    (project / "manifests" / "tracker.yaml").write_text(yaml.safe_dump(survey_manifest("other")))
    result = run_cli("plan", "manifests", "--destroy")
    assert "- 3 surveys of program tracker will be destroyed: " in result.stdout
    assert (
        f"  error: Survey/{protected}: lifecycle.prevent_destroy forbids deleting it; restore "
        "its manifest or `surveyctl state rm` it"
    ) in result.stdout.splitlines()
