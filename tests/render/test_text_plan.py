"""The text plan and its summary line, as a terminal or a CI log shows them."""

from __future__ import annotations

from surveyctl.reconcile.plan import FieldChange, Note, ResourceChange
from surveyctl.render import text

from .plans import create, delete, plan, price, spend, update


def test_a_destroy_is_red_on_a_colour_terminal():
    shown = text.render(plan(delete("old")), color=True)
    assert "\033[31m- Survey/old (ps_survey_id 10002) will be destroyed\033[0m" in shown


def test_a_create_is_green_and_an_update_yellow_on_a_colour_terminal():
    shown = text.render(plan(create("new"), update("kept", price(2.5, 3.0))), color=True)
    assert "\033[32m+ Survey/new will be created\033[0m" in shown
    assert "\033[33m~ Survey/kept (ps_survey_id 10001) will be updated" in shown


def test_a_notes_manifest_location_is_shown_after_its_message():
    note = Note("warning", "Survey/kept", "soft launch is on", "manifests/kept.yaml:3:1")
    shown = text.render(plan(update("kept", price(2.5, 3.0)), notes=[note]))
    assert "  warning: Survey/kept: soft launch is on (manifests/kept.yaml:3:1)\n" in shown


def test_a_plan_of_no_survey_spend_names_no_estimated_spend():
    group = ResourceChange(
        "ExclusionGroup",
        "trackers",
        "update",
        remote_id="ref-1",
        changes=[FieldChange("exclusion_period", 30, 60)],
    )
    line = text.summary_line(plan(group))
    assert line == "Plan: 0 to add, 1 to change, 0 to destroy."


def test_an_unchanged_spend_is_said_once():
    line = text.summary_line(
        plan(update("kept", FieldChange("expected_ir", 40, 30), spend=spend(500.0, 500.0)))
    )
    assert line.endswith(" Estimated spend: $500.00 (unchanged).")


def test_a_lowered_spend_is_said_with_a_minus():
    line = text.summary_line(plan(update("kept", price(3.0, 2.5), spend=spend(600.0, 500.0))))
    assert line.endswith(" Estimated spend: $600.00 -> $500.00 (-$100.00).")


def test_a_create_left_unchecked_is_not_also_counted_as_unread():
    line = text.summary_line(plan(unread=["Survey/new"], unchecked=["Survey/new"]))
    assert "could not be read" not in line
    assert (
        "1 create is left out: whether it exists on the service already could not be "
        "checked (see the notes)." in line
    )


def test_a_gone_resource_under_destroy_is_forgotten_by_apply_destroy():
    line = text.summary_line(plan(gone=["Survey/old"], destroy=True))
    assert (
        "1 managed resource is gone from the marketplace; `surveyctl apply --destroy` "
        "forgets it." in line
    )


def test_drift_in_a_refresh_is_not_also_offered_to_apply():
    drifted = update("kept", drift=[FieldChange("offer_price", 2.5, 4)])
    drifted.action = "no-op"
    line = text.summary_line(plan(drifted, refresh_only=True))
    assert line == (
        "Refresh: 1 resource changed outside surveyctl; `surveyctl apply --refresh-only` "
        "records their live values as last applied."
    )


def test_a_refresh_without_drift_ends_the_sentence():
    line = text.summary_line(plan(update("kept"), refresh_only=True, unread=["Survey/x"]))
    assert line.startswith("Refresh: 0 resources changed outside surveyctl. 1 managed")


def test_drift_alone_is_shown_with_the_resource():
    drifted = update("kept", drift=[FieldChange("expected_ir", 40, 30)])
    drifted.action = "no-op"
    shown = text.render(plan(drifted))
    assert "    ! drift: expected_ir was 40 when last applied, is 30 live\n" in shown


def test_drift_beside_a_resource_apply_leaves_alone_names_only_refresh_only():
    changed = update("kept", price(2.5, 3.0), drift=[FieldChange("expected_ir", 40, 30)])
    alone = update("other", drift=[FieldChange("expected_ir", 40, 30)], remote_id=10003)
    alone.action = "no-op"
    line = text.summary_line(plan(changed, alone))
    assert (
        "2 resources changed outside surveyctl since the last apply (! drift); "
        "`surveyctl apply --refresh-only` accepts the live values." in line
    )


def test_one_kept_resource_is_it_and_several_are_they():
    assert (
        "1 managed resource is not in the manifests; it is kept, use --destroy to delete "
        "it." in text.summary_line(plan(kept=["Survey/a"]))
    )
    assert (
        "2 managed resources are not in the manifests; they are kept, use --destroy to "
        "delete them." in text.summary_line(plan(kept=["Survey/a", "Survey/b"]))
    )


def test_an_error_is_counted_in_the_summary():
    note = Note("error", "Survey/new", "exists on the service")
    assert text.summary_line(plan(create("new"), notes=[note])).endswith(
        "The plan has 1 error; apply refuses it."
    )


def test_retired_program_members_are_counted_in_the_summary():
    line = text.summary_line(plan(retired=["Survey/tracker[en_GB,w1]"]))
    assert "1 retired program member is kept (see the notes)." in line


def test_a_grouped_change_is_shown_once():
    members = [
        update(f"tracker[en_GB,w{n}]", price(2.5, 2.75), remote_id=10001 + n) for n in range(3)
    ]
    shown = text.render(plan(*members))
    assert shown.count("offer_price 2.5 -> 2.75") == 1
