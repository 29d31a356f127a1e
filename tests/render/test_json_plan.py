"""The fields of the JSON plan a CI script reads."""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import FieldChange
from surveyctl.render import json as json_format

from .plans import plan, price, spend, update


def _data(made) -> dict:
    return json.loads(json_format.render(made))


def test_a_plan_that_was_made_says_it_did_not_fail():
    assert _data(plan())["failed"] is False


def test_a_plan_without_changes_says_it_has_none():
    unchanged = update("kept")
    unchanged.action = "no-op"
    assert _data(plan(unchanged))["has_changes"] is False
    assert _data(plan(update("kept", price(2.5, 3.0))))["has_changes"] is True


def test_the_summary_carries_the_summary_line():
    data = _data(plan(update("kept", price(2.5, 3.0), spend=spend(500.0, 600.0))))
    assert data["summary"] == {
        "add": 0,
        "change": 1,
        "destroy": 0,
        "text": "Plan: 0 to add, 1 to change, 0 to destroy. Estimated spend: $500.00 -> "
        "$600.00 (+$100.00).",
    }
    assert data["spend_total"] == {"before": 500.0, "after": 600.0}


def test_a_change_carries_its_old_and_new_value_in_words():
    change = FieldChange("qualifications[211].condition_codes", ["111", "112"], ["111"])
    kept = update("kept", change, body={"survey_localization": "en_US"})
    labels = {"en_US": {"211": {"name": "Gender", "answers": {"111": "Male", "112": "Female"}}}}
    (resource,) = _data(plan(kept, labels=labels))["resources"]
    assert resource["changes"][0]["display"] == {
        "path": "qualifications[Gender].answers",
        "old": "Male (111), Female (112)",
        "new": "Male (111)",
    }


def test_a_program_member_carries_its_program_market_and_wave():
    (resource,) = _data(plan(update("tracker[en_GB,w1]", price(2.5, 3.0))))["resources"]
    assert resource["member"] == {"program": "tracker", "market": "en_GB", "wave": "w1"}
