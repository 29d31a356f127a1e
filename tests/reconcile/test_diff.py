"""Field-level diff keyed by identity, and the classification of a survey's changes."""

from __future__ import annotations

import pytest

from surveyctl.reconcile.diff import (
    FieldChange,
    classify,
    diff_group,
    diff_survey,
    drift,
    quota_update_bodies,
)


def quota(quota_id: str, count: int, codes=("111",), **extra) -> dict:
    return {
        "buyer_quota_id": quota_id,
        "required_count": count,
        "criteria": [{"qualification_code": 211, "condition_codes": list(codes)}],
        **extra,
    }


BEFORE = {
    "survey_title": "Brand tracker",
    "offer_price": 2.5,
    "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
    "qlc": {"enable": False, "multiple_quotas": {"enable": False}},
    "quotas": [quota("male", 500, ps_quota_id="q-1"), quota("female", 500, ("112",))],
}


def paths(changes: list[FieldChange]) -> list[str]:
    return [change.path for change in changes]


def test_identical_bodies_have_no_changes_and_are_a_no_op():
    changes = diff_survey(BEFORE, dict(BEFORE, offer_price=2.50))
    assert changes == [] and classify(changes) == "no-op"


def test_noise_alone_is_no_change():
    after = dict(
        BEFORE,
        ps_survey_status=22,
        qualifications=[{"qualification_code": 211, "condition_codes": ["112", "111"]}],
        quotas=[quota("female", 500.0, ("112",)), quota("male", 500)],
    )
    assert diff_survey(BEFORE, after) == []


def test_changed_plain_field_is_reported_with_old_and_new():
    changes = diff_survey(BEFORE, dict(BEFORE, survey_title="Brand tracker 2026"))
    assert changes == [FieldChange("survey_title", "Brand tracker", "Brand tracker 2026")]


def test_quota_count_change_is_named_by_buyer_quota_id():
    after = dict(BEFORE, quotas=[quota("male", 600), quota("female", 500, ("112",))])
    changes = diff_survey(BEFORE, after)
    assert changes == [FieldChange("quotas[male].required_count", 500, 600)]


def test_added_and_removed_quotas_are_reported_whole():
    after = dict(BEFORE, quotas=[quota("male", 500), quota("female-18-34", 200)])
    changes = diff_survey(BEFORE, after)
    assert paths(changes) == ["quotas[female-18-34]", "quotas[female]"]
    added, removed = changes
    assert added.kind == "added" and added.new["required_count"] == 200
    assert removed.kind == "removed" and removed.old["buyer_quota_id"] == "female"


def test_condition_codes_change_is_reported_as_the_whole_list():
    after = dict(BEFORE, qualifications=[{"qualification_code": 211, "condition_codes": ["111"]}])
    assert diff_survey(BEFORE, after) == [
        FieldChange("qualifications[211].condition_codes", ["111", "112"], ["111"])
    ]


def test_criteria_change_is_named_by_qualification_code():
    after = dict(BEFORE, quotas=[quota("male", 500, ("111", "113")), BEFORE["quotas"][1]])
    assert paths(diff_survey(BEFORE, after)) == ["quotas[male].criteria[211].condition_codes"]


def test_nested_object_changes_are_reported_field_by_field():
    after = dict(BEFORE, qlc={"enable": True, "multiple_quotas": {"enable": True}})
    assert diff_survey(BEFORE, after) == [
        FieldChange("qlc.enable", None, True),
        FieldChange("qlc.multiple_quotas.enable", None, True),
    ]


def test_boolean_and_number_are_different_values():
    assert diff_survey({"quota_throttling": True}, {"quota_throttling": 1}) != []


def test_boolean_and_number_differ_inside_nested_objects_too():
    before = {"qlc": {"enable": True, "multiple_quotas": {"enable": True}}}
    after = {"qlc": {"enable": True, "multiple_quotas": {"enable": 1}}}
    assert [c.path for c in diff_survey(before, after)] == ["qlc.multiple_quotas.enable"]


def test_changes_are_sorted_in_the_api_field_order():
    after = dict(
        BEFORE,
        survey_title="New",
        offer_price=3.0,
        quotas=[quota("male", 1), quota("female", 2, ("112",))],
        buyer_message="hello",
    )
    assert paths(diff_survey(BEFORE, after)) == [
        "survey_title",
        "offer_price",
        "buyer_message",
        "quotas[female].required_count",
        "quotas[male].required_count",
    ]


def test_removed_field_has_new_none():
    (change,) = diff_survey(BEFORE, {k: v for k, v in BEFORE.items() if k != "offer_price"})
    assert change == FieldChange("offer_price", 2.5, None) and change.kind == "removed"


def test_only_required_count_and_criteria_changes_are_a_quota_update():
    after = dict(BEFORE, quotas=[quota("male", 600, ("111", "113")), quota("female", 1, ("112",))])
    assert classify(diff_survey(BEFORE, after)) == "quota-update"


def test_added_quota_needs_a_full_update():
    after = dict(BEFORE, quotas=[*BEFORE["quotas"], quota("other", 5)])
    assert classify(diff_survey(BEFORE, after)) == "update"


def test_quota_title_change_needs_a_full_update():
    after = dict(BEFORE, quotas=[quota("male", 500, quota_title="Men"), BEFORE["quotas"][1]])
    assert classify(diff_survey(BEFORE, after)) == "update"


def test_quota_change_together_with_another_field_needs_a_full_update():
    after = dict(BEFORE, survey_title="New", quotas=[quota("male", 9), BEFORE["quotas"][1]])
    assert classify(diff_survey(BEFORE, after)) == "update"


def test_quota_update_bodies_carry_count_and_criteria_of_each_changed_quota():
    after = dict(BEFORE, quotas=[quota("male", 600), quota("female", 500, ("112",))])
    bodies = quota_update_bodies(after, diff_survey(BEFORE, after))
    assert bodies == {
        "male": {
            "required_count": 600,
            "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        }
    }


def test_quota_update_bodies_refuse_changes_that_need_a_full_update():
    after = dict(BEFORE, survey_title="New")
    with pytest.raises(ValueError, match="full update"):
        quota_update_bodies(after, diff_survey(BEFORE, after))


def test_drift_lists_managed_fields_changed_outside_surveyctl():
    last_applied = {"survey_title": "Brand tracker", "offer_price": 2.5}
    live = dict(BEFORE, offer_price=3.0, buyer_message="set by hand")
    assert drift(live, last_applied) == [FieldChange("offer_price", 2.5, 3.0)]


def test_no_drift_without_a_last_applied_body():
    assert drift(BEFORE, None) == []


def test_group_diff_ignores_survey_order_and_names_changes():
    before = {"buyer_surveygroup_ref": "g", "name": "G", "surveys_in_group": [2, 1]}
    assert diff_group(before, dict(before, surveys_in_group=[1, 2])) == []
    assert diff_group(before, dict(before, surveys_in_group=[1, 2, 3])) == [
        FieldChange("surveys_in_group", [1, 2], [1, 2, 3])
    ]
