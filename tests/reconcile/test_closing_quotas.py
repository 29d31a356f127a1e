"""The plan's warning that a lowered required_count closes a quota (spec 2.4 rule 3: a quota
whose required_count is at or below its completes gets no more traffic)."""

from __future__ import annotations

import pytest

from surveyctl.reconcile import checks
from surveyctl.reconcile.checks import closing_quotas


def _body(**required: int) -> dict:
    return {"quotas": [{"buyer_quota_id": q, "required_count": n} for q, n in required.items()]}


def _performance(**fielded: int) -> list[dict]:
    return [{"buyer_quota_id": q, "completes_fielded": n} for q, n in fielded.items()]


def test_a_quota_lowered_to_its_completes_is_said_to_close():
    (note,) = closing_quotas("Survey/x", _body(male=40), _performance(male=40), "x.yaml:9")
    assert note.severity == "warning" and note.address == "Survey/x"
    assert note.message == (
        "quota male will close: required_count 40 is at or below its 40 completes, so it gets "
        "no more traffic"
    )


def test_a_quota_left_above_its_completes_is_not_said_to_close():
    assert closing_quotas("Survey/x", _body(male=41), _performance(male=40), None) == []


def test_a_quota_lowered_to_zero_closes_even_without_completes():
    (note,) = closing_quotas("Survey/x", _body(male=0), _performance(male=0), None)
    assert "quota male will close: required_count 0 is at or below its 0 completes" in note.message


def test_a_quota_the_performance_does_not_list_is_not_judged():
    assert closing_quotas("Survey/x", _body(new=0), _performance(male=5), None) == []


@pytest.mark.parametrize("goal", ["abc", float("inf"), "1e999", [1]], ids=repr)
def test_the_spend_of_a_live_survey_whose_goal_is_no_number_is_not_known(goal):
    # The live body is the service's word: its spend is left out, never a traceback.
    assert checks.spend({"offer_price": 2.5, "completes_required": goal}) is None
