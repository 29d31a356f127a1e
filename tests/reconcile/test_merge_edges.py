"""The three-way merge at its edges: falsy manifest values, fields absent on one side, an
ignored field of a group, and the order of fields the API does not list."""

from __future__ import annotations

import pytest

from surveyctl.reconcile.merge import merge_group, merge_survey

LIVE = {
    "ps_survey_id": 4711,
    "survey_title": "Brand tracker",
    "completes_required": 1000,
    "offer_price": 2.5,
    "buyer_message": "Call Ann",
    "survey_pause_threshold": 40,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [("quota_throttling", False), ("survey_pause_threshold", 0), ("buyer_message", "")],
    ids=["false", "zero", "empty-text"],
)
def test_a_falsy_manifest_value_is_sent_not_dropped(field, value):
    body = merge_survey(LIVE, {"survey_title": "Brand tracker", field: value}, None)
    assert field in body and body[field] == value and type(body[field]) is type(value)


def test_a_field_dropped_from_the_manifest_is_reset_even_when_live_still_has_it():
    body = merge_survey(LIVE, {"survey_title": "T"}, {"survey_title": "T", "buyer_message": "x"})
    assert "buyer_message" not in body
    assert body["offer_price"] == 2.5  # never managed: kept


def test_a_field_dropped_from_the_manifest_and_already_gone_live_stays_absent():
    body = merge_survey(LIVE, {"survey_title": "T"}, {"survey_title": "T", "test_url": "x"})
    assert "test_url" not in body


def test_a_manifest_null_for_a_field_live_lacks_leaves_it_absent():
    body = merge_survey(LIVE, {"survey_title": "T", "test_url": None}, None)
    assert "test_url" not in body and body["survey_title"] == "T"


def test_a_manifest_null_clears_a_field_set_live():
    body = merge_survey(LIVE, {"survey_title": "T", "buyer_message": None}, None)
    assert "buyer_message" not in body and body["offer_price"] == 2.5


def test_ignore_changes_of_a_field_set_nowhere_leaves_it_absent():
    body = merge_survey(LIVE, {"survey_title": "T"}, None, ignore_changes=["test_url"])
    assert "test_url" not in body


def test_a_survey_in_no_group_gets_no_group_fields():
    body = merge_survey(LIVE, {"survey_title": "T"}, None)
    assert "buyer_surveygroup_ref" not in body and "buyer_surveygroup_refs" not in body


class TestGroupIgnoreChanges:
    LIVE_GROUP = {
        "buyer_surveygroup_ref": "trackers",
        "name": "Trackers (renamed by hand)",
        "surveys_in_group": [1, 2],
        "exclusion_period": 30,
    }

    def test_an_ignored_group_field_keeps_its_live_value_against_the_manifest(self):
        desired = {"buyer_surveygroup_ref": "trackers", "name": "Trackers", "surveys_in_group": [1]}
        body = merge_group(self.LIVE_GROUP, desired, desired, ignore_changes=["name"])
        assert body["name"] == "Trackers (renamed by hand)"
        assert body["surveys_in_group"] == [1]

    def test_an_ignored_group_field_absent_live_stays_absent(self):
        live = {k: v for k, v in self.LIVE_GROUP.items() if k != "exclusion_period"}
        desired = {"buyer_surveygroup_ref": "trackers", "exclusion_period": 60}
        body = merge_group(live, desired, None, ignore_changes=["exclusion_period"])
        assert "exclusion_period" not in body


def test_fields_the_api_does_not_list_come_after_its_own_sorted_by_name():
    body = merge_survey(LIVE, {"zeta_extra": 1, "alpha_extra": 2, "survey_title": "T"}, None)
    assert list(body)[-2:] == ["alpha_extra", "zeta_extra"]
    assert list(body)[0] == "survey_title"
