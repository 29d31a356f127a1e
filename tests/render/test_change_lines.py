"""One line per changed field: `+` added, `-` removed, `~` changed, values shown as written."""

from __future__ import annotations

from surveyctl.reconcile.plan import FieldChange, ResourceChange
from surveyctl.render import text

from .plans import plan, price, spend, update


def _shown(*changes: FieldChange, **fields) -> list[str]:
    return text.render(plan(update("kept", *changes, **fields))).splitlines()


def test_a_field_the_manifest_adds_is_an_added_line():
    assert '    + buyer_message: "Thanks"' in _shown(FieldChange("buyer_message", None, "Thanks"))


def test_a_field_the_manifest_drops_is_a_removed_line():
    assert '    - buyer_message: "Thanks"' in _shown(FieldChange("buyer_message", "Thanks", None))


def test_a_changed_value_shows_old_and_new():
    assert "    ~ offer_price: 2.5 -> 3.0" in _shown(price(2.5, 3.0))


def test_a_field_set_outside_surveyctl_was_absent_when_last_applied():
    drifted = update("kept", drift=[FieldChange("buyer_message", None, "Hi")])
    assert '    ! drift: buyer_message was (absent) when last applied, is "Hi" live' in (
        text.render(plan(drifted)).splitlines()
    )


def test_a_survey_update_shows_its_spend_before_and_after():
    assert "      spend: $500.00 -> $600.00" in _shown(price(2.5, 3.0), spend=spend(500.0, 600.0))


def test_one_quota_put_is_said_in_the_singular():
    one = ResourceChange(
        "Survey",
        "kept",
        "quota-update",
        remote_id=10001,
        quota_updates={"male": {"required_count": 120}},
        changes=[FieldChange("quotas[male].required_count", 100, 120)],
    )
    shown = text.render(plan(one))
    assert "~ Survey/kept (ps_survey_id 10001) quotas will be updated (1 quota PUT)" in shown


def test_a_long_quota_title_is_cut_at_120_characters():
    quota = {"required_count": 100, "quota_title": "x" * 200}
    shown = _shown(FieldChange("quotas[men]", None, quota))
    assert f'    + quotas[men]: 100 completes; title "{"x" * 116}...' in shown


def test_a_value_longer_than_120_characters_is_shown_whole_in_a_change():
    old = {"note": "x" * 200}
    shown = _shown(FieldChange("qbp", old, {"note": "y"}))
    assert f'    ~ qbp: {{"note": "{"x" * 200}"}} -> {{"note": "y"}}' in shown


def test_a_title_in_another_script_is_shown_as_written():
    assert '    ~ survey_title: "Marken-Tracker" -> "ブランド調査 – Q3"' in _shown(
        FieldChange("survey_title", "Marken-Tracker", "ブランド調査 – Q3")
    )


def test_a_long_list_of_answers_shows_what_was_added_and_removed():
    old = [str(code) for code in range(100, 112)]
    new = [str(code) for code in range(101, 110)] + ["200"]
    change = FieldChange("qualifications[211].condition_codes", old, new)
    assert (
        "    ~ qualifications[211].condition_codes: 12 answers -> 10 answers "
        "(added: 200; removed: 100, 110, 111)"
    ) in _shown(change)


def test_answers_of_twenty_in_all_are_listed_both_sides():
    old = [str(code) for code in range(100, 110)]
    new = [str(code) for code in range(101, 111)]
    change = FieldChange("qualifications[211].condition_codes", old, new)
    assert f"    ~ qualifications[211].condition_codes: {', '.join(old)} -> {', '.join(new)}" in (
        _shown(change)
    )
