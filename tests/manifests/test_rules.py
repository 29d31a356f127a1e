"""Rules beyond the schema: each bad manifest gets its message at the right line."""

from __future__ import annotations

import pytest

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
    assert "qlc.enable is true but the survey has no quotas" in error.summary
    assert "1014" in error.summary
    assert error.location.line == line_of(text, "qlc:")


def test_qlc_needs_multiple_quotas_enabled(check, survey_yaml, line_of):
    text = survey_yaml("qlc:\n  enable: true\n  multiple_quotas: {enable: false}\n" + quotas("a"))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "qlc.multiple_quotas.enable must be true when qlc.enable is true."
    assert error.location.line == line_of(text, "multiple_quotas")


def test_no_qlc_option_may_be_true_with_qlc_off(check, survey_yaml, line_of):
    text = survey_yaml(
        "qlc:\n  enable: false\n  multiple_quotas:\n    enable: false\n"
        "    count_by_quota: true\n" + quotas("a")
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "qlc.multiple_quotas.count_by_quota is true while qlc.enable is not" in error.summary
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
    text = survey_yaml("qbp:\n  enable: true\n")
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
    assert "needs exactly one of condition_codes, answers or range_sets, not none" in error.summary
    assert error.location.line == line_of(text, "qualification_code: 211")


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


def test_quotas_below_the_goal_are_a_soft_launch_note(check, survey_yaml):
    state, errors, diagnostics = check(survey_yaml(quotas("a", count=30)))
    assert errors == []
    (note,) = [d for d in diagnostics if d.severity == "note"]
    assert (
        "Soft launch" in note.summary and "sum to 30, below completes_required 100" in note.summary
    )


def test_quotas_above_the_goal_are_a_quota_flexibility_note(check, survey_yaml):
    _, errors, diagnostics = check(survey_yaml(quotas("a", "b", "c", count=50)))
    assert errors == []
    (note,) = [d for d in diagnostics if d.severity == "note"]
    assert "Quota flexibility" in note.summary and "sum to 150" in note.summary


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


def test_exclusion_group_must_name_survey_manifests(check, survey_yaml, line_of):
    text = survey_yaml(name="tracker-us") + group("g", "ref-1", "tracker-us", "tracker-uk")
    _, errors, _ = check(text)
    (error,) = errors
    assert "Exclusion group 'g' names survey 'tracker-uk', which is not a Survey manifest" in (
        error.summary
    )
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
    assert "live_url of survey 'test-survey' carries no [%%transaction_id%%]" in warning.summary
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
    assert f"buyer_quota_id {quota_id} cannot be used" in error.summary
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
    assert "buyer_surveygroup_ref '..' of exclusion group 'g' cannot be used" in error.summary
    assert error.location.line == line_of(text, "buyer_surveygroup_ref: '..'")
