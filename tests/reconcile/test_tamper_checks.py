"""The checks a saved plan passes before it is applied, one by one, on plans made in memory:
what each refusal says, and what the plan that is applied holds when they pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.plan import Note, Plan, ResourceChange
from surveyctl.reconcile.planfile import PlanFileError, SavedPlan
from surveyctl.reconcile.tamper import (
    PlanMismatch,
    PlanOutdated,
    applied_overrides,
    check_state,
    guard_deletes,
    recheck,
    source_targets,
)
from surveyctl.state import GroupRecord, State, SurveyRecord

PATH = Path("p.plan")


def _update(name: str, title: str = "New", fingerprint: str = "live-1") -> ResourceChange:
    return ResourceChange(
        "Survey", name, "update", remote_id=1, body={"survey_title": title}, fingerprint=fingerprint
    )


def _no_op(name: str, fingerprint: str = "live-1") -> ResourceChange:
    return ResourceChange("Survey", name, "no-op", remote_id=2, fingerprint=fingerprint)


def _plan(*resources: ResourceChange, **fields) -> Plan:
    fields.setdefault("sources", ["manifests"])
    return Plan("local", "lineage", 4, resources=list(resources), **fields)


class TestRecheck:
    def test_agreeing_plans_apply_the_fresh_plan_restricted_to_the_saved_resources(self):
        fresh = _plan(_update("a"), _no_op("b"), notes=[Note("note", "Survey/a", "fresh")])
        applied = recheck(_plan(_update("a"), notes=[Note("note", "Survey/a", "fresh")]), fresh)
        assert [r.address for r in applied.resources] == ["Survey/a"]
        assert applied.notes == fresh.notes

    def test_a_change_whose_live_body_moved_is_outdated(self):
        saved = _plan(_update("a"), _update("b"))
        fresh = _plan(_update("a", fingerprint="live-2"), _update("b", fingerprint="live-2"))
        with pytest.raises(PlanOutdated) as refused:
            recheck(saved, fresh)
        assert str(refused.value) == (
            "changed outside this plan since it was made: Survey/a, Survey/b; make a new plan"
        )

    def test_a_no_op_that_became_a_change_by_a_live_edit_is_outdated(self):
        saved = _plan(_update("a"), _no_op("b"))
        fresh = _plan(_update("a"), _update("b", fingerprint="live-2"))
        with pytest.raises(PlanOutdated, match="changed outside this plan since it was made: "):
            recheck(saved, fresh)

    def test_an_edited_body_is_a_mismatch_naming_each_resource(self):
        saved = _plan(_update("a", title="Edited"), _update("b", title="Edited"))
        with pytest.raises(PlanMismatch) as refused:
            recheck(saved, _plan(_update("a"), _update("b")))
        assert str(refused.value) == (
            "the plan file is not what its manifests plan now for Survey/a, Survey/b: it was "
            "edited, or the manifests changed since it was made; nothing was applied, make a "
            "new plan"
        )

    def test_a_change_the_file_leaves_out_is_a_mismatch(self):
        with pytest.raises(PlanMismatch, match="plan now for Survey/b: "):
            recheck(_plan(_update("a")), _plan(_update("a"), _update("b")))

    def test_a_resource_that_cannot_be_read_now_is_outdated_not_a_mismatch(self):
        saved = _plan(_update("a"), _update("b"))
        fresh = _plan(
            _update("a"),
            unread=["Survey/b"],
            notes=[Note("warning", "Survey/b", "cannot read the live survey: 503")],
        )
        with pytest.raises(PlanOutdated) as refused:
            recheck(saved, fresh)
        assert str(refused.value) == (
            "could not check Survey/b against the marketplace (its live body could not be "
            "read now); nothing was applied, try again"
        )

    def test_every_resource_that_cannot_be_read_now_is_named(self):
        fresh = _plan(unread=["Survey/a", "Survey/b"])
        with pytest.raises(PlanOutdated, match="^could not check Survey/a, Survey/b against"):
            recheck(_plan(_update("a"), _update("b")), fresh, verified=True)

    def test_a_resource_the_file_never_names_and_that_cannot_be_read_is_outdated(self):
        fresh = _plan(_update("a"), unread=["Survey/c"])
        with pytest.raises(PlanOutdated, match="could not check Survey/c against"):
            recheck(_plan(_update("a")), fresh)


class TestUnverifiedClaims:
    def test_a_resource_claimed_unread_that_reads_now_is_a_mismatch(self):
        saved = _plan(_update("a"), unread=["Survey/b"])
        with pytest.raises(PlanMismatch, match="plan now for Survey/b: "):
            recheck(saved, _plan(_update("a"), _update("b")))

    def test_a_note_the_file_leaves_out_is_a_mismatch(self):
        fresh = _plan(_update("a"), notes=[Note("warning", "Survey/old", "left alone")])
        with pytest.raises(PlanMismatch, match="plan now for Survey/old: "):
            recheck(_plan(_update("a")), fresh)

    def test_a_note_the_file_adds_is_a_mismatch(self):
        saved = _plan(_update("a"), notes=[Note("warning", "Survey/a", "all is well")])
        with pytest.raises(PlanMismatch, match="plan now for Survey/a: "):
            recheck(saved, _plan(_update("a")))

    def test_the_same_notes_in_another_order_and_from_another_path_agree(self):
        notes = [Note("warning", "Survey/a", "one", "manifests/a.yaml:1"), Note("note", "x", "2")]
        fresh = _plan(_update("a"), notes=[notes[1], Note("warning", "Survey/a", "one", "/p/a:1")])
        assert recheck(_plan(_update("a"), notes=notes), fresh).notes == fresh.notes

    def test_a_retired_member_the_file_leaves_out_is_a_mismatch(self):
        fresh = _plan(_update("a"), retired=["Survey/tracker[w1]"])
        with pytest.raises(PlanMismatch, match=r"plan now for Survey/tracker\[w1\]: "):
            recheck(_plan(_update("a")), fresh)

    def test_the_same_retired_members_agree(self):
        saved = _plan(_update("a"), retired=["Survey/tracker[w1]"])
        fresh = _plan(_update("a"), retired=["Survey/tracker[w1]"])
        assert recheck(saved, fresh).retired == ["Survey/tracker[w1]"]

    def test_guard_notes_follow_the_guards_of_now(self):
        fresh = _plan(_update("a"), notes=[Note("error", "guards.max_destroy", "over")])
        assert recheck(_plan(_update("a")), fresh).errors == fresh.notes

    def test_a_verified_plan_keeps_what_it_could_not_read_out_of_the_apply(self):
        saved = _plan(_update("a"), unread=["Survey/b"])
        fresh = _plan(_update("a"), _update("b"), unread=["Survey/c"])
        applied = recheck(saved, fresh, verified=True)
        assert [r.address for r in applied.resources] == ["Survey/a"]
        assert applied.unread == ["Survey/b", "Survey/c"]


class TestRecovered:
    def test_the_same_recovered_creates_agree(self):
        recovered = {"Survey/a": {"ps_survey_id": 7}}
        fresh = _plan(_update("a"), recovered=dict(recovered))
        assert recheck(_plan(_update("a"), recovered=recovered), fresh).recovered == recovered

    @pytest.mark.parametrize(
        ("saved", "fresh"),
        [
            ({"Survey/x": {"ps_survey_id": 7}}, {"Survey/x": {"ps_survey_id": 8}}),
            ({"Survey/x": None}, {}),
            ({}, {"Survey/x": None}),
            ({"Survey/x": None}, {"Survey/x": {"ps_survey_id": 8}}),
        ],
        ids=["other-id", "only-in-file", "only-fresh", "none-or-id"],
    )
    def test_a_recovered_create_resolved_otherwise_is_a_mismatch(self, saved, fresh):
        with pytest.raises(PlanMismatch, match="plan now for Survey/x: "):
            recheck(_plan(_update("a"), recovered=saved), _plan(_update("a"), recovered=fresh))


class TestOverrides:
    @staticmethod
    def _saved(overrides, verified=False, signed=False) -> SavedPlan:
        return SavedPlan(_plan(overrides=list(overrides)), verified=verified, signed=signed)

    def test_a_verified_plan_carries_its_own_overrides(self):
        saved = self._saved(["destroy"], verified=True, signed=True)
        assert applied_overrides(PATH, saved, frozenset()) == {"destroy"}
        assert applied_overrides(PATH, saved, frozenset({"destroy"})) == {"destroy"}

    def test_a_verified_plan_refuses_other_overrides(self):
        saved = self._saved(["destroy"], verified=True, signed=True)
        with pytest.raises(SurveyctlError) as refused:
            applied_overrides(PATH, saved, frozenset({"destroy", "spend-increase"}))
        assert str(refused.value) == (
            "p.plan is applied with the overrides it was planned with (--allow-destroy); to "
            "change them, make a new plan with them"
        )

    def test_a_verified_plan_made_without_overrides_refuses_them_saying_so(self):
        saved = self._saved([], verified=True, signed=True)
        with pytest.raises(SurveyctlError, match=r"planned with \(no override\); to change"):
            applied_overrides(PATH, saved, frozenset({"destroy"}))

    def test_an_unverified_plan_takes_the_overrides_of_the_command_line(self):
        saved = self._saved(["destroy", "large-change"])
        given = frozenset({"destroy", "large-change"})
        assert applied_overrides(PATH, saved, given) == given
        assert applied_overrides(PATH, self._saved([]), frozenset()) == frozenset()

    def test_an_unverified_plan_names_the_overrides_to_give(self):
        with pytest.raises(SurveyctlError) as refused:
            applied_overrides(PATH, self._saved(["large-change", "destroy"]), frozenset())
        assert str(refused.value) == (
            "p.plan was planned with --allow-destroy, --allow-large-change and is not signed: "
            "apply it with --allow-destroy, --allow-large-change (the overrides of an unsigned "
            "plan come from apply's command line), or sign plans with $SURVEYCTL_PLAN_KEY "
            "(see docs/safety.md)"
        )

    def test_an_unverified_plan_made_without_overrides_refuses_them(self):
        with pytest.raises(SurveyctlError) as refused:
            applied_overrides(PATH, self._saved([]), frozenset({"destroy"}))
        assert str(refused.value) == (
            "p.plan is applied with the overrides it was planned with (no override); to "
            "change them, make a new plan with them"
        )

    def test_a_signed_plan_without_the_key_to_check_it_says_so(self):
        with pytest.raises(SurveyctlError, match=r"and \$SURVEYCTL_PLAN_KEY is not set to check"):
            applied_overrides(PATH, self._saved(["destroy"], signed=True), frozenset())


class TestState:
    def test_a_plan_of_another_state_is_outdated(self):
        state = State.empty()
        state.serial = 5
        with pytest.raises(PlanOutdated) as refused:
            check_state(_plan(), state)
        assert str(refused.value) == (
            "the state changed since this plan was made (serial 4 -> 5); make a new plan"
        )

    def test_a_plan_of_a_state_never_written_fits_a_state_still_never_written(self):
        saved = Plan("local", "another-lineage", 0)
        check_state(saved, State.empty())  # serial 0 on both sides: no error

    def test_a_plan_of_a_written_state_does_not_fit_a_reset_one(self):
        with pytest.raises(PlanOutdated, match=r"\(serial 4 -> 0\)"):
            check_state(_plan(), State.empty())


class TestDeletes:
    @staticmethod
    def _delete(kind: str, name: str, remote_id) -> Plan:
        return _plan(ResourceChange(kind, name, "delete", remote_id=remote_id))

    def test_a_delete_of_a_managed_group_by_its_ref_goes_ahead(self):
        state = State.empty()
        state.resources["ExclusionGroup/g"] = GroupRecord("ref-1")
        guard_deletes(self._delete("ExclusionGroup", "g", "ref-1"), state, destroy=True)

    def test_a_delete_of_an_address_the_state_holds_as_another_kind_is_refused(self):
        state = State.empty()
        state.resources["Survey/a"] = GroupRecord("ref-1")
        with pytest.raises(SurveyctlError, match="which the state protects"):
            guard_deletes(self._delete("Survey", "a", "ref-1"), state, destroy=True)

    def test_a_delete_of_a_protected_survey_is_refused(self):
        state = State.empty()
        state.resources["Survey/t[en_US,w1]"] = SurveyRecord(10001, prevent_destroy=True)
        with pytest.raises(SurveyctlError, match="which the state protects"):
            guard_deletes(self._delete("Survey", "t[en_US,w1]", 10001), state, destroy=True)

    def test_a_delete_of_a_protected_member_its_program_releases_goes_ahead(self):
        state = State.empty()
        state.resources["Survey/t[en_US,w1]"] = SurveyRecord(10001, prevent_destroy=True)
        plan = self._delete("Survey", "t[en_US,w1]", 10001)
        plan.released = ["Survey/t[en_US,w1]"]
        guard_deletes(plan, state, destroy=True)

    def test_a_release_of_one_member_protects_the_others_still(self):
        state = State.empty()
        state.resources["Survey/t[en_US,w1]"] = SurveyRecord(10001, prevent_destroy=True)
        state.resources["Survey/t[en_GB,w1]"] = SurveyRecord(10002, prevent_destroy=True)
        plan = _plan(
            ResourceChange("Survey", "t[en_US,w1]", "delete", remote_id=10001),
            ResourceChange("Survey", "t[en_GB,w1]", "delete", remote_id=10002),
        )
        plan.released = ["Survey/t[en_US,w1]"]
        with pytest.raises(SurveyctlError, match=r"deletes Survey/t\[en_GB,w1\], which"):
            guard_deletes(plan, state, destroy=True)

    def test_a_delete_needs_destroy(self):
        state = State.empty()
        state.resources["Survey/a"] = SurveyRecord(10001)
        with pytest.raises(SurveyctlError) as refused:
            guard_deletes(self._delete("Survey", "a", 10001), state, destroy=False)
        assert str(refused.value) == "the plan deletes Survey/a; apply it with --destroy to confirm"

    def test_a_delete_of_another_id_says_why_in_full(self):
        state = State.empty()
        state.resources["Survey/a"] = SurveyRecord(10001)
        state.resources["Survey/b"] = SurveyRecord(10002)
        plan = _plan(
            ResourceChange("Survey", "a", "delete", remote_id=99),
            ResourceChange("Survey", "b", "delete", remote_id=98),
        )
        with pytest.raises(SurveyctlError) as refused:
            guard_deletes(plan, state, destroy=True)
        assert str(refused.value) == (
            "the plan deletes Survey/a, Survey/b, which the state protects "
            "(lifecycle.prevent_destroy) or does not manage under that id; nothing was applied"
        )


class TestSources:
    @pytest.mark.parametrize(
        ("plan", "message"),
        [
            (_plan(refresh_only=True), "a refresh cannot be applied from a plan file"),
            (
                Plan("local", "l", 1),
                "the plan does not name the manifests it was made from (an older surveyctl "
                "made it), so it cannot be checked; make a new plan",
            ),
            (
                _plan(sources=["../x"]),
                "the plan names manifests outside the project (../x); make a new plan from "
                "inside the project",
            ),
            (
                _plan(sources=["a\0b"]),
                "the plan names a manifest path 'a\\x00b' that cannot be used; make a new plan",
            ),
        ],
        ids=["refresh", "no-sources", "outside", "unusable-path"],
    )
    def test_a_plan_whose_sources_cannot_be_used_is_refused_in_full(self, tmp_path, plan, message):
        with pytest.raises(PlanFileError) as refused:
            source_targets(plan, tmp_path, PATH)
        assert str(refused.value) == f"p.plan: {message}"

    def test_sources_inside_the_project_are_its_folders(self, tmp_path):
        targets = source_targets(_plan(sources=["manifests", "groups/g.yaml"]), tmp_path, PATH)
        assert targets == (tmp_path.resolve() / "manifests", tmp_path.resolve() / "groups/g.yaml")
