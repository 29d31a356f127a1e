"""What a saved plan may decide: only a plan signed with $SURVEYCTL_PLAN_KEY carries policy.

An unsigned plan file can be edited and its checksum recomputed by anyone, so `apply PLANFILE`
takes the guard overrides from its own command line, and the resources it could not read and
the notes from its own re-plan; where the file claims something else, nothing is applied."""

from __future__ import annotations

import json
from pathlib import Path

from surveyctl.state import FileStateStore, fingerprint

from .conftest import survey_manifest, survey_title, write_manifest

PLAN = "p.plan"
KEY = "plan-key-of-the-pipeline"


def _state(project: Path):
    return FileStateStore(project / ".surveyctl" / "state" / "local.json").load()


def _tamper(project: Path, edit) -> None:
    """Edits the saved plan as someone with the file would: change it, recompute the checksum
    with surveyctl's own function."""
    path = project / PLAN
    document = json.loads(path.read_text())
    edit(document["plan"])
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document))


def _apply(run_cli, *manifest_options):
    result = run_cli("apply", "manifests", "--auto-approve", *manifest_options)
    assert result.exit_code == 0, result.stdout + result.stderr


def test_an_unsigned_plan_edited_to_allow_destroy_deletes_nothing(project, guarded, api, run_cli):
    guarded(max_destroy=0)
    write_manifest(project, survey_manifest("tracker"))
    write_manifest(project, survey_manifest("other"))
    _apply(run_cli)
    survey_id = _state(project).survey("tracker").ps_survey_id
    (project / "manifests" / "tracker.yaml").unlink()
    assert run_cli("plan", "manifests", "--destroy", "--out", PLAN).exit_code == 1
    _tamper(project, lambda plan: plan.update(overrides=["destroy"]))
    result = run_cli("apply", PLAN, "--destroy")
    assert result.exit_code == 1
    assert "planned with --allow-destroy" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_id"] == survey_id
    assert _state(project).survey("tracker") is not None


def test_an_unsigned_plan_edited_to_allow_a_spend_increase_creates_nothing(
    project, guarded, api, run_cli
):
    guarded(max_spend_increase=5000)
    # 50 x 200 completes: $10,000 of estimated spend
    write_manifest(project, survey_manifest("costly", offer_price=50, survey_title="Costly"))
    assert run_cli("plan", "manifests", "--out", PLAN).exit_code == 1
    _tamper(project, lambda plan: plan.update(overrides=["spend-increase"]))
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "planned with --allow-spend-increase" in result.stderr
    assert _state(project).survey("costly") is None
    assert "Costly" not in {survey["survey_title"] for survey in api.list_surveys()}


def test_an_unsigned_plan_that_calls_a_change_unread_is_refused(project, guarded, api, run_cli):
    guarded()
    write_manifest(project, survey_manifest("tracker"))
    write_manifest(project, survey_manifest("other"))
    _apply(run_cli)
    write_manifest(project, survey_manifest("tracker", survey_title="Tracker renamed"))
    write_manifest(project, survey_manifest("other", survey_title="Other renamed"))
    assert run_cli("plan", "manifests", "--out", PLAN).exit_code == 0

    def hide(plan):
        plan["resources"] = [r for r in plan["resources"] if r["name"] != "tracker"]
        plan["unread"] = ["Survey/tracker"]

    _tamper(project, hide)
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/tracker" in result.stderr
    titles = {
        name: api.get_survey(_state(project).survey(name).ps_survey_id)["survey_title"]
        for name in ("tracker", "other")
    }
    assert titles == {"tracker": survey_title("tracker"), "other": survey_title("other")}


def test_an_unsigned_plan_with_an_edited_warning_is_refused(project, guarded, run_cli):
    guarded()
    write_manifest(project, survey_manifest("tracker"))
    write_manifest(project, survey_manifest("other"))
    _apply(run_cli)
    (project / "manifests" / "other.yaml").unlink()
    write_manifest(project, survey_manifest("tracker", survey_title="Renamed"))
    assert run_cli("plan", "manifests", "--out", PLAN).exit_code == 0

    def soften(plan):
        [kept] = [note for note in plan["notes"] if note["address"] == "Survey/other"]
        kept["message"] = "nothing to see here"

    _tamper(project, soften)
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/other" in result.stderr


def test_an_unsigned_plan_applies_with_its_overrides_given_again(project, guarded, run_cli):
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--allow-spend-increase", "--out", PLAN).exit_code == 0
    refused = run_cli("apply", PLAN)
    assert refused.exit_code == 1
    assert (
        f"{PLAN} was planned with --allow-spend-increase and is not signed: apply it with "
        "--allow-spend-increase" in refused.stderr
    )
    assert _state(project).survey("tracker") is None
    applied = run_cli("apply", PLAN, "--allow-spend-increase")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _state(project).survey("tracker") is not None


def test_a_signed_plan_applies_with_the_overrides_it_was_made_with(
    project, guarded, run_cli, monkeypatch
):
    monkeypatch.setenv("SURVEYCTL_PLAN_KEY", KEY)
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--allow-spend-increase", "--out", PLAN).exit_code == 0
    applied = run_cli("apply", PLAN)
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _state(project).survey("tracker") is not None


def test_a_signed_plan_is_not_trusted_when_apply_has_no_key(project, guarded, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_PLAN_KEY", KEY)
    guarded(max_spend_increase=0)
    write_manifest(project, survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--allow-spend-increase", "--out", PLAN).exit_code == 0
    monkeypatch.delenv("SURVEYCTL_PLAN_KEY")
    refused = run_cli("apply", PLAN)
    assert refused.exit_code == 1
    assert "$SURVEYCTL_PLAN_KEY is not set to check its signature" in refused.stderr
    assert _state(project).survey("tracker") is None


def test_both_ci_examples_pass_the_plan_key_from_a_secret():
    folder = Path(__file__).resolve().parents[2] / "examples" / "ci"
    for workflow in ("plan-on-pull-request.yml", "apply-on-main.yml"):
        text = (folder / workflow).read_text(encoding="utf-8")
        assert "SURVEYCTL_PLAN_KEY: ${{ secrets.SURVEYCTL_PLAN_KEY }}" in text, workflow


def test_a_saved_plan_that_deletes_names_the_apply_with_destroy(project, api, run_cli):
    write_manifest(project, survey_manifest("tracker"))
    write_manifest(project, survey_manifest("other"))
    _apply(run_cli)
    survey_id = _state(project).survey("tracker").ps_survey_id
    (project / "manifests" / "tracker.yaml").unlink()
    saved = run_cli("plan", "manifests", "--destroy", "--out", PLAN)
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    assert f"apply it with `surveyctl apply {PLAN} --destroy`." in saved.stderr
    applied = run_cli("apply", PLAN, "--destroy", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _state(project).survey("tracker") is None
    assert survey_id not in {s["ps_survey_id"] for s in api.list_surveys(status=[11, 22, 33])}


def test_a_plan_saved_to_a_file_named_like_an_option_names_the_apply_of_that_file(project, run_cli):
    write_manifest(project, survey_manifest("tracker"))
    saved = run_cli("plan", "manifests", "--out", "./--format")
    assert saved.exit_code == 0, saved.stderr
    assert "apply it with `surveyctl apply ./--format`." in saved.stderr


def test_a_plan_saved_to_a_file_with_a_space_names_the_apply_of_that_file_quoted(project, run_cli):
    write_manifest(project, survey_manifest("tracker"))
    saved = run_cli("plan", "manifests", "--out", "my plan.plan")
    assert saved.exit_code == 0, saved.stderr
    assert "apply it with `surveyctl apply 'my plan.plan'`." in saved.stderr
