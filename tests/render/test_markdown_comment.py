"""The pull-request comment of a plan, as a reviewer reads it: the table, the details, and
what is left out to stay under GitHub's limit."""

from __future__ import annotations

import re

from surveyctl.reconcile.plan import FieldChange, Note
from surveyctl.render import markdown

from .plans import create, delete, plan, price, spend, update


def test_a_destroy_reads_destroy_in_bold_in_the_table():
    comment = markdown.render(plan(delete("old")))
    assert "| `Survey/old` | **destroy** | – | – |" in comment


def test_a_destroy_is_a_removed_block_in_the_details():
    comment = markdown.render(plan(delete("old")))
    assert "```diff\n- Survey/old (ps_survey_id 10002) will be destroyed\n```" in comment


def test_the_details_of_twenty_changed_resources_are_open():
    comment = markdown.render(plan(*(create(f"s-{n}") for n in range(20))))
    assert "<details open><summary>Details</summary>" in comment


def test_the_details_of_more_than_twenty_changed_resources_are_collapsed():
    comment = markdown.render(plan(*(create(f"s-{n}") for n in range(21))))
    assert "<details><summary>Details</summary>" in comment
    assert "<details open>" not in comment


def test_a_plan_against_the_state_alone_says_so_above_the_summary():
    comment = markdown.render(plan(update("kept", price(2.5, 3.0)), from_state=True))
    lines = comment.splitlines()
    assert (
        lines[2] == "> **Planned against the state alone (--refresh=false): no survey was "
        "read, so changes made on the service since the last apply are not shown. Plan "
        "without it before applying.**"
    )
    assert lines[4].startswith("**Plan: 0 to add, 1 to change")


def test_a_warning_of_the_whole_plan_is_quoted_in_the_comment():
    warning = "the state of environment 'staging' is empty, so the plan creates 1 resource(s)"
    comment = markdown.render(plan(create("new"), warnings=[warning]))
    assert f"> **Warning:** {warning}" in comment


def test_a_notes_manifest_location_is_shown_after_its_message():
    note = Note("warning", "Survey/kept", "soft launch is on", "manifests/kept.yaml:3:1")
    comment = markdown.render(plan(update("kept", price(2.5, 3.0)), notes=[note]))
    assert "- warning: `Survey/kept`: soft launch is on (manifests/kept.yaml:3:1)" in comment


def test_a_drifted_resource_is_marked_drift_in_the_table():
    drifted = update("kept", price(2.5, 3.0), drift=[FieldChange("expected_ir", 40, 30)])
    comment = markdown.render(plan(drifted))
    assert "| `Survey/kept` | update (drift) | offer_price | – |" in comment


def test_drift_alone_is_shown_in_the_table_and_the_details():
    drifted = update("kept", drift=[FieldChange("expected_ir", 40, 30)])
    drifted.action = "no-op"
    comment = markdown.render(plan(drifted))
    assert "| `Survey/kept` | no change (drift) | – | – |" in comment
    assert "!   drift: expected_ir was 40 when last applied, is 30 live" in comment


def test_a_lowered_spend_is_a_negative_change_in_the_table():
    cheaper = update("kept", price(3.0, 2.5), spend=spend(600.0, 500.0))
    comment = markdown.render(plan(cheaper))
    assert "| `Survey/kept` | update | offer_price | -$100.00 |" in comment
    assert "Estimated spend: $600.00 -> $500.00 (-$100.00)." in comment


def test_resources_left_out_of_the_details_are_counted_exactly():
    body = {"survey_title": "t", "buyer_message": "m" * 2_000}
    comment = markdown.render(plan(*(create(f"s-{n:03d}", body) for n in range(100))))
    shown = len(re.findall(r"^\+ Survey/s-\d+ will be created$", comment, re.M))
    assert 0 < shown < 100
    assert f"*{100 - shown} more resource(s) are not shown" in comment


def test_errors_and_warnings_together_leave_half_the_comment_to_the_table():
    message = "exists on the service as survey 10002 (same title and locale) " + "x" * 200
    notes = [Note("error", f"Survey/s-{n:03d}", message) for n in range(300)]
    notes += [Note("warning", f"Survey/s-{n:03d}", message) for n in range(300)]
    comment = markdown.render(plan(*(create(f"s-{n:03d}") for n in range(5)), notes=notes))
    assert len(comment) <= markdown.COMMENT_LIMIT
    assert "| `Survey/s-004` | create | – | – |" in comment
    assert "more warning(s) and note(s) are not shown" in comment


def _noted(message: str) -> str:
    note = Note("warning", "Survey/kept", message)
    return markdown.render(plan(update("kept", price(2.5, 3.0)), notes=[note]))


def test_a_pipe_quoted_in_a_note_is_text_not_a_table_cell():
    assert "- warning: `Survey/kept`: title 'Brand \\| Q3' differs" in _noted(
        "title 'Brand | Q3' differs"
    )


def test_a_stray_backtick_quoted_in_a_note_opens_no_code_span():
    assert "title 'it\\`s' differs" in _noted("title 'it`s' differs")


def test_html_quoted_in_a_note_is_shown_as_text():
    comment = _noted("title '<details open><summary>x</summary>' differs")
    assert "title '\\<details open\\>\\<summary\\>x\\</summary\\>' differs" in comment


def test_a_title_holding_a_code_fence_stays_inside_its_diff_block():
    title = "Brand ``` tracker"
    comment = markdown.render(plan(update("kept", FieldChange("survey_title", "Old", title))))
    assert (
        f"````diff\n! Survey/kept (ps_survey_id 10001) will be updated (full overwrite PUT)\n"
        f'!   survey_title: "Old" -> "{title}"\n````' in comment
    )


def test_an_environment_name_with_a_terminal_escape_is_shown_escaped_in_the_heading():
    made = plan(update("kept", price(2.5, 3.0)))
    made.environment = "stag\x1b[2Jing"
    assert markdown.render(made).startswith("### surveyctl plan: `stag\\u001b[2Jing`\n")
