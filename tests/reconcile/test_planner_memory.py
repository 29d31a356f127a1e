"""Planning pauses the cycle collector and always gives it back as it found it."""

from __future__ import annotations

import gc

import pytest

from surveyctl.model import DesiredState
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.resources import SURVEY, address
from surveyctl.state import State, SurveyRecord


@pytest.mark.parametrize("enabled", [True, False])
def test_planning_leaves_the_cycle_collector_as_it_found_it(api, enabled):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        make_plan(api, PlanRequest(DesiredState(), State.empty(), "sandbox"))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


class _Broken:
    """A marketplace that fails in a way the planner does not handle (a bug, an interrupt)."""

    def get_survey(self, survey_id: int) -> dict:
        raise RuntimeError("unexpected")


def test_a_failing_plan_still_gives_the_cycle_collector_back():
    state = State.empty()
    state.resources[address(SURVEY, "tracker")] = SurveyRecord(ps_survey_id=1)
    desired = DesiredState()
    with pytest.raises(RuntimeError, match="unexpected"):
        make_plan(_Broken(), PlanRequest(desired, state, "sandbox"))  # type: ignore[arg-type]
    assert gc.isenabled()
