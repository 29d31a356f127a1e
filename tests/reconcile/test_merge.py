"""The three-way merge: what the manifest says wins, what it never said is kept."""

from __future__ import annotations

import copy

from surveyctl.reconcile.merge import merge_group, merge_survey

LIVE = {
    "ps_survey_id": 4711,
    "ps_survey_status": 22,
    "survey_title": "Brand tracker",
    "completes_required": 1000,
    "offer_price": 2.5,
    "test_url": "https://survey.example.com/test",
    "buyer_message": "Call Ann before closing",  # set by a direct API call
    "subscriber_emails": ["ann@example.com"],
    "buyer_surveygroup_ref": "trackers-2026",
    "buyer_surveygroup_refs": ["trackers-2026"],
    "quotas": [
        {"buyer_quota_id": "male", "ps_quota_id": "q-1", "required_count": 500, "criteria": []},
        {"buyer_quota_id": "female", "ps_quota_id": "q-2", "required_count": 500, "criteria": []},
    ],
}
LAST_APPLIED = {
    "survey_title": "Brand tracker",
    "completes_required": 1000,
    "offer_price": 2.5,
    "test_url": "https://survey.example.com/test",
    "quotas": [
        {"buyer_quota_id": "male", "required_count": 500, "criteria": []},
        {"buyer_quota_id": "female", "required_count": 500, "criteria": []},
    ],
}
DESIRED = {
    "survey_title": "Brand tracker 2026",
    "completes_required": 1000,
    "offer_price": 2.5,
    "quotas": [{"buyer_quota_id": "male", "required_count": 1000, "criteria": []}],
}


def test_full_body_keeps_outside_fields_resets_dropped_ones_and_carries_group_refs():
    body = merge_survey(LIVE, DESIRED, LAST_APPLIED, ignore_changes=["offer_price"])
    assert body == {
        "survey_title": "Brand tracker 2026",  # the manifest's value
        "completes_required": 1000,
        "offer_price": 2.5,  # ignored change: the live value
        "subscriber_emails": ["ann@example.com"],  # never managed: kept
        "buyer_message": "Call Ann before closing",  # never managed: kept
        "quotas": [{"buyer_quota_id": "male", "required_count": 1000, "criteria": []}],
        "buyer_surveygroup_ref": "trackers-2026",  # membership carried over
        "buyer_surveygroup_refs": ["trackers-2026"],
    }  # and test_url, dropped from the manifest since the last apply, is reset (absent)


def test_field_set_outside_surveyctl_is_kept():
    body = merge_survey(LIVE, DESIRED, LAST_APPLIED)
    assert body["buyer_message"] == "Call Ann before closing"


def test_field_dropped_from_the_manifest_since_last_apply_is_reset():
    assert "test_url" not in merge_survey(LIVE, DESIRED, LAST_APPLIED)


def test_without_last_applied_a_field_absent_from_the_manifest_keeps_its_live_value():
    assert merge_survey(LIVE, DESIRED, None)["test_url"] == "https://survey.example.com/test"


def test_manifest_value_wins_over_live():
    live = dict(LIVE, survey_title="Renamed by hand")
    assert merge_survey(live, DESIRED, LAST_APPLIED)["survey_title"] == "Brand tracker 2026"


def test_quota_list_of_the_manifest_replaces_the_live_list_whole():
    quotas = merge_survey(LIVE, DESIRED, LAST_APPLIED)["quotas"]
    assert quotas == DESIRED["quotas"]


def test_group_membership_is_carried_over_even_if_the_manifest_names_another_group():
    desired = dict(DESIRED, buyer_surveygroup_refs=["other"], buyer_surveygroup_ref="other")
    body = merge_survey(LIVE, desired, LAST_APPLIED)
    assert body["buyer_surveygroup_refs"] == ["trackers-2026"]
    assert body["buyer_surveygroup_ref"] == "trackers-2026"


def test_ignore_changes_keeps_the_live_value_even_against_the_manifest():
    desired = dict(DESIRED, offer_price=9.99)
    assert (
        merge_survey(LIVE, desired, LAST_APPLIED, ignore_changes=["offer_price"])["offer_price"]
        == 2.5
    )


def test_ignore_changes_of_a_field_absent_live_leaves_it_absent():
    desired = dict(DESIRED, buyer_message=None, blend_id="b-1")
    body = merge_survey(LIVE, desired, LAST_APPLIED, ignore_changes=["blend_id"])
    assert "blend_id" not in body


def test_body_never_carries_response_only_fields():
    body = merge_survey(LIVE, DESIRED, LAST_APPLIED)
    assert "ps_survey_id" not in body and "ps_survey_status" not in body
    assert all("ps_quota_id" not in quota for quota in merge_survey(LIVE, {}, None)["quotas"])


def test_merge_does_not_modify_its_inputs():
    live, desired, last = copy.deepcopy(LIVE), copy.deepcopy(DESIRED), copy.deepcopy(LAST_APPLIED)
    body = merge_survey(live, desired, last)
    body["quotas"][0]["required_count"] = 1
    assert (live, desired, last) == (LIVE, DESIRED, LAST_APPLIED)


def test_body_follows_the_api_field_order():
    body = merge_survey(LIVE, DESIRED, LAST_APPLIED)
    assert list(body)[:3] == ["survey_title", "completes_required", "offer_price"]


def test_group_merge_follows_the_same_rules():
    live = {
        "buyer_surveygroup_ref": "trackers-2026",
        "name": "Trackers (renamed by hand)",
        "surveys_in_group": [1, 2],
        "exclusion_period": 30,
    }
    desired = {"buyer_surveygroup_ref": "trackers-2026", "surveys_in_group": [1, 2, 3]}
    last = {
        "buyer_surveygroup_ref": "trackers-2026",
        "surveys_in_group": [1, 2],
        "exclusion_period": 30,
    }
    assert merge_group(live, desired, last) == {
        "buyer_surveygroup_ref": "trackers-2026",
        "name": "Trackers (renamed by hand)",  # never managed: kept
        "surveys_in_group": [1, 2, 3],
    }  # exclusion_period dropped from the manifest: reset
