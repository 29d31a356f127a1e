"""YAML 1.1 reads some plain numbers as other numbers than they show: a leading 0 is octal
(condition code 011 is 9), 0x hexadecimal, a colon base 60 (1:30 is 90). Each is a warning at
its line naming the number it became, so that a code or a count is not changed unseen."""

from __future__ import annotations

import json

import pytest

from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import load_text

SURVEY = """kind: Survey
name: numbers
spec:
  survey_title: Numbers
  completes_required: {count}
  qualifications:
    - {{qualification_code: 211, condition_codes: [{code}]}}
"""


def warnings_of(text: str) -> list[str]:
    diagnostics = Diagnostics()
    load_text(text, "numbers.yaml", diagnostics)
    return [str(d) for d in diagnostics if d.severity == "warning"]


def test_a_condition_code_with_a_leading_zero_is_a_warning_naming_the_octal_number():
    (warning,) = warnings_of(SURVEY.format(count=100, code="011"))
    assert warning.startswith("numbers.yaml:7:")
    assert "011 is read as the number 9 (YAML reads a leading 0 as octal" in warning
    assert 'or "011" in quotes if it is text' in warning


@pytest.mark.parametrize(("written", "read"), [("0x1F", 31), ("1:30", 90), ("-010", -8)])
def test_hexadecimal_base_60_and_signed_octal_numbers_are_warnings(written, read):
    (warning,) = warnings_of(SURVEY.format(count=written, code='"111"'))
    assert f"{written} is read as the number {read} " in warning
    assert warning.startswith("numbers.yaml:5:")


@pytest.mark.parametrize("written", ["0", "10", "0.5", "1_000", "1e3", '"011"', "'0x1F'"])
def test_numbers_read_as_they_show_and_quoted_text_are_no_warning(written):
    assert warnings_of(SURVEY.format(count=written, code='"111"')) == []


def test_whole_numbers_written_with_a_decimal_point_are_sent_as_integers(check, survey_yaml):
    text = survey_yaml(
        """\
        qualifications:
          - {qualification_code: 211.0, condition_codes: [111.0]}
          - {qualification_code: 212, range_sets: [{from: 18.0, to: 34.0, units: 311.0}]}
        quotas:
          - buyer_quota_id: q1
            required_count: 5.0
            criteria: [{qualification_code: 211, condition_codes: ["111"]}]
        """
    )
    text = text.replace("survey_category_code: 231", "survey_category_code: 231.0")
    state, errors, _ = check(text.replace("offer_price: 2.0", "offer_price: 2.25"))
    assert errors == []
    body = state.surveys["test-survey"].body()
    assert json.dumps(body["survey_category_code"]) == "231"
    assert body["qualifications"][0] == {"qualification_code": 211, "condition_codes": ["111"]}
    assert json.dumps(body["qualifications"][1]["range_sets"]) == (
        '[{"from": 18, "to": 34, "units": 311}]'
    )
    assert json.dumps(body["quotas"][0]["required_count"]) == "5"
    assert body["offer_price"] == 2.25  # a fraction stays one
