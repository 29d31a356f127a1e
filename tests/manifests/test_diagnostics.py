"""Diagnostics: each finding reported once, a program's shared lines included."""

from __future__ import annotations

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics

AT = Location("tracker.yaml", 14, 9)
NO_CATALOGUE = "Survey 'tracker[{}]': environment 'sandbox' has no attribute catalogue for en_UK."


def _members(diagnostics: Diagnostics, *members: str, at: Location = AT) -> None:
    for member in members:
        diagnostics.error(NO_CATALOGUE.format(member), at)


def test_the_same_finding_twice_is_reported_once():
    diagnostics = Diagnostics()
    diagnostics.error("Quota cell 'men' is empty.", AT)
    diagnostics.error("Quota cell 'men' is empty.", AT)
    assert [str(d) for d in diagnostics] == ["tracker.yaml:14:9: error: Quota cell 'men' is empty."]


def test_members_with_the_same_finding_at_one_line_are_reported_once_naming_them():
    diagnostics = Diagnostics()
    _members(diagnostics, "en_UK,w1", "en_UK,w2", "en_UK,w3")
    assert [d.summary for d in diagnostics] == [
        "Survey 'tracker[en_UK,w1]' (and 2 more members: [en_UK,w2], [en_UK,w3]): environment "
        "'sandbox' has no attribute catalogue for en_UK."
    ]
    assert diagnostics.count("error") == 1


def test_members_with_the_same_text_at_different_lines_stay_apart():
    diagnostics = Diagnostics()
    _members(diagnostics, "en_UK,w1")
    _members(diagnostics, "en_UK,w2", at=Location("tracker.yaml", 20, 9))
    assert len(diagnostics) == 2


def test_a_finding_shared_by_many_members_lists_five_and_counts_them_all():
    diagnostics = Diagnostics()
    _members(diagnostics, *(f"en_UK,w{n}" for n in range(1, 9)))
    (finding,) = diagnostics
    listed = "[en_UK,w2], [en_UK,w3], [en_UK,w4], [en_UK,w5], [en_UK,w6], ..."
    assert f"(and 7 more members: {listed})" in finding.summary
