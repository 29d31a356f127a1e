"""A SurveyProgram comes with a pull request: what it expands to is bounded and checked before
the work is done, and going over a bound is one error at the line that asks for it."""

from __future__ import annotations

import time

import yaml

from surveyctl import manifests
from surveyctl.manifests.budget import Budget

from .conftest import make_program


def test_a_range_of_a_trillion_waves_is_refused_at_once_without_making_them(check):
    started = time.monotonic()
    state, errors, _ = check(make_program("{from: 0, to: 1000000000000}"))
    assert time.monotonic() - started < 5
    assert [(e.summary, e.location.line) for e in errors] == [
        ("spec.waves names 1,000,000,000,001 waves; at most 1,000.", 13)
    ]
    assert state.surveys == {}


def test_a_range_of_months_over_the_bound_says_how_many_it_names(check):
    _, errors, _ = check(make_program('{from: "2026-01", to: "9999-12"}'))
    assert [e.summary for e in errors] == ["spec.waves names 95,688 waves; at most 1,000."]


def test_a_range_of_months_crosses_the_year(check):
    state, errors, _ = check(make_program('{from: "2026-11", to: "2027-02"}'))
    assert errors == []
    assert sorted(state.surveys) == [
        "tracker[en_US,2026-11]",
        "tracker[en_US,2026-12]",
        "tracker[en_US,2027-01]",
        "tracker[en_US,2027-02]",
    ]


def test_a_range_into_negative_numbers_is_refused_at_the_wave_id_that_breaks_the_rule(check):
    state, errors, _ = check(make_program("{from: -2, to: 1}"))
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "Wave id '-2' is not valid: a wave id is 1 to 32 letters, digits, dots, dashes and "
            "underscores, starting and ending with a letter or digit.",
            13,
        )
    ]
    assert state.surveys == {}


def test_a_wave_id_written_as_a_number_of_more_than_32_digits_is_refused(check):
    state, errors, _ = check(make_program("[w1, " + "9" * 40 + "]"))
    assert [e.summary.split(":")[0] for e in errors] == [f"Wave id '{'9' * 40}' is not valid"]
    assert state.surveys == {}


def test_a_list_of_more_than_a_thousand_waves_is_refused_as_a_range_is(check):
    waves = "[" + ", ".join(f"w{n}" for n in range(1001)) + "]"
    state, errors, _ = check(make_program(waves))
    assert [e.summary for e in errors] == ["spec.waves lists 1,001 waves; at most 1,000."]
    assert state.surveys == {}


def markets(count: int) -> str:
    """`count` markets (locales aa_AA, aa_AB, ...), each with nothing of its own."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    locales = [f"a{letters[n // 676].lower()}_{letters[n // 26 % 26]}{letters[n % 26]}"
               for n in range(count)]  # fmt: skip
    return "{" + ", ".join(f"{locale}: {{}}" for locale in locales) + "}"


def test_markets_times_waves_over_the_bound_is_one_error_before_any_survey_is_made(check):
    text = make_program("{from: 1, to: 1000}", markets(300))
    started = time.monotonic()
    state, errors, _ = check(text)
    assert time.monotonic() - started < 5  # 300,000 surveys took 40 s and 1.2 GB
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "Program 'tracker' makes 300,000 surveys (300 markets x 1,000 waves), and the "
            "programs of one manifest file may make at most 10,000 in all; split it into "
            "smaller programs in several files.",
            12,
        )
    ]
    assert state.surveys == {}


def test_the_member_bound_is_for_all_programs_of_a_file_together(check):
    one = make_program("{from: 1, to: 1000}", markets(6))
    text = one + "---\n" + one.replace("name: tracker", "name: tracker-b")
    state, errors, _ = check(text)
    assert [e.summary.split(",")[0] for e in errors] == [
        "Program 'tracker-b' makes 6"  # 6,000 more than the 4,000 the first one left
    ]
    assert len(state.surveys) == 6_000


def test_a_variable_repeated_in_a_title_is_refused_before_the_text_is_made(check):
    title = "{v}" * 100_000
    text = (
        make_program("[w1]")
        .replace('survey_title: "Tracker {wave}"', f'survey_title: "{title}"')
        .replace("spec:\n", "spec:\n  variables: {v: " + "x" * 1_000_000 + "}\n", 1)
    )
    started = time.monotonic()
    state, errors, _ = check(text)
    assert time.monotonic() - started < 5  # it was a MemoryError, 100 GB asked for
    assert len(errors) == 1
    assert errors[0].summary.startswith("The variables in '{v}{v}{v}")
    assert "over 20,000,000 characters in all (this text alone is 100,000,000,000)" in (
        errors[0].summary
    )
    assert errors[0].location.line == 6
    assert state.surveys == {}


def test_exclusion_groups_of_every_earlier_wave_count_toward_the_file_bound(check):
    text = (
        make_program("{from: 1, to: 1000}", markets(10))
        + "  exclusion: {waves: 1000, exclusion_period: 30}\n"
    )
    state, errors, _ = check(text)
    assert [(e.summary.split(" once")[0], e.location.line) for e in errors] == [
        ("Program 'tracker' takes the programs of its file over 1,000,000 values", 14)
    ]
    assert state.surveys == {} and state.groups == {}


GENERATOR = """\
    - generate:
        id: "{a}-{b}-N"
        interlock:
          a: {qualification_code: 211, cells: CELLS}
          b: {qualification_code: 212, cells: CELLS}
"""


def test_generators_of_a_survey_over_the_file_bound_are_one_error_at_its_quotas(check, survey_yaml):
    cells = "{" + ", ".join(f'c{i}: {{condition_codes: ["{i}"], share: 0.01}}' for i in range(100))
    cells += "}"
    quotas = "quotas:\n" + "".join(
        GENERATOR.replace("CELLS", cells).replace("-N", f"-{n}") for n in range(11)
    )
    text = survey_yaml(quotas)
    started = time.monotonic()
    _, errors, _ = check(text)
    assert time.monotonic() - started < 10  # a million quotas took 20 s and 1.2 GB
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "These quota generators make 110,000 quotas for the survey, which takes its file "
            "over the 100,000 that the generators of one manifest file may make (in its "
            "surveys and its programs' members); use fewer cells, or put surveys in several "
            "files.",
            13,
        )
    ]


def test_a_generator_in_a_program_counts_once_per_member(check):
    cells = "{" + ", ".join(f'c{i}: {{condition_codes: ["{i}"], share: 0.01}}' for i in range(100))
    cells += "}"
    generator = GENERATOR.replace("CELLS", cells).replace("-N", "")
    text = make_program("{from: 1, to: 11}").replace(
        "  markets:",
        "    quotas:\n"
        + generator.replace("    -", "      -", 1).replace("\n        ", "\n          ")
        + "  markets:",
    )
    state, errors, _ = check(text)
    assert [(e.summary.split(",")[0], e.location.line) for e in errors] == [
        ("These quota generators make 10", 12)  # at the template's quotas
    ]
    assert [len(state.surveys[f"tracker[en_US,{n}]"].quotas) for n in (1, 10, 11)] == [
        10_000,
        10_000,
        0,
    ]


def written_out(value: object) -> int:
    """The values of `value` written out as YAML, as the reader counts them: each mapping,
    list and scalar (keys included)."""
    held = (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.ScalarEvent)
    return sum(isinstance(event, held) for event in yaml.parse(yaml.safe_dump(value)))


EXCLUDING = (
    make_program("[w1, w2, w3]", "{en_US: {}, de_DE: {}}").replace(
        "    field_time: 7\n",
        "    field_time: 7\n"
        '    qualifications: [{qualification_code: 211, condition_codes: ["111", "112"]}]\n',
    )
    + "  exclusion: {waves: 1, exclusion_period: 30}\n"
)


def held(state) -> int:
    """What the members and groups of `state` hold, each spec as its own manifest would
    write it."""
    groups = (
        {
            "buyer_surveygroup_ref": group.buyer_surveygroup_ref,
            "name": group.group_name,
            "exclusion_period": group.exclusion_period,
            "surveys": group.surveys,
        }
        for group in state.groups.values()
    )
    surveys = (survey.body() for survey in state.surveys.values())
    return sum(map(written_out, surveys)) + sum(map(written_out, groups))


def values_bound(monkeypatch, values: int) -> None:
    """Each file's programs may make `values` values (instead of MAX_VALUES)."""

    class Bounded(manifests.Budgets):
        def of(self, file: str) -> Budget:
            return self._by_file.setdefault(file, Budget(values=values))

    monkeypatch.setattr(manifests, "Budgets", Bounded)


def test_a_program_fits_a_bound_of_exactly_what_its_surveys_and_groups_hold_written_out(
    check, monkeypatch
):
    state, errors, _ = check(EXCLUDING)
    assert errors == []
    values_bound(monkeypatch, held(state))
    state, errors, _ = check(EXCLUDING)
    assert errors == []
    assert (len(state.surveys), len(state.groups)) == (6, 4)


def test_a_program_one_value_over_the_bound_makes_nothing(check, monkeypatch):
    state, _, _ = check(EXCLUDING)
    values_bound(monkeypatch, held(state) - 1)
    state, errors, _ = check(EXCLUDING)
    assert [e.summary for e in errors] == [
        "Program 'tracker' takes the programs of its file over 1,000,000 values once expanded "
        "(their surveys and exclusion groups written out), more than a manifest file may hold; "
        "split it into smaller programs in several files."
    ]
    assert (state.surveys, state.groups) == ({}, {})


def test_a_survey_of_a_program_over_the_bound_is_an_error_at_its_market(
    check, monkeypatch, line_of
):
    text = EXCLUDING.split("  exclusion:")[0]
    state, _, _ = check(text)
    values_bound(monkeypatch, held(state) - 1)
    state, errors, _ = check(text)
    assert [(e.summary.split(" once")[0], e.location.line) for e in errors] == [
        (
            "Program 'tracker' takes the programs of its file over 1,000,000 values",
            line_of(text, "markets: {en_US: {}, de_DE: {}}"),
        )
    ]
    assert state.surveys == {}
