"""Attribute and answer names resolved, and codes checked, through the sandbox's catalogue."""

from __future__ import annotations

import pytest

from surveyctl.catalog import Catalog
from surveyctl.manifests import load_manifests


@pytest.fixture
def resolve(api, write, tmp_path):
    """resolve(text) -> (state, errors) validated against the sandbox catalogue over HTTP."""
    catalog = Catalog(lambda: api, "local", tmp_path / "cache")

    def _resolve(text: str):
        state, diagnostics = load_manifests([write("m.yaml", text)], catalog)
        return state, [d for d in diagnostics.sorted() if d.severity == "error"]

    return _resolve


def test_attribute_and_answer_names_resolve_to_codes(resolve, survey_yaml):
    text = survey_yaml(
        "qualifications:\n"
        "  - {attribute: gender, answers: [FEMALE]}\n"
        "  - {attribute: Age, range_sets: [{from: 18, to: 30, units: 311}]}\n"
    )
    state, errors = resolve(text)
    assert errors == []
    assert state.surveys["test-survey"].body()["qualifications"] == [
        {"qualification_code": 211, "condition_codes": ["112"]},
        {"qualification_code": 212, "range_sets": [{"from": 18, "to": 30, "units": 311}]},
    ]


def test_the_same_name_resolves_per_locale(resolve, survey_yaml):
    region = "qualifications:\n  - {attribute: Region, answers: [%s]}\n"
    gb, gb_errors = resolve(survey_yaml(region % "London", locale="en_GB"))
    us, us_errors = resolve(survey_yaml(region % "West", locale="en_US"))
    assert gb_errors == [] and us_errors == []
    assert gb.surveys["test-survey"].qualifications[0].qualification_code == 230
    assert us.surveys["test-survey"].qualifications[0].qualification_code == 226


def test_unknown_attribute_lists_the_closest_names(resolve, survey_yaml, line_of):
    text = survey_yaml("qualifications:\n  - {attribute: Gendre, answers: [Male]}\n")
    _, errors = resolve(text)
    (error,) = errors
    assert "Unknown attribute 'Gendre' in the en_US catalogue of environment 'local'" in (
        error.summary
    )
    assert "closest: Gender" in error.summary
    assert error.location.line == line_of(text, "Gendre")


def test_unknown_answer_lists_the_closest_answers(resolve, survey_yaml, line_of):
    text = survey_yaml("qualifications:\n  - {attribute: Gender, answers: [Femal]}\n")
    _, errors = resolve(text)
    (error,) = errors
    assert "Attribute 'Gender' has no answer 'Femal'" in error.summary
    assert "closest: Female" in error.summary
    assert error.location.line == line_of(text, "Femal")


def test_answers_of_a_free_entry_attribute_point_to_range_sets(resolve, survey_yaml, line_of):
    text = survey_yaml("qualifications:\n  - {attribute: Age, answers: [18-34, 35-54]}\n")
    _, errors = resolve(text)
    (error,) = errors  # one for the qualification, not one per answer
    assert error.summary == (
        "Attribute 'Age' is answered in free entry and has no answers to name in the en_US "
        "catalogue of environment 'local': give range_sets instead of answers, [{from: LOW, "
        "to: HIGH, units: U}] with U 311 for years, 312 for months or 321 for US dollars (or "
        "condition_codes)."
    )
    assert error.location.line == line_of(text, "18-34")


def test_unknown_qualification_code_is_an_error(resolve, survey_yaml, line_of):
    text = survey_yaml('qualifications:\n  - {qualification_code: 999, condition_codes: ["1"]}\n')
    _, errors = resolve(text)
    (error,) = errors
    assert "qualification_code 999 is not in the en_US catalogue" in error.summary
    assert error.location.line == line_of(text, "999")


def test_condition_code_must_be_an_answer_of_the_attribute(resolve, survey_yaml, line_of):
    text = survey_yaml('qualifications:\n  - {qualification_code: 211, condition_codes: ["114"]}\n')
    _, errors = resolve(text)
    (error,) = errors
    assert "condition code '114' is not an answer of qualification 211 (Gender)" in error.summary
    assert "111 Male, 112 Female, 113 Prefer not to say" in error.summary
    assert error.location.line == line_of(text, "114")


def test_every_condition_code_that_is_no_answer_is_named(resolve, survey_yaml):
    text = survey_yaml(
        'qualifications:\n  - {qualification_code: 211, condition_codes: ["114", "111", "9"]}\n'
    )
    _, errors = resolve(text)
    (error,) = errors
    assert error.summary.startswith(
        "condition codes '114', '9' are not answers of qualification 211 (Gender)"
    )


def test_region_code_of_another_locale_is_rejected(resolve, survey_yaml):
    text = survey_yaml('qualifications:\n  - {qualification_code: 230, condition_codes: ["117"]}\n')
    _, errors = resolve(text)
    assert "qualification_code 230 is not in the en_US catalogue" in errors[0].summary


def test_generator_cells_may_use_answer_names(resolve, survey_yaml):
    text = survey_yaml(
        """\
        quotas:
          - generate:
              interlock:
                gender:
                  attribute: Gender
                  cells:
                    men: {answers: [male], share: 0.5}
                    women: {answers: [female], share: 0.5}
        """
    )
    state, errors = resolve(text)
    assert errors == []
    assert [q.body() for q in state.surveys["test-survey"].quotas] == [
        {"buyer_quota_id": "men", "required_count": 50,
         "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}]},
        {"buyer_quota_id": "women", "required_count": 50,
         "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}]},
    ]  # fmt: skip


def test_unknown_locale_is_an_error_at_the_localization_line(resolve, survey_yaml, line_of):
    text = survey_yaml(locale="pt_BR")
    _, errors = resolve(text)
    (error,) = errors
    assert "has no attribute catalogue for locale 'pt_BR'" in error.summary
    assert error.location.line == line_of(text, "survey_localization")


def test_an_unknown_locale_lists_the_locales_the_environment_has_served(resolve, survey_yaml):
    for locale in ("en_GB", "en_US"):
        assert resolve(survey_yaml(locale=locale))[1] == []
    _, errors = resolve(survey_yaml(locale="en_UK"))
    (error,) = errors
    assert error.summary.startswith(
        "Survey 'test-survey': environment 'local' has no attribute catalogue for locale "
        "'en_UK' (the service answered 404: "
    )
    assert error.summary.endswith("; locales whose catalogue it has served so far: en_GB, en_US.")


def test_an_unknown_locale_gives_the_services_words_which_may_name_the_locale_meant(
    resolve, survey_yaml
):
    _, errors = resolve(survey_yaml(locale="en_UK"))
    (error,) = errors
    assert error.summary.endswith(
        "(the service answered 404: attribute catalogue: 'en_UK' is not a known locale (did you "
        "mean 'en_GB'?); known: de_DE, en_AU, en_CA, en_GB, en_US, es_ES, fr_FR)."
    )


def test_a_qualification_given_by_code_and_again_by_name_is_an_error(resolve, survey_yaml, line_of):
    text = survey_yaml(
        "qualifications:\n"
        "  - {qualification_code: 211, condition_codes: ['111']}\n"
        "  - {attribute: Gender, answers: [Female]}\n"
    )
    _, errors = resolve(text)
    (error,) = errors
    assert error.summary == (
        "Qualification 211 is given twice in survey 'test-survey': as attribute 'Gender' here "
        f"and as its code at line {line_of(text, '211')}."
    )
    assert error.location.line == line_of(text, "Gender")


def test_a_name_given_twice_beside_its_code_is_reported_once(resolve, survey_yaml):
    text = survey_yaml(
        "qualifications:\n"
        "  - {attribute: Gender, answers: [Female]}\n"
        "  - {qualification_code: 211, condition_codes: ['111']}\n"
        "  - {attribute: gender, answers: [Male]}\n"
    )
    _, errors = resolve(text)
    assert [e.summary for e in errors] == [
        "Qualification 211 is given twice in survey 'test-survey': as its code here and as "
        f"attribute 'Gender' at line {errors[0].location.line - 1}.",
        "Qualification gender is given twice in survey 'test-survey' (first at line "
        f"{errors[0].location.line - 1}).",
    ]


class _CountedAnswers(tuple):
    """An attribute's answers, counting the passes made over them."""

    passes = 0

    def __iter__(self):
        type(self).passes += 1
        return super().__iter__()


def test_answer_names_and_codes_are_found_without_a_pass_over_every_answer_each(
    api, write, tmp_path, survey_yaml
):
    import dataclasses
    import json

    catalog = Catalog(lambda: api, "local", tmp_path / "cache")
    locale = catalog.locale("en_US")
    state = locale.by_code[225]  # US State, 51 answers
    counted = dataclasses.replace(state, answers=_CountedAnswers(state.answers))
    locale.by_code[225] = counted
    locale._by_name[state.desc.casefold()] = counted
    names = json.dumps([answer.eng_text for answer in state.answers])
    codes = json.dumps([answer.condition_code for answer in state.answers])
    text = survey_yaml(
        f"qualifications:\n  - {{attribute: US State, answers: {names}}}\n"
        "quotas:\n  - buyer_quota_id: states\n    required_count: 10\n"
        f"    criteria: [{{qualification_code: 225, condition_codes: {codes}}}]\n"
    )

    _state, diagnostics = load_manifests([write("m.yaml", text)], catalog)

    assert [d for d in diagnostics.sorted() if d.severity == "error"] == []
    assert _CountedAnswers.passes <= 2  # one to know the names, one the codes; 102 before
