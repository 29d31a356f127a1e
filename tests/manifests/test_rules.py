"""Rules beyond the schema: each bad manifest gets its message at the right line."""

from __future__ import annotations

import pytest

from .conftest import make_survey
from .test_programs import excluding

GENDER = '[{qualification_code: 211, condition_codes: ["111"]}]'


def quotas(*ids: str, count: int = 50) -> str:
    lines = ["quotas:"]
    lines += [
        f"  - {{buyer_quota_id: {i}, required_count: {count}, criteria: {GENDER}}}" for i in ids
    ]
    return "\n".join(lines) + "\n"


def test_buyer_quota_id_must_be_unique_in_a_survey(check, survey_yaml, line_of):
    text = survey_yaml(quotas("men", "men"))
    _, errors, _ = check(text)
    (error,) = errors
    assert "buyer_quota_id 'men' is used twice in survey 'test-survey'" in error.summary
    assert error.location.line == line_of(text, "buyer_quota_id: men", occurrence=2)


def test_qlc_needs_at_least_one_quota(check, survey_yaml, line_of):
    text = survey_yaml("qlc: {enable: true, multiple_quotas: {enable: true}}\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "qlc.enable is true but the survey has no quotas; quota level complete needs at least "
        "one quota (the service answers 1014)."
    )
    assert error.location.line == line_of(text, "qlc:")


def test_qlc_needs_multiple_quotas_enabled(check, survey_yaml, line_of):
    text = survey_yaml("qlc:\n  enable: true\n  multiple_quotas: {enable: false}\n" + quotas("a"))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "qlc.multiple_quotas.enable must be true when qlc.enable is true."
    assert error.location.line == line_of(text, "multiple_quotas")


def test_qlc_without_multiple_quotas_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml("qlc: {enable: true}\n" + quotas("a", count=100))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "qlc.multiple_quotas.enable must be true when qlc.enable is true."
    assert error.location.line == line_of(text, "qlc:")


def test_qlc_multiple_quotas_without_enable_is_an_error_at_qlc_enable(check, survey_yaml, line_of):
    text = survey_yaml(
        "qlc:\n  multiple_quotas: {count_by_quota: true}\n  enable: true\n" + quotas("a", count=100)
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "qlc.multiple_quotas.enable must be true when qlc.enable is true."
    assert error.location.line == line_of(text, "enable: true")


def test_qlc_multiple_quotas_disabled_is_an_error_at_its_own_enable(check, survey_yaml, line_of):
    text = survey_yaml(
        "qlc:\n  enable: true\n  multiple_quotas:\n    count_by_quota: false\n"
        "    enable: false\n" + quotas("a", count=100)
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "qlc.multiple_quotas.enable must be true when qlc.enable is true."
    assert error.location.line == line_of(text, "enable: false")


@pytest.mark.parametrize("option", ["count_by_quota", "compensate_by_quota"])
def test_a_qlc_option_the_api_says_to_omit_sent_true_is_a_warning_at_it(
    option, check, survey_yaml, line_of
):
    text = survey_yaml(
        f"qlc:\n  enable: true\n  multiple_quotas:\n    enable: true\n    {option}: true\n"
        + quotas("a")
    )
    _, errors, diagnostics = check(text)
    assert errors == []
    (warning,) = [d for d in diagnostics.sorted() if d.severity == "warning"]
    assert warning.summary == (
        f"qlc.multiple_quotas.{option} is true; the API says to omit it or send false "
        "(spec 2.7), and `surveyctl sandbox serve --strict` refuses it."
    )
    assert warning.location.line == line_of(text, f"{option}: true")


def test_qlc_options_sent_false_give_no_warning(check, survey_yaml):
    text = survey_yaml(
        "qlc:\n  enable: true\n  multiple_quotas:\n    enable: true\n"
        "    count_by_quota: false\n    compensate_by_quota: false\n" + quotas("a")
    )
    _, errors, diagnostics = check(text)
    assert errors == []
    assert [d for d in diagnostics.sorted() if d.severity == "warning"] == []


def test_no_qlc_option_may_be_true_with_qlc_off(check, survey_yaml, line_of):
    text = survey_yaml(
        "qlc:\n  enable: false\n  multiple_quotas:\n    enable: false\n"
        "    count_by_quota: true\n" + quotas("a")
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "qlc.multiple_quotas.count_by_quota is true while qlc.enable is not; no other QLC option "
        "may be true when QLC is off."
    )
    assert error.location.line == line_of(text, "count_by_quota")


def test_qbp_quota_ids_must_name_quotas_of_the_survey(check, survey_yaml, line_of):
    text = survey_yaml(
        "qbp:\n  enable: true\n  quota_ids:\n    - men\n    - womn\n" + quotas("men", "women")
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "qbp.quota_ids names 'womn', which is not a buyer_quota_id" in error.summary
    assert "(did you mean 'women'?)" in error.summary
    assert error.location.line == line_of(text, "- womn")


def test_qbp_needs_at_least_one_quota(check, survey_yaml, line_of):
    # enable on a line of its own, not the first of qbp: the error is at enable's line
    text = survey_yaml("qbp:\n  quota_ids: []\n  enable: true\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "qbp.enable is true but the survey has no quotas; quota based pricing needs at least "
        "one quota (the service answers 1007)."
    )
    assert error.location.line == line_of(text, "enable: true")


def test_range_from_must_not_exceed_to(check, survey_yaml, line_of):
    text = survey_yaml(
        "qualifications:\n  - qualification_code: 212\n"
        "    range_sets: [{from: 65, to: 18, units: 311}]\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "has a range from 65 to 18; from must not exceed to" in error.summary
    assert error.location.line == line_of(text, "qualification_code: 212")


def test_a_criterion_needs_codes_or_ranges(check, survey_yaml, line_of):
    text = survey_yaml("qualifications:\n  - {qualification_code: 211}\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The qualification for 211 needs exactly one of condition_codes, answers or range_sets, "
        "not none."
    )
    assert error.location.line == line_of(text, "qualification_code: 211")


@pytest.mark.parametrize(
    ("targeting", "given"),
    [
        ('condition_codes: ["111"], range_sets: [{from: 18, to: 30, units: 311}]',
         "condition_codes and range_sets"),
        ('condition_codes: ["111"], answers: [Male]', "condition_codes and answers"),
        ("answers: [Male], range_sets: [{from: 18, to: 30, units: 311}]",
         "answers and range_sets"),
    ],
)  # fmt: skip
def test_a_criterion_with_two_kinds_of_targeting_names_both(
    check, survey_yaml, line_of, targeting, given
):
    text = survey_yaml(f"qualifications:\n  - {{qualification_code: 212, {targeting}}}\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The qualification for 212 needs exactly one of condition_codes, answers or range_sets, "
        f"not {given}."
    )
    assert error.location.line == line_of(text, "qualification_code: 212")


def test_a_range_of_one_value_is_accepted(check, survey_yaml):
    text = survey_yaml(
        "qualifications:\n  - qualification_code: 212\n"
        "    range_sets: [{from: 30, to: 30, units: 311}]\n"
    )
    _, errors, _ = check(text)
    assert errors == []


def test_a_quota_criterion_without_targeting_is_an_error_naming_its_quota(
    check, survey_yaml, line_of
):
    text = survey_yaml(
        "quotas:\n  - buyer_quota_id: a\n    required_count: 100\n"
        "    criteria:\n      - {qualification_code: 211}\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The criterion of quota 'a' for 211 needs exactly one of condition_codes, answers or "
        "range_sets, not none."
    )
    assert error.location.line == line_of(text, "- {qualification_code: 211}")


def test_a_generated_criterion_with_a_reversed_range_is_an_error_at_its_cell(
    check, survey_yaml, line_of
):
    text = survey_yaml(
        "quotas:\n  - generate:\n      interlock:\n        age:\n"
        "          qualification_code: 212\n          cells:\n"
        "            young: {range_sets: [{from: 34, to: 18, units: 311}], share: 0.5}\n"
        "            old: {range_sets: [{from: 35, to: 99, units: 311}], share: 0.5}\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The generated criterion for 212 has a range from 34 to 18; from must not exceed to."
    )
    assert error.location.line == line_of(text, "young:")


def test_a_qualification_code_may_appear_once(check, survey_yaml, line_of):
    text = survey_yaml(
        "qualifications:\n"
        '  - {qualification_code: 211, condition_codes: ["111"]}\n'
        '  - {qualification_code: 211, condition_codes: ["112"]}\n'
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "Qualification 211 is given twice" in error.summary
    assert error.location.line == line_of(text, "112")


def test_quotas_below_the_goal_are_a_soft_launch_note_at_the_quotas(check, survey_yaml, line_of):
    text = survey_yaml(quotas("a", count=30))
    state, errors, diagnostics = check(text)
    assert errors == []
    (note,) = [d for d in diagnostics if d.severity == "note"]
    assert note.summary == (
        "Soft launch: the quotas of survey 'test-survey' sum to 30, below completes_required 100."
    )
    assert note.location.line == line_of(text, "quotas:")


def test_quotas_above_the_goal_are_a_quota_flexibility_note_at_the_quotas(
    check, survey_yaml, line_of
):
    text = survey_yaml(quotas("a", "b", "c", count=50))
    _, errors, diagnostics = check(text)
    assert errors == []
    (note,) = [d for d in diagnostics if d.severity == "note"]
    assert note.summary == (
        "Quota flexibility: the quotas of survey 'test-survey' sum to 150, above "
        "completes_required 100."
    )
    assert note.location.line == line_of(text, "quotas:")


GROUP = """\
---
kind: ExclusionGroup
name: {name}
spec:
  buyer_surveygroup_ref: {ref}
  name: Group
  exclusion_period: 30
  surveys:
{members}
"""


def group(name: str, ref: str, *members: str) -> str:
    return GROUP.format(name=name, ref=ref, members="\n".join(f"    - {m}" for m in members))


def test_a_group_naming_a_survey_of_a_file_not_read_says_to_name_that_file(run_cli, project):
    # The user validates the file they changed; the group's other survey is in another file.
    (project / "coffee.yaml").write_text(
        make_survey(name="coffee") + group("g", "r", "coffee", "tea")
    )
    result = run_cli("validate", "--offline", "coffee.yaml")
    assert result.exit_code == 1
    assert (
        "error: Exclusion group 'g' names survey 'tea', which is neither a Survey manifest nor a "
        "program member in the files read: remove it from the group if its manifest is gone, or "
        "name the file that defines it too (without paths, the `manifests:` of surveyctl.yaml "
        "are read)."
    ) in result.stdout


def test_a_quota_asking_more_than_the_survey_goal_is_a_warning_at_the_quota(
    check, survey_yaml, line_of
):
    text = survey_yaml(
        "quotas:\n"
        "  - {buyer_quota_id: young, required_count: 150,"
        " criteria: [{qualification_code: 211, condition_codes: ['111']}]}\n"
    )
    _, errors, diagnostics = check(text)
    assert errors == []
    (warning,) = [d for d in diagnostics.sorted() if d.severity == "warning"]
    assert warning.summary == (
        "Quota 'young' of survey 'test-survey' asks for 150 completes, more than "
        "completes_required 100: the marketplace pauses the survey at its goal, so the quota "
        "can never fill."
    )
    assert warning.location.line == line_of(text, "buyer_quota_id: young")


def test_a_group_naming_a_document_of_a_misspelt_kind_adds_no_error_to_the_kinds(
    check, survey_yaml
):
    text = survey_yaml(name="tracker-us").replace("kind: Survey", "kind: survey")
    _, errors, _ = check(text + group("g", "ref-1", "tracker-us"))
    assert [e.summary for e in errors] == [
        "Unknown kind 'survey' (did you mean 'Survey'?); expected one of: Survey, "
        "ExclusionGroup, SurveyProgram."
    ]


def test_exclusion_group_must_name_survey_manifests(check, survey_yaml, line_of):
    text = survey_yaml(name="tracker-us") + group("g", "ref-1", "tracker-us", "tracker-uk")
    _, errors, _ = check(text)
    (error,) = errors
    assert (
        "Exclusion group 'g' names survey 'tracker-uk', which is neither a Survey manifest nor a "
        "program member in the files read"
    ) in error.summary
    assert "(did you mean 'tracker-us'?)" in error.summary
    assert error.location.line == line_of(text, "- tracker-uk")


def test_exclusion_group_cannot_hold_a_recontact_survey(check, survey_yaml, line_of):
    text = (
        survey_yaml("incl_excl: 1\n", name="recontact")
        + "---\n"
        + survey_yaml(name="fresh")
        + group("g", "ref-1", "fresh", "recontact")
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "cannot hold survey 'recontact': it is a recontact survey (incl_excl 1)" in error.summary
    assert error.location.line == line_of(text, "- recontact")


def test_exclusion_group_lists_a_survey_once(check, survey_yaml, line_of):
    text = survey_yaml(name="s") + group("g", "ref-1", "s", "s")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "Exclusion group 'g' lists survey 's' twice."
    assert error.location.line == line_of(text, "- s", occurrence=2)


def test_a_programs_exclusion_of_a_recontact_survey_is_refused_at_the_exclusion(check, line_of):
    text = excluding(waves="[w1, w2]").replace(
        "    field_time: 7\n", "    field_time: 7\n    incl_excl: 1\n"
    )
    _, errors, _ = check(text)
    assert len(errors) == 3  # each wave-2 group, for each of its two recontact members
    assert all("it is a recontact survey (incl_excl 1)" in e.summary for e in errors)
    assert {e.location.line for e in errors} == {line_of(text, "    waves: 1")}


def test_buyer_surveygroup_ref_must_be_unique(check, survey_yaml, line_of):
    text = survey_yaml(name="s") + group("g1", "shared", "s") + group("g2", "shared", "s")
    _, errors, _ = check(text)
    (error,) = errors
    assert "buyer_surveygroup_ref 'shared' of exclusion group 'g2' is already used" in error.summary
    assert error.location.line == line_of(text, "buyer_surveygroup_ref: shared", occurrence=2)


def test_every_rule_violation_is_reported_at_once(check, survey_yaml):
    text = survey_yaml(
        "qlc: {enable: true, multiple_quotas: {enable: false}}\n"
        "qbp: {enable: true, quota_ids: [nope]}\n"
    )
    _, errors, _ = check(text)
    assert len(errors) == 4  # no quotas for QLC, multiple_quotas off, no quotas for QBP,
    # unknown qbp quota


def test_live_url_without_the_transaction_placeholder_is_a_warning(check, survey_yaml, line_of):
    text = survey_yaml().replace("?tid=[%%transaction_id%%]", "")
    _, errors, diagnostics = check(text)
    assert errors == []
    (warning,) = [d for d in diagnostics if d.severity == "warning"]
    assert warning.summary == (
        "live_url of survey 'test-survey' carries no [%%transaction_id%%] (or "
        "[%%ps_transaction_id%%]), so the return link cannot name the respondent's transaction."
    )
    assert warning.location.line == line_of(text, "live_url")


def test_live_url_with_the_documented_ps_transaction_id_macro_is_not_warned_of(check, survey_yaml):
    # The service's documentation writes the entry link's transaction macro this way.
    text = survey_yaml().replace("[%%transaction_id%%]", "[%%ps_transaction_id%%]")
    _, errors, diagnostics = check(text)
    assert errors == []
    assert [d.summary for d in diagnostics if d.severity == "warning"] == []


def test_offline_names_are_noted_as_unchecked(check, survey_yaml):
    text = survey_yaml("qualifications:\n  - {attribute: Gender, answers: [Female]}\n")
    state, errors, diagnostics = check(text)
    assert errors == []
    assert not state.surveys["test-survey"].resolved
    (note,) = [d for d in diagnostics if d.severity == "note"]
    assert "names attributes; they are resolved and checked only against a catalogue" in (
        note.summary
    )


def test_a_recontact_survey_cannot_join_a_group_by_reference(check, survey_yaml, line_of):
    text = survey_yaml("incl_excl: 1\nbuyer_surveygroup_ref: trackers\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert "is a recontact survey (incl_excl 1) and cannot join an exclusion group" in (
        error.summary
    )
    assert error.location.line == line_of(text, "buyer_surveygroup_ref")


def test_a_recontact_survey_cannot_join_groups_by_references(check, survey_yaml, line_of):
    text = survey_yaml("incl_excl: 1\nbuyer_surveygroup_refs: [trackers]\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "Survey 'test-survey' is a recontact survey (incl_excl 1) and cannot join an exclusion "
        "group through buyer_surveygroup_refs."
    )
    assert error.location.line == line_of(text, "buyer_surveygroup_refs")


def test_an_ill_typed_field_gets_its_schema_error_and_no_rule_error(check, survey_yaml):
    _, errors, _ = check(survey_yaml("qlc: {enable: 'yes', multiple_quotas: {enable: true}}\n"))
    (error,) = errors
    assert "qlc.enable" in error.summary
    assert "no quotas" not in error.summary


def test_a_schema_error_elsewhere_keeps_the_qbp_rule_errors(check, survey_yaml, line_of):
    valid = survey_yaml("qbp: {enable: true, quota_ids: [men]}\n")
    _, rule_errors, _ = check(valid)
    text = valid.replace("  field_time: 7\n", "  field_time: seven\n")
    _, errors, _ = check(text, name="schema.yaml")
    schema_error, *rest = errors
    assert schema_error.location.line == line_of(text, "field_time")
    assert [(e.summary, e.location.line) for e in rest] == [
        (e.summary, e.location.line) for e in rule_errors
    ]
    assert any("quota based pricing needs at least one quota" in e.summary for e in rest)


@pytest.mark.parametrize("quota_id", ["'.'", "'..'"])
def test_a_quota_id_that_a_url_path_cannot_carry_is_refused_at_its_line(
    check, survey_yaml, line_of, quota_id
):
    # Sent in the quota's path, /surveys/5/quotas/.. would reach /surveys/5/, the survey.
    text = survey_yaml(quotas(quota_id))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        f"buyer_quota_id {quota_id} cannot be used: the quota's URL path carries it, where it "
        "would name the survey itself; choose another."
    )
    assert error.location.line == line_of(text, f"buyer_quota_id: {quota_id}")


def test_a_quota_id_its_path_would_read_as_the_performance_call_is_refused_at_its_line(
    check, survey_yaml, line_of
):
    text = survey_yaml(quotas("performance"))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "buyer_quota_id 'performance' cannot be used: /surveys/{id}/quotas/performance is the "
        "quota performance call, so the quota could never be updated on its own; choose another."
    )
    assert error.location.line == line_of(text, "buyer_quota_id: performance")


def test_a_group_reference_that_a_url_path_cannot_carry_is_refused_at_its_line(
    check, survey_yaml, line_of
):
    text = survey_yaml(name="tracker-us") + group("g", "'..'", "tracker-us")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "buyer_surveygroup_ref '..' of exclusion group 'g' cannot be used: the group's URL path "
        "carries it, where it would name the list of groups itself; choose another."
    )
    assert error.location.line == line_of(text, "buyer_surveygroup_ref: '..'")
