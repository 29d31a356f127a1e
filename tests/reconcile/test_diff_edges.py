"""The diff at its edges: a body whose every field changed, a nested object removed whole, an
added quota shown in API form, and unchanged surveys compared without the slow deep walk."""

from __future__ import annotations

import pytest

from surveyctl.reconcile import diff
from surveyctl.reconcile.diff import (
    FieldChange,
    diff_group,
    diff_survey,
    group_drift,
    quota_update_bodies,
)

SURVEY = {
    "survey_title": "Brand tracker",
    "offer_price": 2.5,
    "subscriber_emails": ["ann@example.com", "bob@example.com"],
    "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
    "qlc": {"enable": True, "multiple_quotas": {"enable": True}},
    "quotas": [
        {
            "buyer_quota_id": "male",
            "required_count": 100,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        }
    ],
}


def test_a_change_of_every_field_of_a_body_is_seen():
    assert diff_survey({"survey_title": "A"}, {"survey_title": "B"}) == [
        FieldChange("survey_title", "A", "B")
    ]


def test_a_nested_object_removed_whole_is_reported_field_by_field_as_removed():
    after = {name: value for name, value in SURVEY.items() if name != "qlc"}
    assert diff_survey(SURVEY, after) == [
        FieldChange("qlc.enable", True, None),
        FieldChange("qlc.multiple_quotas.enable", True, None),
    ]


def test_an_added_quota_is_shown_whole_with_its_criteria_as_a_list():
    female = {
        "buyer_quota_id": "female",
        "required_count": 100,
        "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}],
    }
    after = dict(SURVEY, quotas=[*SURVEY["quotas"], female])
    [added] = diff_survey(SURVEY, after)
    assert added.path == "quotas[female]" and added.old is None
    assert added.new == female


def test_unchanged_bodies_are_compared_without_the_deep_walk(monkeypatch):
    # A plan of a thousand surveys is mostly no-ops: they must not pay for DeepDiff.
    def no_deep_walk(*args, **kwargs):
        raise AssertionError("DeepDiff walked two identical bodies")

    monkeypatch.setattr(diff, "DeepDiff", no_deep_walk)
    same = {**SURVEY, "offer_price": 2.50, "quotas": [dict(SURVEY["quotas"][0])]}
    assert diff_survey(SURVEY, same) == []
    group = {"buyer_surveygroup_ref": "g", "surveys_in_group": [2, 1], "exclusion_period": 30}
    assert diff_group(group, dict(group, surveys_in_group=[1, 2])) == []


def test_per_quota_bodies_of_a_change_that_needs_a_full_update_are_refused_saying_so():
    changes = diff_survey({"survey_title": "A"}, {"survey_title": "B"})
    with pytest.raises(ValueError, match="^these changes need a full update, not per-quota"):
        quota_update_bodies({"survey_title": "B"}, changes)


class TestGroupDrift:
    APPLIED = {"buyer_surveygroup_ref": "g", "surveys_in_group": [1, 2], "exclusion_period": 30}

    def test_a_managed_group_field_changed_live_is_drift(self):
        live = {**self.APPLIED, "exclusion_period": "45", "name": "set by hand"}
        assert group_drift(live, self.APPLIED) == [FieldChange("exclusion_period", 30, 45)]

    def test_a_managed_group_field_gone_live_is_drift_removed(self):
        live = {"buyer_surveygroup_ref": "g", "surveys_in_group": [2, 1]}
        assert group_drift(live, self.APPLIED) == [FieldChange("exclusion_period", 30, None)]

    def test_a_group_never_applied_has_no_drift(self):
        assert group_drift({"buyer_surveygroup_ref": "g", "exclusion_period": 9}, None) == []
