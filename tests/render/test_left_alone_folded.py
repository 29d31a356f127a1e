"""Resources no manifest names any more, left alone by a plan without --destroy: one warning
for them all in the text and markdown plans, naming them kind by kind; the JSON plan keeps one
warning per resource."""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import LEFT_ALONE, Note, ResourceChange
from surveyctl.render import json as json_format
from surveyctl.render import markdown, text

from .plans import plan


def _kept(address: str) -> ResourceChange:
    kind, name = address.split("/", 1)
    return ResourceChange(kind, name, "no-op", remote_id=10001)


def _left_alone(*addresses: str, notes: list[Note] | None = None):
    """A plan that leaves `addresses` alone, each warned of as the planner warns of it."""
    warned = [Note("warning", address, LEFT_ALONE) for address in addresses]
    return plan(
        *(_kept(address) for address in addresses),
        kept=sorted(addresses),
        notes=[*(notes or []), *warned],
    )


def _warnings(shown: str) -> list[str]:
    return [line for line in shown.splitlines() if line.startswith("  warning:")]


def test_surveys_left_alone_are_one_warning_naming_how_many_and_each_one():
    shown = text.render(_left_alone("Survey/alpha", "Survey/bravo", "Survey/charlie"))
    assert _warnings(shown) == [
        "  warning: 3 managed resources are no longer in the manifests (3 surveys: alpha, "
        "bravo, charlie); each is left alone (plan with --destroy to delete them, or "
        "`surveyctl state rm ADDRESS` to stop managing one)"
    ]


def test_one_survey_left_alone_keeps_its_own_warning():
    shown = text.render(_left_alone("Survey/alpha"))
    assert _warnings(shown) == [f"  warning: Survey/alpha: {LEFT_ALONE}"]


def test_surveys_and_groups_left_alone_are_named_kind_by_kind():
    shown = text.render(_left_alone("Survey/alpha", "Survey/bravo", "ExclusionGroup/trackers"))
    assert "(2 surveys: alpha, bravo; 1 exclusion group: trackers)" in shown


def test_a_text_plan_names_every_one_of_a_hundred_surveys_left_alone():
    names = [f"s{index:03}" for index in range(100)]
    shown = text.render(_left_alone(*(f"Survey/{name}" for name in names)))
    (warning,) = _warnings(shown)
    assert f"(100 surveys: {', '.join(names)});" in warning


def test_a_comment_names_twenty_surveys_left_alone_and_counts_the_rest():
    shown = markdown.render(_left_alone(*(f"Survey/s{index:03}" for index in range(100))))
    (warning,) = [line for line in shown.splitlines() if "no longer in the manifests" in line]
    named = ", ".join(f"s{index:03}" for index in range(20))
    assert f"(100 surveys: {named} and 80 more, named in the text plan);" in warning


def test_the_json_plan_keeps_a_warning_for_each_survey_left_alone():
    data = json.loads(json_format.render(_left_alone("Survey/alpha", "Survey/bravo")))
    assert [(n["address"], n["message"]) for n in data["notes"]] == [
        ("Survey/alpha", LEFT_ALONE),
        ("Survey/bravo", LEFT_ALONE),
    ]


def test_the_warning_of_surveys_left_alone_is_listed_where_the_first_of_them_was():
    before = Note("note", "Survey/new", "soft launch is on")
    made = _left_alone("Survey/alpha", "Survey/bravo", notes=[before])
    made.notes.append(Note("note", "Survey/other", "quota flexibility is on"))
    shown = text.render(made).split("Notes:\n", 1)[1].splitlines()
    assert [line.split(":", 2)[1].strip() for line in shown[:3]] == [
        "Survey/new",
        "2 managed resources are no longer in the manifests (2 surveys",
        "Survey/other",
    ]


def test_a_survey_left_alone_that_cannot_be_read_keeps_the_warning_of_its_read():
    unreadable = Note("warning", "Survey/alpha", "no longer in the manifests; cannot read it: 503")
    shown = text.render(_left_alone("Survey/alpha", "Survey/bravo", notes=[unreadable]))
    assert "  warning: Survey/alpha: no longer in the manifests; cannot read it: 503" in shown
    assert len(_warnings(shown)) == 2
