"""Normalisation at its edges: numbers the service spells as text, text that only looks like a
number, falsy values outside qlc, and what an update body must not share or lose."""

from __future__ import annotations

import copy

import pytest

from surveyctl.reconcile.diff import FieldChange, diff_group, diff_survey
from surveyctl.reconcile.merge import merge_survey
from surveyctl.reconcile.normalise import group_update_body, normalise_survey, update_body

SCHEDULE_AS_TEXT = {
    "enable": True,
    "info": [
        {
            "timezone": "UTC",
            "days": ["1", "2"],
            "start_time": "10:00:00.000Z",
            "duration": {"days": "1", "hours": "2", "minutes": "30"},
        }
    ],
}
SCHEDULE = {
    "enable": True,
    "info": [
        {
            "timezone": "UTC",
            "days": [1.0, 2],
            "start_time": "10:00:00.000Z",
            "duration": {"days": 1, "hours": 2, "minutes": 30},
        }
    ],
}


class TestNumbersSentAsText:
    def test_numbers_of_numeric_fields_sent_as_text_equal_the_numbers(self):
        live = {"offer_price": "2.50", "completes_required": " 200 ", "expected_ir": "4e1"}
        manifest = {"offer_price": 2.5, "completes_required": 200, "expected_ir": 40}
        assert diff_survey(live, manifest) == []

    def test_an_update_body_carries_text_numbers_as_numbers_of_the_right_type(self):
        body = update_body({"offer_price": "2.50", "completes_required": "200"})
        assert body == {"completes_required": 200, "offer_price": 2.5}
        assert type(body["completes_required"]) is int and type(body["offer_price"]) is float

    def test_nested_numbers_sent_as_text_are_numbers_in_the_update_body(self):
        live = {
            "qualifications": [{"qualification_code": "212", "range_sets": [{"from": "18"}]}],
            "schedule_pause": SCHEDULE_AS_TEXT,
        }
        body = update_body(live)
        assert body["qualifications"] == [{"qualification_code": 212, "range_sets": [{"from": 18}]}]
        info = body["schedule_pause"]["info"][0]
        assert info["days"] == [1, 2] and info["duration"] == {"days": 1, "hours": 2, "minutes": 30}

    def test_a_schedule_sent_as_text_equals_the_same_schedule_in_numbers(self):
        assert diff_survey({"schedule_pause": SCHEDULE_AS_TEXT}, {"schedule_pause": SCHEDULE}) == []

    def test_codes_and_range_bounds_sent_as_text_equal_the_manifests_numbers(self):
        def qualification(code, low):
            return {"qualifications": [{"qualification_code": code, "range_sets": [{"from": low}]}]}

        assert normalise_survey(qualification("212", "18")) == normalise_survey(
            qualification(212, 18)
        )
        assert normalise_survey(qualification(212, "18")) != normalise_survey(
            qualification(212, 19)
        )

    def test_group_numbers_sent_as_text_are_numbers(self):
        live = {"buyer_surveygroup_ref": "g", "surveys_in_group": ["7", "5"]}
        live["exclusion_period"] = "30"
        assert group_update_body(live) == {
            "buyer_surveygroup_ref": "g",
            "surveys_in_group": [7, 5],
            "exclusion_period": 30,
        }

    @pytest.mark.parametrize("text", ["abc", "12abc", "1e999"], ids=["word", "mixed", "infinite"])
    def test_text_that_is_not_a_finite_number_stays_text(self, text):
        assert update_body({"offer_price": text})["offer_price"] == text

    def test_an_empty_number_is_absent(self):
        assert "offer_price" not in update_body({"offer_price": "  "})

    def test_numbers_past_64_bit_integers_stay_floats(self):
        body = update_body({"completes_required": "9223372036854775808", "template_id": "1e19"})
        assert type(body["completes_required"]) is float and type(body["template_id"]) is float

    def test_text_of_a_field_that_is_not_numeric_stays_text_even_made_of_digits(self):
        body = {"survey_title": "2026", "billing_id": "0042"}
        assert update_body(body) == body
        assert normalise_survey(body) == body


class TestFloatsAndOrder:
    def test_a_whole_number_spelled_as_a_float_is_no_change(self):
        assert diff_survey({"offer_price": 5.0}, {"offer_price": 5}) == []

    def test_a_group_s_surveys_are_shown_in_numeric_order(self):
        before = {"buyer_surveygroup_ref": "g", "surveys_in_group": [9, 10]}
        [change] = diff_group(before, dict(before, surveys_in_group=[100, 10, 9]))
        assert change.new == [9, 10, 100]

    def test_different_range_sets_differ(self):
        def ranges(*bounds):
            sets = [{"from": low, "to": high, "units": 311} for low, high in bounds]
            return {"qualifications": [{"qualification_code": 212, "range_sets": sets}]}

        assert normalise_survey(ranges((18, 24), (35, 44))) != normalise_survey(
            ranges((18, 24), (45, 54))
        )


class TestFalsyValues:
    def test_false_inside_an_object_other_than_qlc_is_a_value(self):
        unset = {"feot": {"pacing": "hours"}}
        off = {"feot": {"pacing": "hours", "is_custom": False}}
        assert diff_survey(unset, off) == [FieldChange("feot.is_custom", None, False)]

    def test_a_false_qlc_option_does_not_hide_the_options_after_it(self):
        before = {"qlc": {"enable": False, "multiple_quotas": {"enable": True}}}
        after = {"qlc": {"enable": False, "multiple_quotas": {"enable": False}}}
        assert [change.path for change in diff_survey(before, after)] == [
            "qlc.multiple_quotas.enable"
        ]


def test_a_merged_body_shares_nothing_with_its_inputs_at_any_depth():
    live = {"survey_title": "T", "schedule_pause": copy.deepcopy(SCHEDULE)}
    desired = {
        "quotas": [
            {
                "buyer_quota_id": "male",
                "required_count": 1,
                "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
            }
        ]
    }
    originals = copy.deepcopy((live, desired))
    body = merge_survey(live, desired, None)
    body["quotas"][0]["criteria"][0]["condition_codes"].append("999")
    body["schedule_pause"]["info"][0]["duration"]["hours"] = 9
    body["schedule_pause"]["info"][0]["days"].append(7)
    assert (live, desired) == originals


class TestUnmanagedFields:
    EXCLUSIONS = {
        "enable": True,
        "criterias": ["complete"],
        "start": "20260101",
        "end": "20261231",
    }

    def test_criterias_of_feasibility_exclusions_are_not_compared(self):
        live = {"feasibility_exclusions": self.EXCLUSIONS}
        manifest = {
            "feasibility_exclusions": {"enable": True, "start": "20260101", "end": "20261231"}
        }
        assert normalise_survey(live) == normalise_survey(manifest)

    def test_the_fields_after_criterias_are_still_compared(self):
        live = {"feasibility_exclusions": self.EXCLUSIONS}
        manifest = {
            "feasibility_exclusions": {"enable": True, "start": "20260101", "end": "20270101"}
        }
        assert normalise_survey(live) != normalise_survey(manifest)

    def test_an_update_body_never_sends_criterias_but_keeps_the_rest(self):
        body = update_body({"feasibility_exclusions": self.EXCLUSIONS})
        assert body["feasibility_exclusions"] == {
            "enable": True,
            "start": "20260101",
            "end": "20261231",
        }
