"""SurveyProgram manifests: one definition expanded into a Survey per market and wave."""

from __future__ import annotations

import json

import pytest
import yaml

from surveyctl.manifests import load_manifests
from surveyctl.model import Lifecycle
from surveyctl.resources import Member

PROGRAM = """\
kind: SurveyProgram
name: tracker
spec:
  variables: {brand: Acme}
  template:
    survey_title: "{brand} tracker {country} {wave}"
    survey_category_code: 231
    completes_required: 100
    expected_ir: 40
    expected_loi: 10
    offer_price: 2.5
    field_time: 7
    live_url: "https://survey.example.com/s?m={locale}&w={wave}&tid=[%%transaction_id%%]"
    qualifications:
      - {qualification_code: 211, condition_codes: ["111", "112"]}
  markets:
    en_US:
      spec: {completes_required: 300}
    en_GB:
      variables: {brand: Acme UK}
      spec: {offer_price: 2.8}
  waves: [w1, w2]
"""


def test_a_program_expands_into_one_survey_per_market_and_wave(check):
    state, errors, _ = check(PROGRAM)
    assert errors == []
    assert sorted(state.surveys) == [
        "tracker[en_GB,w1]",
        "tracker[en_GB,w2]",
        "tracker[en_US,w1]",
        "tracker[en_US,w2]",
    ]


def _group_of(*surveys: str) -> str:
    listed = ", ".join(json.dumps(s) for s in surveys)
    return (
        "---\nkind: ExclusionGroup\nname: apart\nspec:\n  buyer_surveygroup_ref: apart-1\n"
        f"  name: Apart\n  exclusion_period: 30\n  surveys: [{listed}]\n"
    )


def test_an_exclusion_group_may_hold_a_program_member(check):
    state, errors, _ = check(PROGRAM + _group_of("tracker[en_US,w2]"))
    assert errors == []
    assert state.groups["apart"].surveys == ["tracker[en_US,w2]"]


def test_an_exclusion_group_naming_a_program_is_told_to_name_its_members(check, line_of):
    text = PROGRAM + _group_of("tracker")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "Exclusion group 'apart' names 'tracker', which is a SurveyProgram: a group holds "
        "surveys, so name the program's members it should hold, such as 'tracker[en_GB,w1]'."
    )
    assert error.location.line == line_of(text, "surveys: [")


def test_market_values_merge_over_the_template(check):
    state, _, _ = check(PROGRAM)
    us, gb = state.surveys["tracker[en_US,w2]"].body(), state.surveys["tracker[en_GB,w2]"].body()
    assert (us["completes_required"], us["offer_price"]) == (300, 2.5)
    assert (gb["completes_required"], gb["offer_price"]) == (100, 2.8)
    assert gb["qualifications"] == [{"qualification_code": 211, "condition_codes": ["111", "112"]}]


def test_variables_fill_the_strings_and_the_market_wins_over_the_program(check):
    state, _, _ = check(PROGRAM)
    body = state.surveys["tracker[en_GB,w2]"].body()
    assert body["survey_title"] == "Acme UK tracker GB w2"
    assert body["survey_localization"] == "en_GB"
    assert body["live_url"].startswith("https://survey.example.com/s?m=en_GB&w=w2&")


def test_a_waves_spec_and_variables_win_over_its_markets(check):
    text = PROGRAM.replace(
        "waves: [w1, w2]",
        "waves: [w1, {id: w2, variables: {brand: Acme W2}, spec: {offer_price: 3.1}}]",
    )
    state, errors, _ = check(text)
    assert errors == []
    first, second = (state.surveys[f"tracker[en_GB,{w}]"].body() for w in ("w1", "w2"))
    assert (first["survey_title"], first["offer_price"]) == ("Acme UK tracker GB w1", 2.8)
    assert (second["survey_title"], second["offer_price"]) == ("Acme W2 tracker GB w2", 3.1)


def test_a_list_in_a_market_replaces_the_template_list(check):
    text = PROGRAM.replace(
        "spec: {offer_price: 2.8}",
        'spec: {qualifications: [{qualification_code: 211, condition_codes: ["112"]}]}',
    )
    state, _, _ = check(text)
    body = state.surveys["tracker[en_GB,w1]"].body()
    assert body["qualifications"] == [{"qualification_code": 211, "condition_codes": ["112"]}]


def test_a_mapping_in_a_market_merges_key_by_key(check):
    text = PROGRAM.replace(
        "    qualifications:\n",
        "    feot: {pacing: '6', interval: 2, is_custom: false}\n    qualifications:\n",
    ).replace("spec: {offer_price: 2.8}", "spec: {feot: {interval: 4}}")
    state, errors, _ = check(text)
    assert errors == []
    assert state.surveys["tracker[en_GB,w1]"].body()["feot"] == {
        "pacing": "6",
        "interval": 4,
        "is_custom": False,
    }


def test_a_survey_localization_other_than_the_market_is_an_error_at_its_line(check, line_of):
    text = PROGRAM.replace(
        "    field_time: 7\n", "    field_time: 7\n    survey_localization: en_US\n"
    )
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "survey_localization 'en_US' differs from its market 'en_GB'; a program sets it "
            "from the market, leave it out.",
            line_of(text, "survey_localization"),
        )
    ]


def test_a_range_of_months_makes_one_wave_a_month(check):
    text = PROGRAM.replace("waves: [w1, w2]", "waves: {from: 2026-11, to: 2027-02}")
    state, errors, _ = check(text)
    assert errors == []
    waves = sorted(s.member.wave for s in state.surveys.values() if s.member.market == "en_US")
    assert waves == ["2026-11", "2026-12", "2027-01", "2027-02"]


def test_a_required_field_only_one_market_sets_is_an_error_naming_the_others(check, line_of):
    text = PROGRAM.replace("    field_time: 7\n", "").replace(
        "spec: {offer_price: 2.8}", "spec: {offer_price: 2.8, field_time: 7}"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "Survey 'tracker[en_US,w1]' (and 1 more member: [en_US,w2]): missing required field "
        "'field_time', set by neither the program's template nor its market's or wave's spec."
    )
    assert error.location.line == line_of(text, "survey_title")


@pytest.mark.parametrize(
    "waves",
    ["{from: 2027-02, to: 2026-11}", "{from: 2026-13, to: 2027-02}", "{from: 2026-11, to: 5}"],
    ids=["backwards", "month-13", "month-and-number"],
)
def test_a_range_of_waves_that_is_no_range_is_an_error_at_its_line(check, line_of, waves):
    text = PROGRAM.replace("waves: [w1, w2]", f"waves: {waves}")
    state, errors, _ = check(text)
    (error,) = errors
    assert "must be two months (YYYY-MM) or two whole numbers, the first not after" in (
        error.summary
    )
    assert error.location.line == line_of(text, "waves:")
    assert state.surveys == {}


def test_a_wave_listed_twice_is_an_error_naming_the_first(check, line_of):
    text = PROGRAM.replace("waves: [w1, w2]", "waves:\n    - w1\n    - w2\n    - w1")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith(
        f"Wave 'w1' is listed twice; first at line {line_of(text, '- w1')}"
    )


def test_a_built_in_variable_cannot_be_set(check, line_of):
    text = PROGRAM.replace("variables: {brand: Acme}", "variables: {brand: Acme, country: UK}")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith("Variable 'country' is built in and cannot be set")
    assert error.location.line == line_of(text, "country: UK")


def test_a_market_whose_survey_localization_differs_is_an_error(check):
    text = PROGRAM.replace(
        "spec: {offer_price: 2.8}", "spec: {offer_price: 2.8, survey_localization: en_US}"
    )
    _, errors, _ = check(text)
    assert errors
    assert "survey_localization 'en_US' differs from its market 'en_GB'" in errors[0].summary


def test_an_unknown_variable_is_an_error_at_its_line(check, line_of):
    text = PROGRAM.replace("{brand} tracker", "{brnad} tracker")
    _, errors, _ = check(text)
    (error,) = errors
    assert "unknown variable {brnad}" in error.summary
    assert error.location.line == line_of(text, "survey_title")


def test_a_variable_only_some_waves_set_is_an_error_naming_the_members_without_it(check):
    text = PROGRAM.replace("{brand} tracker", "{brand} {month} tracker").replace(
        "waves: [w1, w2]", "waves: [{id: w1, variables: {month: May}}, w2]"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith(
        "Survey 'tracker[en_US,w2]' (and 1 more member: [en_GB,w2]): unknown variable {month} in"
    )


def test_a_lone_brace_is_an_error_at_its_line(check, line_of):
    text = PROGRAM.replace("{brand} tracker {country} {wave}", "{brand} tracker {country} {wave")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "A lone brace in '{brand} tracker {country} {wave': a variable is written {name}, and "
        "a brace itself {{ or }}."
    )
    assert error.location.line == line_of(text, "survey_title")


def test_doubled_braces_write_a_brace(check):
    state, errors, _ = check(PROGRAM.replace("{brand} tracker", "{{{brand}}} tracker"))
    assert errors == []
    assert state.surveys["tracker[en_US,w1]"].body()["survey_title"].startswith("{Acme} tracker")


def test_a_missing_required_field_is_reported_once_at_the_template(check, line_of):
    text = PROGRAM.replace("    field_time: 7\n", "")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "Survey 'tracker[en_US,w1]' (and 3 more members: [en_US,w2], [en_GB,w1], [en_GB,w2]): "
        "missing required field 'field_time', set by neither the program's template nor its "
        "market's or wave's spec."
    )
    assert error.location.line == line_of(text, "survey_title")


def test_a_finding_shared_by_members_is_reported_once_at_its_line(check, line_of):
    text = PROGRAM.replace(
        '{qualification_code: 211, condition_codes: ["111", "112"]}',
        "{attribute: Gender, answers: [Male, Female]}",
    )
    _, _, diagnostics = check(text)
    offline = "names attributes; they are resolved and checked only against a catalogue"
    notes = [(d.location.line, d.summary) for d in diagnostics.sorted() if offline in d.summary]
    # A member's survey is placed at its market's entry, so each market's waves share one line.
    assert notes == [
        (
            line_of(text, "en_US:"),
            f"Survey 'tracker[en_US,w1]' (and 1 more member: [en_US,w2]) {offline} "
            "(not with --offline).",
        ),
        (
            line_of(text, "en_GB:"),
            f"Survey 'tracker[en_GB,w1]' (and 1 more member: [en_GB,w2]) {offline} "
            "(not with --offline).",
        ),
    ]


def test_a_market_that_is_not_a_locale_is_refused(check, line_of):
    text = PROGRAM.replace("    en_GB:\n", "    britain:\n")
    _, errors, _ = check(text)
    assert errors and "britain" in errors[0].summary


def excluding(more: str = "", waves: str = "[w1, w2, w3]") -> str:
    """PROGRAM over `waves`, each wave excluding the one before it, with `more` lines under
    `exclusion:`; in block style, so that each of its keys has a line of its own."""
    exclusion = "  exclusion:\n    waves: 1\n    exclusion_period: 30\n" + more
    return PROGRAM.replace("waves: [w1, w2]", f"waves: {waves}\n{exclusion}")


def test_exclusion_puts_each_wave_in_a_group_with_the_waves_before_it(check):
    text = PROGRAM.replace(
        "waves: [w1, w2]", "waves: [w1, w2, w3]\n  exclusion: {waves: 1, exclusion_period: 30}"
    )
    state, errors, _ = check(text)
    assert errors == []
    group = state.groups["tracker[en_GB,w3]"]
    assert group.surveys == ["tracker[en_GB,w2]", "tracker[en_GB,w3]"]
    assert state.groups["tracker[en_GB,w2]"].surveys == ["tracker[en_GB,w1]", "tracker[en_GB,w2]"]
    assert group.buyer_surveygroup_ref == "tracker-en_GB-w3"
    assert "tracker[en_GB,w1]" not in state.groups  # the first wave has nothing before it


def test_an_exclusion_ref_without_the_locale_is_one_error_at_its_line(check, line_of):
    text = PROGRAM.replace(
        "waves: [w1, w2]",
        'waves: [w1, w2, w3]\n  exclusion: {waves: 1, exclusion_period: 30, ref: "acme-{wave}"}',
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "exclusion.ref of program 'tracker' gives its groups 'tracker[en_US,w2]' and "
        "'tracker[en_GB,w2]' the same buyer_surveygroup_ref 'acme-w2'; a reference is unique, "
        "so the ref needs {locale} and {wave} in it."
    )
    assert error.location.line == line_of(text, "exclusion:")


def test_exclusion_of_more_waves_than_came_before_holds_every_wave_from_the_first(check):
    state, errors, _ = check(excluding(waves="[w1, w2, w3]").replace("waves: 1", "waves: 2"))
    assert errors == []
    assert state.groups["tracker[en_US,w2]"].surveys == ["tracker[en_US,w1]", "tracker[en_US,w2]"]
    assert state.groups["tracker[en_US,w3]"].surveys == [
        "tracker[en_US,w1]",
        "tracker[en_US,w2]",
        "tracker[en_US,w3]",
    ]


def test_each_exclusion_group_is_the_member_of_its_market_and_wave_with_the_programs_period(
    check,
):
    state, errors, _ = check(excluding())
    assert errors == []
    group = state.groups["tracker[en_GB,w2]"]
    assert (group.member, group.exclusion_period) == (Member("tracker", "en_GB", "w2"), 30)
    assert group.body()["exclusion_period"] == 30


def test_each_exclusion_group_is_placed_at_its_programs_exclusion(check, line_of):
    text = excluding()
    state, _, _ = check(text)
    places = {(g.location.file, g.location.line) for g in state.groups.values()}
    assert places == {(state.files[0], line_of(text, "    waves: 1"))}


def test_an_exclusion_group_without_a_name_is_named_after_its_market_and_wave(check):
    state, errors, _ = check(excluding())
    assert errors == []
    assert (
        state.groups["tracker[en_GB,w2]"].group_name == "tracker en_GB w2: earlier waves excluded"
    )


def test_a_built_in_variable_set_by_a_program_with_exclusion_is_one_error_at_its_line(
    check, line_of
):
    text = excluding().replace(
        "variables: {brand: Acme UK}", "variables:\n        brand: Acme UK\n        wave: w9"
    )
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line, e.location.column) for e in errors] == [
        ("Variable 'wave' is built in and cannot be set.", line_of(text, "wave: w9"), 9)
    ]


def test_the_variables_after_a_built_in_one_are_still_set(check):
    text = PROGRAM.replace("variables: {brand: Acme UK}", "variables: {wave: w9, brand: Acme UK}")
    state, errors, _ = check(text)
    assert [e.summary for e in errors] == ["Variable 'wave' is built in and cannot be set."]
    assert state.surveys["tracker[en_GB,w1]"].body()["survey_title"] == "Acme UK tracker GB w1"


def test_the_built_in_variables_name_the_program_locale_country_language_and_wave(check):
    text = PROGRAM.replace(
        "{brand} tracker {country} {wave}", "{program} {locale} {country} {language} {wave}"
    )
    state, errors, _ = check(text)
    assert errors == []
    assert state.surveys["tracker[en_GB,w2]"].body()["survey_title"] == "tracker en_GB GB en w2"


def test_program_members_keep_prevent_destroy_unless_the_program_says_otherwise(check):
    state, _, _ = check(PROGRAM)
    assert state.surveys["tracker[en_US,w1]"].lifecycle.prevent_destroy is True
    state, _, _ = check(PROGRAM + "lifecycle: {prevent_destroy: false}\n")
    assert state.surveys["tracker[en_US,w1]"].lifecycle.prevent_destroy is False


def test_a_programs_ignore_changes_reach_every_member(check):
    state, errors, _ = check(PROGRAM + "lifecycle: {ignore_changes: [offer_price]}\n")
    assert errors == []
    lifecycles = {s.lifecycle for s in state.surveys.values()}
    assert lifecycles == {Lifecycle(prevent_destroy=True, ignore_changes=("offer_price",))}


def in_en_us_and_de_de(qualification: str) -> str:
    """The program in en_US and de_DE, qualifying respondents by `qualification` only."""
    return PROGRAM.replace(
        '      - {qualification_code: 211, condition_codes: ["111", "112"]}',
        f"      - {qualification}",
    ).replace("en_GB:", "de_DE:")


def test_an_answer_missing_in_one_market_names_that_market_and_line(run_cli, project, line_of):
    text = in_en_us_and_de_de("{attribute: Education, answers: [Associate degree]}")
    (project / "tracker.yaml").write_text(text)
    result = run_cli("validate", "tracker.yaml", "--format", "json")
    assert result.exit_code == 1
    errors = [d for d in json.loads(result.stdout)["diagnostics"] if d["severity"] == "error"]
    (error,) = errors
    assert "no answer 'Associate degree' in the de_DE catalogue" in error["summary"]
    assert (error["file"], error["line"]) == ("tracker.yaml", line_of(text, "Associate degree"))


def test_a_market_without_a_catalogue_is_an_error_at_the_market(run_cli, project, line_of):
    text = PROGRAM.replace("en_GB:", "xx_XX:")
    (project / "tracker.yaml").write_text(text)
    result = run_cli("validate", "tracker.yaml", "--format", "json")
    assert result.exit_code == 1
    (error,) = json.loads(result.stdout)["diagnostics"]
    assert "has no attribute catalogue for locale 'xx_XX'" in error["summary"]
    assert (error["line"], error["column"]) == (line_of(text, "xx_XX:"), 5)


def test_english_answer_names_resolve_in_every_market(run_cli, project):
    text = in_en_us_and_de_de("{attribute: Gender, answers: [Female]}")
    (project / "tracker.yaml").write_text(text)
    result = run_cli("render", "tracker.yaml", "--name", "tracker[de_DE,w1]")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["qualifications"] == [{"qualification_code": 211, "condition_codes": ["112"]}]


def test_render_of_a_program_name_prints_every_member(run_cli, project):
    (project / "tracker.yaml").write_text(PROGRAM)
    result = run_cli("render", "tracker.yaml", "--name", "tracker")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["surveys"]) == 4


def _generated(title: str) -> str:
    """PROGRAM in one market and wave, with a brand holding braces and a quota generator of
    `title`."""
    document = yaml.safe_load(PROGRAM)
    spec = document["spec"]
    spec["variables"] = {"brand": "Acme {g}"}
    del spec["template"]["qualifications"]
    cells = {"men": ["111"], "women": ["112"]}
    spec["template"]["quotas"] = [
        {
            "generate": {
                "id": "{g}",
                "title": title,
                "interlock": {
                    "g": {
                        "qualification_code": 211,
                        "cells": {
                            cell: {"condition_codes": codes, "share": 0.5}
                            for cell, codes in cells.items()
                        },
                    }
                },
            }
        }
    ]
    spec["markets"], spec["waves"] = {"en_US": None}, ["w1"]
    return yaml.safe_dump(document, sort_keys=False)


def test_a_variable_in_a_generator_title_is_written_as_it_is_not_read_as_a_dimension(check):
    state, errors, _ = check(_generated("{g} {{note}} {brand}"))
    assert errors == []
    quotas = state.surveys["tracker[en_US,w1]"].body()["quotas"]
    assert [q["quota_title"] for q in quotas] == [
        "men {note} Acme {g}",
        "women {note} Acme {g}",
    ]


def test_doubled_braces_in_a_generator_title_write_a_brace_as_in_a_plain_survey(check):
    state, errors, _ = check(_generated("{g} {{note}} x"))
    assert errors == []
    titles = [q["quota_title"] for q in state.surveys["tracker[en_US,w1]"].body()["quotas"]]
    assert titles == ["men {note} x", "women {note} x"]


def test_a_survey_with_the_name_of_a_program_is_refused_at_its_name(write, survey_yaml):
    program = write("program.yaml", PROGRAM)
    survey = write("survey.yaml", survey_yaml(name="tracker"))
    _, diagnostics = load_manifests([program.parent])
    (error,) = [d for d in diagnostics if d.severity == "error"]
    assert error.summary.startswith(
        f"Survey 'tracker' has the name of the SurveyProgram in {program} at line 2"
    )
    assert "rename one of them" in error.summary
    assert (error.location.file, error.location.line) == (str(survey), 2)


def test_an_exclusion_group_with_the_name_of_a_program_is_refused(write, survey_yaml):
    write("program.yaml", PROGRAM)
    write("survey.yaml", survey_yaml(name="wave-one"))
    group = write(
        "group.yaml",
        "kind: ExclusionGroup\nname: tracker\nspec:\n  buyer_surveygroup_ref: pilots\n"
        "  name: Pilots\n  exclusion_period: 30\n  surveys: [wave-one]\n",
    )
    _, diagnostics = load_manifests([group.parent])
    (error,) = [d for d in diagnostics if d.severity == "error"]
    assert "ExclusionGroup 'tracker' has the name of the SurveyProgram" in error.summary
    assert error.location.file == str(group)


def test_a_survey_beside_a_program_of_another_name_is_accepted(write, survey_yaml):
    write("program.yaml", PROGRAM)
    survey = write("survey.yaml", survey_yaml(name="tracker-pilot"))
    state, diagnostics = load_manifests([survey.parent])
    assert not diagnostics.has_errors, [str(d) for d in diagnostics]
    assert "tracker-pilot" in state.surveys and "tracker[en_US,w1]" in state.surveys


def test_exclusion_name_titles_each_group_with_the_variables_of_its_market_and_wave(check):
    text = excluding(
        "    name: '{brand} {country} {month}'\n",
        waves="[w1, {id: w2, variables: {month: May}}]",
    )
    state, errors, _ = check(text)
    assert errors == []
    assert state.groups["tracker[en_GB,w2]"].group_name == "Acme UK GB May"
    assert state.groups["tracker[en_US,w2]"].group_name == "Acme US May"


def test_a_wave_variable_fills_the_reference_of_that_waves_group(check):
    text = excluding(
        "    ref: 'tracker-{locale}-{month}'\n",
        waves=("[{id: w1, variables: {month: april}}, {id: w2, variables: {month: may}}]"),
    )
    state, errors, _ = check(text)
    assert errors == []
    assert state.groups["tracker[en_GB,w2]"].buyer_surveygroup_ref == "tracker-en_GB-may"


def test_an_unknown_variable_in_the_exclusion_ref_is_an_error_at_its_line(check, line_of):
    text = excluding("    ref: 'tracker-{locale}-{wave}-{wav}'\n")
    _, errors, _ = check(text)
    assert [(e.summary.split(";")[0], e.location.line) for e in errors] == [
        (
            "ExclusionGroup 'tracker[en_US,w2]' (and 3 more members: [en_US,w3], [en_GB,w2], "
            "[en_GB,w3]): unknown variable {wav} in 'tracker-{locale}-{wave}-{wav}'",
            line_of(text, "ref:"),
        )
    ]


def test_an_unknown_variable_in_the_exclusion_name_is_an_error_at_its_line(check, line_of):
    text = excluding("    name: 'Tracker {locale} {wav}'\n")
    _, errors, _ = check(text)
    assert [(e.summary.split(";")[0], e.location.line) for e in errors] == [
        (
            "ExclusionGroup 'tracker[en_US,w2]' (and 3 more members: [en_US,w3], [en_GB,w2], "
            "[en_GB,w3]): unknown variable {wav} in 'Tracker {locale} {wav}'",
            line_of(text, "    name:"),
        )
    ]


def test_a_reference_the_groups_of_a_program_share_is_an_error_at_the_ref_line(check, line_of):
    text = excluding("    ref: 'tracker-{locale}'\n")
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "exclusion.ref of program 'tracker' gives its groups 'tracker[en_US,w2]' and "
            "'tracker[en_US,w3]' the same buyer_surveygroup_ref 'tracker-en_US'; a reference is "
            "unique, so the ref needs {locale} and {wave} in it.",
            line_of(text, "ref:"),
        )
    ]


def test_a_group_taking_the_default_reference_of_a_programs_group_is_refused_at_the_exclusion(
    check, line_of, survey_yaml
):
    group = (
        "kind: ExclusionGroup\nname: pilots\nspec:\n  buyer_surveygroup_ref: tracker-en_US-w2\n"
        "  name: Pilots\n  exclusion_period: 30\n  surveys: [pilot]\n---\n"
    )
    text = survey_yaml(name="pilot") + "---\n" + group + excluding()
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "buyer_surveygroup_ref 'tracker-en_US-w2' of exclusion group 'tracker[en_US,w2]' "
            "is already used by exclusion group 'pilots'.",
            line_of(text, "    waves: 1"),
        )
    ]


def test_a_programs_exclusion_groups_keep_prevent_destroy_unless_the_program_says_otherwise(
    check,
):
    text = excluding()
    state, _, _ = check(text)
    assert state.groups["tracker[en_US,w2]"].lifecycle.prevent_destroy is True
    state, _, _ = check(text + "lifecycle: {prevent_destroy: false}\n")
    assert state.groups["tracker[en_US,w2]"].lifecycle.prevent_destroy is False


def test_a_wave_id_written_with_a_dot_is_refused_saying_to_quote_it(check, line_of):
    text = PROGRAM.replace("waves: [w1, w2]", "waves: [w1, 2026.10]")
    state, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith("spec.waves[1] must be text or a whole number, not 2026.1: ")
    assert 'quote it as meant ("2026.10")' in error.summary
    assert error.location.line == line_of(text, "waves:")
    assert state.surveys == {}


def test_a_wave_id_of_1_0_is_refused_rather_than_made_the_wave_1_0(check, line_of):
    text = PROGRAM.replace("waves: [w1, w2]", "waves: [w1, {id: 1.0}]")
    state, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith("spec.waves[1].id is the number 1.0, not a wave id: ")
    assert error.summary.endswith(", or write the whole number 1.")
    assert error.location.line == line_of(text, "waves:")
    assert state.surveys == {}


def test_a_quoted_wave_id_with_a_dot_keeps_its_text(check):
    text = PROGRAM.replace("waves: [w1, w2]", 'waves: ["2026.10", {id: "1.0"}]')
    state, errors, _ = check(text)
    assert errors == []
    assert sorted(state.surveys) == [
        "tracker[en_GB,1.0]",
        "tracker[en_GB,2026.10]",
        "tracker[en_US,1.0]",
        "tracker[en_US,2026.10]",
    ]
