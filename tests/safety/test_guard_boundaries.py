"""Where each guard starts: a plan goes over a limit only when it is MORE than the limit, an
update's spend counts by what it adds to the survey's existing spend, and a guard note names
the guard, the environment and the file that sets it."""

from __future__ import annotations

import json

from surveyctl.environments import Guards
from surveyctl.reconcile.guards import guard_notes
from surveyctl.reconcile.plan import Plan, ResourceChange, Spend

from .conftest import survey_manifest, write_manifest

# survey_manifest: offer_price 2.5 x completes_required 200 = $500 of estimated spend.


def _plan(*resources: ResourceChange) -> Plan:
    return Plan("production", "lineage", 3, resources=list(resources))


def _survey(name: str, action: str, before: float | None = None, after: float | None = None):
    spend = Spend(before, after) if before is not None or after is not None else None
    return ResourceChange("Survey", name, action, spend=spend)


def _guards_hit(plan: Plan, **limits) -> list[str]:
    return [note.address for note in guard_notes(plan, Guards(**limits), (), "production")]


class TestSpend:
    def test_a_spend_increase_equal_to_the_limit_passes(self):
        plan = _plan(_survey("a", "create", after=500.0))
        assert _guards_hit(plan, max_spend_increase=500) == []

    def test_a_spend_increase_of_one_cent_over_the_limit_is_refused(self):
        plan = _plan(_survey("a", "create", after=500.01))
        assert _guards_hit(plan, max_spend_increase=500) == ["guards.max_spend_increase"]

    def test_cents_are_not_lost_to_float_rounding_at_the_limit(self):
        # 600.1 - 500.0 is 100.10000000000002 in floating point; in dollars it is $100.10
        plan = _plan(_survey("a", "update", before=500.0, after=600.1))
        assert _guards_hit(plan, max_spend_increase=100.1) == []
        assert _guards_hit(plan, max_spend_increase=100.09) == ["guards.max_spend_increase"]

    def test_a_plan_without_any_spend_passes_a_zero_limit(self):
        plan = _plan(ResourceChange("ExclusionGroup", "trackers", "create"))
        assert _guards_hit(plan, max_spend_increase=0) == []

    def test_lowering_spend_passes_a_zero_limit(self):
        plan = _plan(_survey("a", "update", before=500.0, after=300.0))
        assert _guards_hit(plan, max_spend_increase=0) == []

    def test_cutting_a_survey_to_no_spend_passes_a_zero_limit(self):
        # Below a dollar, so an absent or zero spend read as anything but $0 would add to it.
        cut_to_zero = _plan(_survey("a", "update", before=0.5, after=0.0))
        destroyed = _plan(_survey("a", "delete", before=0.5))
        assert _guards_hit(cut_to_zero, max_spend_increase=0) == []
        assert _guards_hit(destroyed, max_spend_increase=0) == []


class TestDestroy:
    def test_as_many_destroys_as_the_limit_pass(self):
        plan = _plan(_survey("a", "delete"), _survey("b", "delete"))
        assert _guards_hit(plan, max_destroy=2) == []

    def test_one_destroy_more_than_the_limit_is_refused(self):
        plan = _plan(_survey("a", "delete"), _survey("b", "delete"), _survey("c", "delete"))
        assert _guards_hit(plan, max_destroy=2) == ["guards.max_destroy"]


class TestChangedPercent:
    @staticmethod
    def _managed(changed: int, total: int, creates: int = 0) -> Plan:
        resources = [_survey(f"s{i}", "update" if i < changed else "no-op") for i in range(total)]
        resources += [_survey(f"new{i}", "create") for i in range(creates)]
        return _plan(*resources)

    def test_exactly_the_allowed_share_passes(self):
        assert _guards_hit(self._managed(changed=3, total=10), max_changed_percent=30) == []

    def test_more_than_the_allowed_share_is_refused(self):
        plan = self._managed(changed=4, total=10)
        assert _guards_hit(plan, max_changed_percent=30) == ["guards.max_changed_percent"]

    def test_a_share_just_above_the_limit_is_refused(self):
        # 1 of 11 is 9.09 %: above 9 %
        plan = self._managed(changed=1, total=11)
        assert _guards_hit(plan, max_changed_percent=9) == ["guards.max_changed_percent"]
        assert _guards_hit(plan, max_changed_percent=9.1) == []

    def test_the_share_counts_from_ten_managed_resources(self):
        assert _guards_hit(self._managed(changed=9, total=9), max_changed_percent=0) == []
        plan = self._managed(changed=1, total=10)
        assert _guards_hit(plan, max_changed_percent=0) == ["guards.max_changed_percent"]

    def test_creates_do_not_count_towards_the_share(self):
        plan = self._managed(changed=3, total=10, creates=20)
        assert _guards_hit(plan, max_changed_percent=30) == []


def test_an_override_turns_only_its_own_guard_into_a_warning():
    plan = _plan(_survey("a", "delete", before=500.0), _survey("b", "create", after=900.0))
    notes = guard_notes(
        plan, Guards(max_spend_increase=0, max_destroy=0), ["destroy"], "production"
    )
    assert {(n.address, n.severity) for n in notes} == {
        ("guards.max_destroy", "warning"),
        ("guards.max_spend_increase", "error"),
    }


def test_an_update_that_raises_spend_counts_only_what_it_adds(project, guarded, run_cli):
    guarded()
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    write_manifest(project, survey_manifest("tracker", offer_price=3.0))  # $500 -> $600
    guarded(max_spend_increase=100)
    assert run_cli("plan", "manifests").exit_code == 0
    guarded(max_spend_increase=99.99)
    refused = run_cli("plan", "manifests")
    assert refused.exit_code == 1
    assert (
        "raises the estimated spend of its surveys by $100.00 in all, more than "
        "max_spend_increase $99.99"
    ) in refused.stdout


def test_a_guard_note_names_the_guard_the_environment_and_the_config_file(
    project, guarded, run_cli
):
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "json")
    [note] = [n for n in json.loads(result.stdout)["notes"] if n["address"].startswith("guards")]
    assert note["address"] == "guards.max_spend_increase"
    assert "of environment 'local'" in note["message"]
    assert note["location"] == str(project / "surveyctl.yaml")
