"""Quota generators at their edges: ties and tolerances of the rounding, titles, the default id,
templates and cells that are refused (with their line), and the limit on the quotas made."""

from __future__ import annotations

from fractions import Fraction

import pytest

from surveyctl.manifests.generate import MAX_CELLS, largest_remainder

GENDER = """\
        gender:
          qualification_code: 211
          cells:
            male: {condition_codes: ["111"], share: 0.5}
            female: {condition_codes: ["112"], share: 0.5}
"""
AGE = """\
        age:
          qualification_code: 212
          cells:
            "18-34": {range_sets: [{from: 18, to: 34, units: 311}], share: 0.5}
            "35-99": {range_sets: [{from: 35, to: 99, units: 311}], share: 0.5}
"""


def _generator(*lines: str, dimensions: str = GENDER + AGE) -> str:
    head = "quotas:\n  - generate:\n" + "".join(f"      {line}\n" for line in lines)
    return head + "      interlock:\n" + dimensions


def _quotas(check, survey_yaml, text: str):
    state, errors, _ = check(survey_yaml(text))
    assert errors == []
    return state.surveys["test-survey"].quotas


class TestRounding:
    def test_ties_go_to_the_earlier_cell(self):
        assert largest_remainder([Fraction(1)] * 3, 2) == [1, 1, 0]
        assert largest_remainder([Fraction(1), Fraction(1)], 1) == [1, 0]

    def test_the_largest_remainder_wins_even_from_a_smaller_cell(self):
        # exact counts 1.9 and 3.1: the first cell's remainder (.9) takes the spare unit
        assert largest_remainder([Fraction(19), Fraction(31)], 5) == [2, 3]

    def test_a_total_of_one_goes_to_the_largest_share(self):
        assert largest_remainder([Fraction(1), Fraction(3)], 1) == [0, 1]

    def test_weights_of_zero_make_zero_counts(self):
        assert largest_remainder([Fraction(0), Fraction(0)], 10) == [0, 0]

    @pytest.mark.parametrize("shares", [(0.333, 0.333, 0.333), (0.334, 0.334, 0.333)])
    def test_shares_within_a_thousandth_of_one_are_normalised(self, check, survey_yaml, shares):
        cells = "".join(
            f'            {cell}: {{condition_codes: ["11{i}"], share: {share}}}\n'
            for i, (cell, share) in enumerate(zip("abc", shares, strict=True))
        )
        region = f"        region:\n          qualification_code: 226\n          cells:\n{cells}"
        quotas = _quotas(check, survey_yaml, _generator("total: 100", dimensions=region))
        assert [q.required_count for q in quotas] == [34, 33, 33]

    def test_shares_a_little_more_than_a_thousandth_off_are_an_error(self, check, survey_yaml):
        text = survey_yaml(_generator(dimensions=GENDER.replace("share: 0.5}", "share: 0.4994}")))
        _, errors, _ = check(text)
        assert [e.summary for e in errors] == [
            "The shares of dimension 'gender' sum to 0.9988, not 1."
        ]


class TestIdsAndTitles:
    def test_without_an_id_the_dimension_names_are_joined_by_dashes(self, check, survey_yaml):
        quotas = _quotas(check, survey_yaml, _generator("total: 100"))
        assert [q.buyer_quota_id for q in quotas] == [
            "male-18-34", "male-35-99", "female-18-34", "female-35-99",
        ]  # fmt: skip

    def test_a_title_template_titles_each_quota_and_may_leave_dimensions_out(
        self, check, survey_yaml
    ):
        quotas = _quotas(check, survey_yaml, _generator('title: "Gender {gender}"'))
        assert [q.quota_title for q in quotas][:2] == ["Gender male", "Gender male"]

    def test_a_title_template_with_an_unknown_name_is_an_error_at_its_line(
        self, check, survey_yaml, line_of
    ):
        text = survey_yaml(_generator("total: 100", 'title: "{gender} {region}"'))
        _, errors, _ = check(text)
        (error,) = errors
        assert error.summary.startswith(
            "The generator's title template '{gender} {region}' uses {region}; it may use only "
            "these dimension names: gender, age"
        )
        assert error.location.line == line_of(text, 'title: "{gender} {region}"')

    def test_a_malformed_id_template_is_an_error_at_its_line(self, check, survey_yaml, line_of):
        text = survey_yaml(_generator("total: 100", 'id: "{gender-{age}"'))
        _, errors, _ = check(text)
        (error,) = errors
        assert error.summary.startswith("The generator's id template '{gender-{age}' is malformed")
        assert error.location.line == line_of(text, "id:")

    def test_an_id_template_lacking_a_dimension_is_an_error_at_its_line(
        self, check, survey_yaml, line_of
    ):
        text = survey_yaml(_generator("total: 100", 'id: "{gender}"'))
        _, errors, _ = check(text)
        assert [(e.summary, e.location.line) for e in errors] == [
            (
                "The generator's id template '{gender}' must use every dimension so that ids "
                "are unique; it lacks {age}.",
                line_of(text, 'id: "{gender}"'),
            )
        ]

    @pytest.mark.parametrize(
        ("template", "written"),
        [("{gender!r}-{age}", "{gender!r}"), ("{gender:>8}-{age}", "{gender:>8}")],
    )
    def test_a_template_with_a_conversion_or_format_is_an_error_that_names_it(
        self, check, survey_yaml, line_of, template, written
    ):
        text = survey_yaml(_generator(f'id: "{template}"'))
        _, errors, _ = check(text)
        (error,) = errors
        assert error.summary == (
            f"The generator's id template '{template}' writes {written}; a dimension is "
            "written plainly, as {gender}, with no conversion or format."
        )
        assert error.location.line == line_of(text, "id:")

    def test_a_generated_id_that_repeats_a_plain_quota_is_reported_at_the_generator(
        self, check, survey_yaml, line_of
    ):
        plain = "quotas:\n  - {buyer_quota_id: male-18-34, required_count: 5, criteria: []}\n"
        text = survey_yaml(plain + _generator().removeprefix("quotas:\n"))
        _, errors, _ = check(text)
        (error,) = errors
        assert error.summary.startswith(
            "buyer_quota_id 'male-18-34' (made by a generator) is used twice in survey "
            f"'test-survey'; first at line {line_of(text, 'buyer_quota_id: male-18-34')}"
        )
        assert error.location.line == line_of(text, "generate:")


class TestCells:
    def test_a_cell_with_two_kinds_of_targeting_is_an_error_at_its_line(
        self, check, survey_yaml, line_of
    ):
        ranges = "range_sets: [{from: 1, to: 2, units: 311}]"
        both = f'female: {{condition_codes: ["112"], {ranges}, share: 0.5}}'
        dimensions = GENDER.replace('female: {condition_codes: ["112"], share: 0.5}', both)
        text = survey_yaml(_generator(dimensions=dimensions))
        _, errors, _ = check(text)
        assert [e.summary for e in errors] == [
            "Cell 'female' of dimension 'gender' needs exactly one of condition_codes, answers "
            "or range_sets."
        ]
        assert errors[0].location.line == line_of(text, "female: {")

    def test_a_cell_targeted_by_answers_is_accepted(self, check, survey_yaml):
        answers = GENDER.replace('condition_codes: ["111"]', 'answers: ["Male"]')
        state, errors, _ = check(survey_yaml(_generator(dimensions=answers)))
        assert errors == []
        male, female = state.surveys["test-survey"].quotas
        assert (male.criteria[0].answers, female.criteria[0].condition_codes) == (["Male"], ["112"])

    def test_a_bad_range_in_a_cell_is_reported_once_at_the_cell(self, check, survey_yaml, line_of):
        text = survey_yaml(
            _generator(dimensions=GENDER + AGE.replace("from: 35, to: 99", "from: 99, to: 35"))
        )
        _, errors, _ = check(text)
        assert [(e.summary, e.location.line) for e in errors] == [
            (
                "The generated criterion for 212 has a range from 99 to 35; from must not "
                "exceed to.",
                line_of(text, '"35-99": {'),
            )
        ]

    def test_shares_of_a_later_dimension_that_miss_one_are_reported_at_it(
        self, check, survey_yaml, line_of
    ):
        text = survey_yaml(
            _generator(dimensions=GENDER + AGE.replace("share: 0.5}", "share: 0.4}"))
        )
        _, errors, _ = check(text)
        assert [(e.summary, e.location.line) for e in errors] == [
            ("The shares of dimension 'age' sum to 0.8, not 1.", line_of(text, "age:"))
        ]

    def test_shares_that_sum_to_zero_are_an_error_and_make_quotas_of_zero(
        self, check, survey_yaml, line_of
    ):
        text = survey_yaml(_generator(dimensions=GENDER.replace("share: 0.5}", "share: 0}") + AGE))
        _, errors, said = check(text)
        assert [(e.summary, e.location.line) for e in errors] == [
            ("The shares of dimension 'gender' sum to 0, not 1.", line_of(text, "gender:"))
        ]
        assert [d.summary for d in said] == [
            "The shares of dimension 'gender' sum to 0, not 1.",
            "Soft launch: the quotas of survey 'test-survey' sum to 0, below completes_required "
            "100.",
        ]

    def test_shares_that_miss_one_are_normalised_so_the_quotas_still_make_the_total(
        self, check, survey_yaml
    ):
        text = survey_yaml(
            _generator(dimensions=GENDER.replace("share: 0.5}", "share: 0.4}") + AGE)
        )
        _, _, said = check(text)
        assert [d.summary for d in said] == [
            "The shares of dimension 'gender' sum to 0.8, not 1."
        ]  # and no note of quotas summing below completes_required

    def test_a_dimension_whose_shares_miss_one_still_has_its_cells_checked(
        self, check, survey_yaml, line_of
    ):
        reversed_age = AGE.replace("{from: 35, to: 99,", "{from: 99, to: 35,")
        text = survey_yaml(
            _generator(dimensions=GENDER.replace("share: 0.5}", "share: 0.4}") + reversed_age)
        )
        _, errors, _ = check(text)
        assert [(e.summary, e.location.line) for e in errors] == [
            ("The shares of dimension 'gender' sum to 0.8, not 1.", line_of(text, "gender:")),
            (
                "The generated criterion for 212 has a range from 99 to 35; from must not "
                "exceed to.",
                line_of(text, '"35-99": {'),
            ),
        ]


class TestSize:
    @staticmethod
    def _dimension(name: str, code: int, count: int) -> str:
        share = 1 / count
        cells = "".join(
            f'            c{i}: {{condition_codes: ["{i}"], share: {share!r}}}\n'
            for i in range(count)
        )
        return f"        {name}:\n          qualification_code: {code}\n          cells:\n{cells}"

    def test_as_many_quotas_as_the_limit_are_made(self, check, survey_yaml):
        dimensions = self._dimension("a", 211, 100) + self._dimension("b", 226, 100)
        state, errors, _ = check(survey_yaml(_generator("total: 100000", dimensions=dimensions)))
        assert errors == []
        assert len(state.surveys["test-survey"].quotas) == MAX_CELLS

    def test_more_quotas_than_the_limit_is_an_error_at_the_generator(
        self, check, survey_yaml, line_of
    ):
        dimensions = self._dimension("a", 211, 73) + self._dimension("b", 226, 137)
        text = survey_yaml(_generator("total: 100000", dimensions=dimensions))
        _, errors, _ = check(text)
        assert [e.summary for e in errors] == [
            f"The generator makes 10001 quotas, more than the {MAX_CELLS} allowed."
        ]
        assert errors[0].location.line == line_of(text, "generate:")
