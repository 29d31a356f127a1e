"""Guards on the size of a change: over a limit, plan shows an error and apply refuses,
unless the named override is given; a saved plan records the overrides it was made with
(what apply takes from it: test_plan_trust.py)."""

from __future__ import annotations

import json

import pytest

from surveyctl.state import FileStateStore

from .conftest import configure, survey_manifest, write_manifest

# survey_manifest: offer_price 2.5 x completes_required 200 = $500 of estimated spend each.


def _state(project):
    return FileStateStore(project / ".surveyctl" / "state" / "local.json").load()


def _guard_notes(plan_json: str) -> list[dict]:
    return [n for n in json.loads(plan_json)["notes"] if n["address"].startswith("guards.")]


def test_a_spend_guard_stops_apply_and_its_override_lets_it_through(project, guarded, api, run_cli):
    guarded(max_spend_increase=400)
    write_manifest(project, survey_manifest("tracker"))
    surveys_before = len(api.list_surveys())
    refused = run_cli("apply", "manifests", "--auto-approve")
    assert refused.exit_code == 1
    assert (
        "raises the estimated spend of its surveys by $500.00 in all, more than "
        "max_spend_increase $400.00"
    ) in refused.stdout
    assert "--allow-spend-increase" in refused.stdout
    assert len(api.list_surveys()) == surveys_before
    allowed = run_cli("apply", "manifests", "--auto-approve", "--allow-spend-increase")
    assert allowed.exit_code == 0, allowed.stdout + allowed.stderr
    assert "allowed by --allow-spend-increase" in allowed.stdout
    assert _state(project).survey("tracker") is not None


def test_a_plan_over_a_guard_is_an_error_in_every_format(project, guarded, run_cli):
    guarded(max_spend_increase=400)
    write_manifest(project, survey_manifest("tracker"))
    text = run_cli("plan", "manifests")
    as_json = run_cli("plan", "manifests", "--format", "json")
    markdown = run_cli("plan", "manifests", "--format", "markdown")
    assert text.exit_code == as_json.exit_code == markdown.exit_code == 1
    assert "error: guards.max_spend_increase: the plan raises" in text.stdout
    [note] = _guard_notes(as_json.stdout)
    assert note["severity"] == "error"
    assert "apply refuses it without --allow-spend-increase" in note["message"]
    assert "**Errors (apply is blocked):**" in markdown.stdout
    assert "`guards.max_spend_increase`: the plan raises" in markdown.stdout


def test_a_raise_offset_by_a_cut_elsewhere_is_still_over_the_spend_guard(
    project, guarded, api, run_cli
):
    write_manifest(project, survey_manifest("raised"))
    write_manifest(project, survey_manifest("cut"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    guarded(max_spend_increase=400)
    write_manifest(project, survey_manifest("raised", offer_price=5.0))  # $500 -> $1,000
    write_manifest(project, survey_manifest("cut", offer_price=0.0))  # $500 -> $0
    refused = run_cli("apply", "manifests", "--auto-approve")
    assert refused.exit_code == 1
    assert (
        "raises the estimated spend of its surveys by $500.00 in all (net +$0.00), more than "
        "max_spend_increase $400.00"
    ) in refused.stdout
    raised = api.get_survey(_state(project).survey("raised").ps_survey_id)
    assert raised["offer_price"] == 2.5


def test_a_plan_under_its_guards_has_no_guard_note(project, guarded, run_cli):
    guarded(max_spend_increase=500, max_destroy=0, max_changed_percent=30)
    write_manifest(project, survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert _guard_notes(result.stdout) == []


def test_a_saved_plan_records_its_overrides_and_apply_honours_them(project, guarded, run_cli):
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    made = run_cli("plan", "manifests", "--allow-spend-increase", "--out", "allowed.plan")
    assert made.exit_code == 0, made.stderr
    saved = json.loads((project / "allowed.plan").read_text())["plan"]
    assert saved["overrides"] == ["spend-increase"]
    applied = run_cli("apply", "allowed.plan", "--allow-spend-increase")  # unsigned: repeated
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _state(project).survey("tracker") is not None


def test_a_saved_plan_made_without_the_override_is_refused_even_with_it(project, guarded, run_cli):
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "plain.plan").exit_code == 1
    refused = run_cli("apply", "plain.plan")
    assert refused.exit_code == 1
    assert "the plan has errors; nothing was applied" in refused.stderr
    forced = run_cli("apply", "plain.plan", "--allow-spend-increase")
    assert forced.exit_code == 1
    assert "is applied with the overrides it was planned with (no override)" in forced.stderr
    assert _state(project).survey("tracker") is None


def test_an_unsigned_plan_made_with_adopt_is_applied_only_with_adopt_given_again(
    project, guarded, run_cli
):
    guarded()
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--adopt", "--out", "adopting.plan").exit_code == 0
    refused = run_cli("apply", "adopting.plan")
    assert refused.exit_code == 1
    assert (
        "adopting.plan was planned with --adopt and is not signed: apply it with --adopt "
        "(the overrides of an unsigned plan come from apply's command line)"
    ) in refused.stderr
    assert _state(project).survey("tracker") is None
    applied = run_cli("apply", "adopting.plan", "--adopt")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _state(project).survey("tracker") is not None


def test_a_guard_set_after_the_plan_was_saved_still_holds(project, guarded, run_cli):
    guarded()
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "early.plan").exit_code == 0
    guarded(max_spend_increase=100)
    refused = run_cli("apply", "early.plan")
    assert refused.exit_code == 1
    assert "more than max_spend_increase $100.00" in refused.stdout
    assert _state(project).survey("tracker") is None


def test_max_destroy_zero_keeps_every_resource_unless_destroy_is_allowed(
    project, guarded, api, run_cli
):
    guarded(max_destroy=0)
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    survey_id = _state(project).survey("tracker").ps_survey_id
    write_manifest(project, survey_manifest("other"))
    (project / "manifests" / "tracker.yaml").unlink()
    refused = run_cli("apply", "manifests", "--destroy", "--auto-approve", "--allow-spend-increase")
    assert refused.exit_code == 1
    assert "the plan destroys 1 resource(s), more than max_destroy 0" in refused.stdout
    assert api.get_survey(survey_id)["ps_survey_id"] == survey_id
    allowed = run_cli(
        "apply", "manifests", "--destroy", "--auto-approve", "--allow-destroy",
        "--allow-spend-increase",
    )  # fmt: skip
    assert allowed.exit_code == 0, allowed.stdout + allowed.stderr
    assert _state(project).survey("tracker") is None


def _managed_then_renamed(project, run_cli, managed: int, renamed: int) -> None:
    """`managed` surveys applied, then the manifests of the first `renamed` of them renamed."""
    for index in range(managed):
        write_manifest(project, survey_manifest(f"tracker-{index}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    for index in range(renamed):
        write_manifest(project, survey_manifest(f"tracker-{index}", survey_title="Renamed"))


def test_a_change_to_more_than_the_allowed_share_of_resources_is_refused(project, guarded, run_cli):
    guarded(max_changed_percent=30)
    _managed_then_renamed(project, run_cli, managed=10, renamed=4)
    refused = run_cli("apply", "manifests", "--auto-approve")
    assert refused.exit_code == 1
    assert "changes or destroys 4 of 10 managed resources (40 %)" in refused.stdout
    assert "--allow-large-change" in refused.stdout
    allowed = run_cli("apply", "manifests", "--auto-approve", "--allow-large-change")
    assert allowed.exit_code == 0, allowed.stdout + allowed.stderr
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_a_targeted_apply_is_held_to_the_share_of_every_managed_resource(project, guarded, run_cli):
    guarded(max_changed_percent=30)
    _managed_then_renamed(project, run_cli, managed=10, renamed=4)
    targets = [arg for i in range(4) for arg in ("--target", f"Survey/tracker-{i}")]

    refused = run_cli("apply", "manifests", *targets, "--auto-approve")

    assert refused.exit_code == 1
    assert "changes or destroys 4 of 10 managed resources (40 %)" in refused.stdout
    assert _state(project).survey("tracker-0").last_applied["survey_title"] != "Renamed"


def test_a_targeted_plan_counts_its_share_against_every_managed_resource(project, guarded, run_cli):
    guarded(max_changed_percent=25)
    _managed_then_renamed(project, run_cli, managed=12, renamed=3)
    # 3 of the 12 managed surveys (25 %), though 3 of the 10 targeted ones would be 30 %
    targets = [arg for i in range(10) for arg in ("--target", f"Survey/tracker-{i}")]

    planned = run_cli("plan", "manifests", *targets, "--format", "json")

    assert _guard_notes(planned.stdout) == []


def test_the_share_guard_leaves_small_environments_alone(project, guarded, run_cli):
    guarded(max_changed_percent=30)
    for index in range(3):
        write_manifest(project, survey_manifest(f"tracker-{index}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    write_manifest(project, survey_manifest("tracker-0", survey_title="Renamed"))
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("guards", "message"),
    [
        ({"max_destroy": -1}, "environments.local.guards.max_destroy must be a whole number"),
        ({"max_destroy": 1.5}, "environments.local.guards.max_destroy must be a whole number"),
        ({"max_changed_percent": 130}, "max_changed_percent must be a number from 0 up to 100"),
        ({"max_spend": 10}, "environments.local.guards: unknown guard 'max_spend'"),
        # .nan compares false with every limit: a guard of NaN would stop nothing.
        ({"max_spend_increase": float("nan")}, "max_spend_increase must be a number from 0"),
        ({"max_changed_percent": float("nan")}, "max_changed_percent must be a number from 0"),
        ({"max_spend_increase": float("inf")}, "max_spend_increase must be a number from 0"),
    ],
)
def test_a_bad_guard_is_one_sentence_naming_the_setting(project, sandbox, run_cli, guards, message):
    configure(project, sandbox.url, guards=guards)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
