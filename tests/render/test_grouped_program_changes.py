"""A change made alike to many members of a program, shown once with its member list."""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import FieldChange, ResourceChange
from surveyctl.render import json as json_format
from surveyctl.render import markdown, text

from .plans import plan, price, spend, update

MEMBERS = ["tracker[en_GB,w1]", "tracker[en_GB,w2]", "tracker[de_DE,w1]"]


def _members(*changes: FieldChange, **fields) -> list[ResourceChange]:
    return [update(name, *changes, remote_id=10001 + n, **fields) for n, name in enumerate(MEMBERS)]


def test_a_headline_names_three_changes_and_counts_the_rest():
    changes = [FieldChange(field, 1, 2) for field in ("a", "b", "c", "d")]
    shown = text.render(plan(*_members(*changes)))
    assert "~ 3 surveys of program tracker: a 1 -> 2, b 1 -> 2, c 1 -> 2, and 1 more changes\n" in (
        shown
    )


def test_a_headline_of_three_changes_names_them_all():
    changes = [FieldChange(field, 1, 2) for field in ("a", "b", "c")]
    shown = text.render(plan(*_members(*changes)))
    assert "~ 3 surveys of program tracker: a 1 -> 2, b 1 -> 2, c 1 -> 2\n" in shown


def test_the_drift_of_one_member_of_a_group_is_shown_under_that_member():
    members = _members(price(2.5, 2.75))
    members[0].drift = [FieldChange("expected_ir", 40, 30)]
    shown = text.render(plan(*members))
    assert (
        "~ 3 surveys of program tracker: offer_price 2.5 -> 2.75\n"
        "    ~ offer_price: 2.5 -> 2.75\n"
        "      members en_GB: w1, w2\n"
        "      members de_DE: w1\n"
        "    ! Survey/tracker[en_GB,w1] (ps_survey_id 10001): drift expected_ir was 40 when last "
        "applied, is 30 live\n"
        "        ! drift: expected_ir was 40 when last applied, is 30 live\n"
    ) in shown


def test_the_members_of_a_group_are_listed_by_market_in_text():
    shown = text.render(plan(*_members(price(2.5, 2.75))))
    assert "      members en_GB: w1, w2\n      members de_DE: w1\n" in shown


def test_a_group_of_exclusion_groups_is_named_so():
    groups = [
        ResourceChange(
            "ExclusionGroup",
            name,
            "update",
            remote_id=f"ref-{n}",
            changes=[FieldChange("exclusion_period", 30, 60)],
        )
        for n, name in enumerate(MEMBERS)
    ]
    shown = text.render(plan(*groups))
    assert "~ 3 exclusion groups of program tracker: exclusion_period 30 -> 60\n" in shown


def test_a_groups_spend_is_the_sum_of_its_members():
    shown = text.render(plan(*_members(price(2.5, 2.75), spend=spend(500.0, 550.0))))
    assert "~ 3 surveys of program tracker: offer_price 2.5 -> 2.75 (+$150.00)\n" in shown


def test_the_markdown_table_names_the_fields_a_group_changes():
    changes = [FieldChange("quotas[male].required_count", 100, 120), price(2.5, 2.75)]
    comment = markdown.render(plan(*_members(*changes)))
    assert "| program `tracker` (3 surveys) | update | quotas, offer_price | – |" in comment


def test_the_markdown_member_list_names_every_member():
    comment = markdown.render(plan(*_members(price(2.5, 2.75))))
    assert (
        "<details><summary>3 members</summary>\n\n"
        + "\n".join(f"- `Survey/{name}`" for name in MEMBERS)
        in comment
    )


def test_the_json_group_counts_and_lists_every_member():
    data = json.loads(json_format.render(plan(*_members(price(2.5, 2.75)))))
    (group,) = data["program_groups"]
    assert group["count"] == 3
    assert group["members"] == [f"Survey/{name}" for name in MEMBERS]
    assert group["changes"] == ["offer_price: 2.5 -> 2.75"]


def test_a_change_of_one_member_alone_is_shown_as_that_member():
    alone = update(MEMBERS[0], price(2.5, 2.75))
    other = update(MEMBERS[1], price(2.5, 3.0), remote_id=10002)
    shown = text.render(plan(alone, other))
    assert "of program" not in shown
    assert "~ Survey/tracker[en_GB,w1] (ps_survey_id 10001) will be updated" in shown


def test_a_group_is_one_row_and_one_block_of_the_comment():
    comment = markdown.render(plan(*_members(price(2.5, 2.75))))
    assert comment.count("| program `tracker` (3 surveys) |") == 1
    assert comment.count("```diff\n! 3 surveys of program tracker") == 1
