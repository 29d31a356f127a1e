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
