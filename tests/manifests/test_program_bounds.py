"""A SurveyProgram comes with a pull request: what it expands to is bounded and checked before
the work is done, and going over a bound is one error at the line that asks for it."""

from __future__ import annotations

import time

PROGRAM = """\
kind: SurveyProgram
name: tracker
spec:
  template:
    survey_title: "Tracker {wave}"
    survey_category_code: 231
    completes_required: 100
    expected_ir: 40
    expected_loi: 10
    field_time: 7
    live_url: "https://survey.example.com/s?tid=[%%transaction_id%%]"
  markets: {en_US: {}}
  waves: WAVES
"""


def program(waves: str) -> str:
    return PROGRAM.replace("WAVES", waves)


def test_a_range_of_a_trillion_waves_is_refused_at_once_without_making_them(check):
    started = time.monotonic()
    state, errors, _ = check(program("{from: 0, to: 1000000000000}"))
    assert time.monotonic() - started < 5
    assert [(e.summary, e.location.line) for e in errors] == [
        ("spec.waves names 1,000,000,000,001 waves; at most 1,000.", 13)
    ]
    assert state.surveys == {}


def test_a_range_of_months_over_the_bound_says_how_many_it_names(check):
    _, errors, _ = check(program('{from: "2026-01", to: "9999-12"}'))
    assert [e.summary for e in errors] == ["spec.waves names 95,688 waves; at most 1,000."]


def test_a_range_of_months_crosses_the_year(check):
    state, errors, _ = check(program('{from: "2026-11", to: "2027-02"}'))
    assert errors == []
    assert sorted(state.surveys) == [
        "tracker[en_US,2026-11]",
        "tracker[en_US,2026-12]",
        "tracker[en_US,2027-01]",
        "tracker[en_US,2027-02]",
    ]


def test_a_range_into_negative_numbers_is_refused_at_the_wave_id_that_breaks_the_rule(check):
    state, errors, _ = check(program("{from: -2, to: 1}"))
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "Wave id '-2' is not valid: a wave id is 1 to 32 letters, digits, dots, dashes and "
            "underscores, starting and ending with a letter or digit.",
            13,
        )
    ]
    assert state.surveys == {}


def test_a_wave_id_written_as_a_number_of_more_than_32_digits_is_refused(check):
    state, errors, _ = check(program("[w1, " + "9" * 40 + "]"))
    assert [e.summary.split(":")[0] for e in errors] == [f"Wave id '{'9' * 40}' is not valid"]
    assert state.surveys == {}


def test_a_list_of_more_than_a_thousand_waves_is_refused_as_a_range_is(check):
    waves = "[" + ", ".join(f"w{n}" for n in range(1001)) + "]"
    state, errors, _ = check(program(waves))
    assert [e.summary for e in errors] == ["spec.waves lists 1,001 waves; at most 1,000."]
    assert state.surveys == {}
