"""Quota generators: shares become integer quotas that sum exactly to the total."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from surveyctl.manifests.generate import largest_remainder

INTERLOCK = """\
quotas:
  - generate:
      id: "{gender}-{age}"
      total: 1000
      interlock:
        gender:
          qualification_code: 211
          cells:
            male: {condition_codes: ["111"], share: 0.48}
            female: {condition_codes: ["112"], share: 0.52}
        age:
          qualification_code: 212
          cells:
            "18-34": {range_sets: [{from: 18, to: 34, units: 311}], share: 0.30}
            "35-54": {range_sets: [{from: 35, to: 54, units: 311}], share: 0.35}
            "55-99": {range_sets: [{from: 55, to: 99, units: 311}], share: 0.35}
"""


def test_interlocked_generator_makes_one_quota_per_combination(check, survey_yaml):
    state, errors, _ = check(survey_yaml(INTERLOCK))
    assert errors == []
    quotas = state.surveys["test-survey"].body()["quotas"]
    assert [q["buyer_quota_id"] for q in quotas] == [
        "male-18-34", "male-35-54", "male-55-99", "female-18-34", "female-35-54", "female-55-99",
    ]  # fmt: skip
    assert [q["required_count"] for q in quotas] == [144, 168, 168, 156, 182, 182]
    assert sum(q["required_count"] for q in quotas) == 1000
    assert quotas[0]["criteria"] == [
        {"qualification_code": 211, "condition_codes": ["111"]},
        {"qualification_code": 212, "range_sets": [{"from": 18, "to": 34, "units": 311}]},
    ]


def test_a_share_written_as_a_percentage_says_it_is_a_fraction(check, survey_yaml):
    _, errors, _ = check(survey_yaml(INTERLOCK.replace("share: 0.48", "share: 48")))
    assert [e.summary for e in errors] == [
        "spec.quotas[0].generate.interlock.gender.cells.male.share must be <= 1, not 48: "
        "a share is a fraction of 1, 0.48 for 48 %."
    ]


def test_total_defaults_to_completes_required(check, survey_yaml):
    state, errors, _ = check(survey_yaml(INTERLOCK.replace("      total: 1000\n", "")))
    assert errors == []
    assert sum(q.required_count for q in state.surveys["test-survey"].quotas) == 100


def test_one_dimension_gives_simple_quotas(check, survey_yaml):
    text = survey_yaml(
        """\
        quotas:
          - generate:
              id: "gender-{gender}"
              interlock:
                gender:
                  qualification_code: 211
                  cells:
                    male: {condition_codes: ["111"], share: 0.5}
                    female: {condition_codes: ["112"], share: 0.5}
        """
    )
    state, errors, _ = check(text)
    assert errors == []
    quotas = state.surveys["test-survey"].quotas
    assert [(q.buyer_quota_id, q.required_count, len(q.criteria)) for q in quotas] == [
        ("gender-male", 50, 1),
        ("gender-female", 50, 1),
    ]


def test_rounding_sums_exactly_when_thirds_do_not_divide(check, survey_yaml):
    text = survey_yaml(
        """\
        quotas:
          - generate:
              total: 100
              interlock:
                region:
                  qualification_code: 226
                  cells:
                    a: {condition_codes: ["111"], share: 0.333}
                    b: {condition_codes: ["112"], share: 0.333}
                    c: {condition_codes: ["113"], share: 0.334}
        """
    )
    state, errors, _ = check(text)
    assert errors == []
    counts = [q.required_count for q in state.surveys["test-survey"].quotas]
    assert counts == [33, 33, 34]
    assert [q.buyer_quota_id for q in state.surveys["test-survey"].quotas] == ["a", "b", "c"]


def test_shares_that_do_not_sum_to_one_are_an_error(check, survey_yaml, line_of):
    text = survey_yaml(INTERLOCK.replace("share: 0.52", "share: 0.62"))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "The shares of dimension 'gender' sum to 1.1, not 1."
    assert error.location.line == line_of(text, "gender:")


def test_id_template_with_an_unknown_name_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml(INTERLOCK.replace('"{gender}-{age}"', '"{gender}-{agegroup}"'))
    _, errors, _ = check(text)
    (error,) = errors
    assert "uses {agegroup}; it may use only these dimension names: gender, age" in error.summary
    assert error.location.line == line_of(text, "id:")


def test_id_template_must_use_every_dimension(check, survey_yaml):
    _, errors, _ = check(survey_yaml(INTERLOCK.replace('"{gender}-{age}"', '"{gender}"')))
    (error,) = errors
    assert "must use every dimension so that ids are unique; it lacks {age}" in error.summary


def test_id_template_names_every_dimension_it_lacks(check, survey_yaml):
    _, errors, _ = check(survey_yaml(INTERLOCK.replace('"{gender}-{age}"', '"cell"')))
    (error,) = errors
    assert error.summary.endswith("so that ids are unique; it lacks {gender}, {age}.")


def test_generated_ids_colliding_with_a_plain_quota_are_an_error(check, survey_yaml, line_of):
    text = survey_yaml(
        INTERLOCK + "  - {buyer_quota_id: male-18-34, required_count: 5, criteria: []}\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "buyer_quota_id 'male-18-34' is used twice" in error.summary
    assert error.location.line == line_of(text, "buyer_quota_id: male-18-34")


def test_expansion_is_deterministic(check, survey_yaml):
    first, _, _ = check(survey_yaml(INTERLOCK), name="a.yaml")
    second, _, _ = check(survey_yaml(INTERLOCK), name="b.yaml")
    assert first.surveys["test-survey"].body() == second.surveys["test-survey"].body()


@settings(max_examples=60, deadline=None)
@given(
    weights=st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=30),
    total=st.integers(min_value=0, max_value=100_000),
)
def test_largest_remainder_sums_to_the_total_and_stays_within_one(weights, total):
    counts = largest_remainder([Fraction(w) for w in weights], total)
    weight_sum = sum(weights)
    if weight_sum == 0:
        assert counts == [0] * len(weights)
        return
    assert sum(counts) == total
    for weight, count in zip(weights, counts, strict=True):
        assert abs(count - Fraction(total * weight, weight_sum)) < 1


def test_a_total_written_with_a_decimal_point_counts_as_that_whole_number(check, survey_yaml):
    text = survey_yaml(INTERLOCK.replace("total: 1000", "total: 1000.0"))
    state, errors, _ = check(text)
    assert errors == []
    counts = [q["required_count"] for q in state.surveys["test-survey"].body()["quotas"]]
    assert counts == [144, 168, 168, 156, 182, 182]
    assert all(type(count) is int for count in counts)


def test_completes_required_written_as_a_decimal_is_the_generator_default(check, survey_yaml):
    text = survey_yaml(INTERLOCK.replace("      total: 1000\n", "")).replace(
        "completes_required: 100", "completes_required: 100.0"
    )
    state, errors, _ = check(text)
    assert errors == []
    survey = state.surveys["test-survey"]
    assert sum(q.required_count for q in survey.quotas) == 100
    assert type(survey.body()["completes_required"]) is int


def test_two_dimensions_on_one_attribute_are_an_error_at_the_second(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        quotas:
          - generate:
              interlock:
                gender:
                  qualification_code: 211
                  cells:
                    male: {condition_codes: ["111"], share: 0.5}
                    female: {condition_codes: ["112"], share: 0.5}
                again:
                  qualification_code: 211
                  cells:
                    m: {condition_codes: ["111"], share: 0.5}
                    f: {condition_codes: ["112"], share: 0.5}
        """
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "Dimensions 'gender' and 'again' both target qualification 211: their cells interlock "
        "into quotas no respondent can fill; make them one dimension."
    )
    assert error.location.line == line_of(text, "again:")
