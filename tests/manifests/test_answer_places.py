"""An unknown answer is pointed at where it is written, not at the start of its qualification,
validated against the sandbox's catalogue over HTTP."""

from __future__ import annotations

import pytest

from surveyctl.catalog import Catalog
from surveyctl.manifests import load_manifests
from surveyctl.manifests.cache import ParsedCache


@pytest.fixture
def unknown_answers(api, write, tmp_path):
    """unknown_answers(text, cache=None) -> the places (line, column) of the errors of
    unknown answers in `text`, validated against the sandbox catalogue."""
    catalog = Catalog(lambda: api, "local", tmp_path / "cache")

    def _places(text: str, cache: ParsedCache | None = None) -> list[tuple[int, int]]:
        _, diagnostics = load_manifests([write("m.yaml", text)], catalog, cache)
        return [
            (d.location.line, d.location.column)
            for d in diagnostics.sorted()
            if "has no answer" in d.summary
        ]

    return _places


def _place(text: str, needle: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(needle)


def test_an_unknown_answer_in_a_flow_list_is_pointed_at_itself(unknown_answers, survey_yaml):
    text = survey_yaml("qualifications:\n  - {attribute: Gender, answers: [Male, Femal]}\n")
    assert unknown_answers(text) == [_place(text, "Femal")]


def test_an_unknown_answer_in_a_block_list_is_pointed_at_its_line(unknown_answers, survey_yaml):
    text = survey_yaml(
        "qualifications:\n  - attribute: Gender\n    answers:\n      - Male\n      - Femal\n"
    )
    assert unknown_answers(text) == [_place(text, "Femal")]


def test_two_unknown_answers_are_each_pointed_at(unknown_answers, survey_yaml):
    text = survey_yaml("qualifications:\n  - {attribute: Gender, answers: [Mael, Femal]}\n")
    assert unknown_answers(text) == [_place(text, "Mael"), _place(text, "Femal")]


def test_an_unknown_answer_read_from_the_cache_is_pointed_at_itself(
    unknown_answers, survey_yaml, tmp_path
):
    text = survey_yaml("qualifications:\n  - {attribute: Gender, answers: [Male, Femal]}\n")
    cache = ParsedCache.at(tmp_path / "parsed")
    unknown_answers(text, cache)  # the first read fills the cache
    assert any((tmp_path / "parsed").iterdir())
    assert unknown_answers(text, cache) == [_place(text, "Femal")]
