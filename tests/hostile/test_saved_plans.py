"""A saved plan cannot be edited into something else: apply plans its manifests again, checks
deletes against the state, and, with a plan key, accepts only plans signed with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.state import FileStateStore, fingerprint

from .conftest import survey_manifest, survey_title

PLAN = "change.plan"


def _store(project: Path) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _survey_id(project: Path, name: str) -> int:
    return _store(project).load().survey(name).ps_survey_id


def _applied(run_cli, manifests, *manifest_list) -> None:
    for manifest in manifest_list:
        manifests.write(manifest)
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def _saved(run_cli, *options) -> None:
    result = run_cli("plan", "manifests", "--out", PLAN, *options)
    assert result.exit_code == 0, result.stdout + result.stderr


def _tamper(project: Path, edit) -> None:
    """Edits the saved plan as an attacker would: change the plan, recompute its checksum."""
    path = project / PLAN
    document = json.loads(path.read_text())
    edit(document["plan"])
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document))


def _resource(plan: dict, address: str) -> dict:
    kind, name = address.split("/")
    return next(r for r in plan["resources"] if (r["kind"], r["name"]) == (kind, name))


def _protected(name: str) -> dict:
    return {**survey_manifest(name), "lifecycle": {"prevent_destroy": True}}


def test_a_plan_with_an_edited_live_url_and_price_is_refused(project, manifests, api, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    _saved(run_cli)

    def edit(plan):
        body = _resource(plan, "Survey/tracker")["body"]
        body.update(live_url="https://attacker.example.com/s?tid=1", offer_price=99.0)

    _tamper(project, edit)
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the plan file is not what its manifests plan now for Survey/tracker" in result.stderr
    live = api.get_survey(_survey_id(project, "tracker"))
    assert (live["survey_title"], live["offer_price"]) == (survey_title("tracker"), 2.5)
    assert "attacker" not in live["live_url"]


def test_an_injected_create_is_refused(project, manifests, api, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"))
    manifests.write(survey_manifest("tracker", survey_title="Renamed"))
    _saved(run_cli)
    injected = survey_manifest("injected", survey_title="Injected by hand")["spec"]

    def edit(plan):
        plan["resources"].append(
            {"kind": "Survey", "name": "injected", "action": "create", "body": injected}
        )

    _tamper(project, edit)
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/injected" in result.stderr
    assert "Injected by hand" not in {s["survey_title"] for s in api.list_surveys()}


@pytest.mark.parametrize("destroy", [[], ["--destroy"]], ids=["plain", "with-destroy"])
def test_a_delete_of_a_prevent_destroy_survey_is_refused(project, manifests, api, run_cli, destroy):
    _applied(run_cli, manifests, _protected("tracker"), survey_manifest("other"))
    survey_id = _survey_id(project, "tracker")
    _saved(run_cli)

    def edit(plan):
        plan["destroy"] = True
        resource = _resource(plan, "Survey/tracker")
        resource.update(action="delete", prevent_destroy=False, body=None)

    _tamper(project, edit)
    result = run_cli("apply", PLAN, *destroy)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/tracker" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_id"] == survey_id
    assert _store(project).load().survey("tracker").prevent_destroy


def test_a_plan_that_lifts_prevent_destroy_is_refused(project, manifests, run_cli):
    _applied(run_cli, manifests, _protected("tracker"), survey_manifest("other"))
    manifests.write(survey_manifest("other", survey_title="Renamed"))
    _saved(run_cli)
    _tamper(project, lambda plan: _resource(plan, "Survey/tracker").update(prevent_destroy=False))
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/tracker" in result.stderr
    assert _store(project).load().survey("tracker").prevent_destroy


def test_a_saved_plan_that_deletes_needs_destroy_when_applied(project, manifests, api, run_cli):
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("old"))
    survey_id = _survey_id(project, "old")
    manifests.remove("old")
    _saved(run_cli, "--destroy")
    refused = run_cli("apply", PLAN)
    assert refused.exit_code == 1
    assert "the plan deletes Survey/old; apply it with --destroy to confirm" in refused.stderr
    assert api.get_survey(survey_id)["ps_survey_id"] == survey_id
    applied = run_cli("apply", PLAN, "--destroy")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert _store(project).load().survey("old") is None


def test_a_plan_is_refused_when_its_manifests_changed_since(project, manifests, api, run_cli):
    manifests.write(survey_manifest("tracker"))
    _saved(run_cli)
    manifests.write(survey_manifest("tracker", survey_title="Edited after planning"))
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "not what its manifests plan now for Survey/tracker" in result.stderr
    assert _store(project).load().survey("tracker") is None


def test_a_plan_naming_manifests_outside_the_project_is_refused(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    _saved(run_cli)
    _tamper(project, lambda plan: plan.update(sources=["../elsewhere"]))
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the plan names manifests outside the project (../elsewhere)" in result.stderr


def test_a_plan_that_does_not_name_its_manifests_is_refused(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    _saved(run_cli)
    _tamper(project, lambda plan: plan.pop("sources"))
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "does not name the manifests it was made from" in result.stderr


def test_a_plan_cannot_be_saved_from_manifests_outside_the_project(
    project, tmp_path_factory, run_cli
):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "tracker.yaml").write_text(json.dumps(survey_manifest("tracker")))
    result = run_cli("plan", str(elsewhere), "--out", PLAN)
    assert result.exit_code == 1
    assert "is outside the project" in result.stderr
    assert not (project / PLAN).exists()


class TestSigning:
    """With $SURVEYCTL_PLAN_KEY set, plan signs and apply refuses anything not signed by it."""

    def test_a_signed_plan_applies_with_the_same_key(
        self, project, manifests, run_cli, monkeypatch
    ):
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "plan-key-of-the-pipeline")
        manifests.write(survey_manifest("tracker"))
        _saved(run_cli)
        text = (project / PLAN).read_text()
        assert '"signature": "hmac-sha256:' in text
        assert "plan-key-of-the-pipeline" not in text
        result = run_cli("apply", PLAN)
        assert result.exit_code == 0, result.stdout + result.stderr

    def test_a_plan_signed_with_another_key_is_refused(
        self, project, manifests, run_cli, monkeypatch
    ):
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "someone-elses-key")
        manifests.write(survey_manifest("tracker"))
        _saved(run_cli)
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "plan-key-of-the-pipeline")
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert "signature does not match $SURVEYCTL_PLAN_KEY" in result.stderr
        assert _store(project).load().survey("tracker") is None

    def test_an_edited_signed_plan_is_refused(self, project, manifests, run_cli, monkeypatch):
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "plan-key-of-the-pipeline")
        manifests.write(survey_manifest("tracker"))
        _saved(run_cli)
        _tamper(
            project, lambda plan: _resource(plan, "Survey/tracker")["body"].update(offer_price=99.0)
        )
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert "signature does not match" in result.stderr

    def test_an_unsigned_plan_is_refused_while_a_key_is_set(
        self, project, manifests, run_cli, monkeypatch
    ):
        manifests.write(survey_manifest("tracker"))
        _saved(run_cli)
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "plan-key-of-the-pipeline")
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert "the plan is not signed, and $SURVEYCTL_PLAN_KEY is set" in result.stderr


class TestHostileFiles:
    """Files no plan looks like fail with one sentence, before they cost time or memory."""

    def test_a_huge_file_is_refused_without_reading_it(self, project, run_cli):
        from surveyctl.reconcile.planfile import MAX_PLAN_BYTES

        with open(project / PLAN, "wb") as handle:
            handle.truncate(MAX_PLAN_BYTES + 1)  # sparse: costs no disk
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert "larger than 64 MiB" in result.stderr

    def test_deeply_nested_json_is_refused(self, project, run_cli):
        (project / PLAN).write_text("[" * 200_000 + "]" * 200_000)
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert "not a surveyctl plan file" in result.stderr
        assert "Traceback" not in result.stderr

    @pytest.mark.parametrize(
        "edit, where",
        [
            (lambda plan: plan.update(resources=[1]), "resources.0"),
            (lambda plan: plan["resources"][0].update(kind="Volcano"), "resources.0.kind"),
            (lambda plan: plan["resources"][0].update(name="../x"), "resources.0.name"),
            (lambda plan: plan.update(notes={"a": 1}), "notes"),
            (lambda plan: plan.update(state_serial="7"), "state_serial"),
        ],
        ids=["resource-not-object", "unknown-kind", "bad-name", "notes-not-list", "serial-text"],
    )
    def test_a_plan_of_the_wrong_shape_is_refused_naming_where(
        self, project, manifests, run_cli, edit, where
    ):
        manifests.write(survey_manifest("tracker"))
        _saved(run_cli)
        _tamper(project, edit)
        result = run_cli("apply", PLAN)
        assert result.exit_code == 1
        assert f"not a valid plan at {where}:" in result.stderr
        assert "Traceback" not in result.stderr


def test_the_applier_refuses_a_delete_the_state_protects_whatever_the_plan_says():
    from surveyctl.errors import SurveyctlError
    from surveyctl.reconcile.plan import Plan, ResourceChange
    from surveyctl.reconcile.tamper import guard_deletes
    from surveyctl.state import State, SurveyRecord

    state = State.empty()
    state.resources["Survey/tracker"] = SurveyRecord(10001, prevent_destroy=True)
    state.resources["Survey/other"] = SurveyRecord(10002)
    plan = Plan("local", state.lineage, 0, destroy=True)
    plan.resources.append(ResourceChange("Survey", "tracker", "delete", remote_id=10001))
    with pytest.raises(SurveyctlError, match="Survey/tracker, which the state protects"):
        guard_deletes(plan, state, destroy=True)
    plan.resources[0] = ResourceChange("Survey", "other", "delete", remote_id=10001)
    with pytest.raises(SurveyctlError, match="does not manage under that id"):
        guard_deletes(plan, state, destroy=True)


def test_a_plan_that_cannot_be_written_is_one_sentence(project, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    (project / "a-file").write_text("not a folder")
    result = run_cli("plan", "manifests", "--out", "a-file/change.plan")
    assert result.exit_code == 1
    assert "cannot write --out a-file/change.plan: a-file is not a folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_plan_whose_shown_change_was_edited_is_refused(project, manifests, api, run_cli):
    # `surveyctl show` renders the file's changes: a reviewer of the edited file read a
    # price that stays 2.5, while apply would have sent 9.5.
    _applied(run_cli, manifests, survey_manifest("tracker"))
    manifests.write(survey_manifest("tracker", offer_price=9.5))
    _saved(run_cli)

    def edit(plan):
        resource = _resource(plan, "Survey/tracker")
        resource["changes"] = [{"path": "survey_title", "old": "a", "new": "b"}]
        resource["spend"] = {"before": 500.0, "after": 500.0}

    _tamper(project, edit)
    assert "survey_title" in run_cli("show", PLAN).stdout
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the plan file is not what its manifests plan now for Survey/tracker" in result.stderr
    assert api.get_survey(_survey_id(project, "tracker"))["offer_price"] == 2.5


def test_a_plan_whose_kept_list_was_edited_is_refused(project, manifests, api, run_cli):
    # The summary a reviewer reads ("1 managed resource not in the manifests; it is kept")
    # comes from the file: one edited to hide that a survey left the manifests is refused.
    _applied(run_cli, manifests, survey_manifest("tracker"), survey_manifest("other"))
    manifests.remove("other")
    manifests.write(survey_manifest("tracker", offer_price=3.0))
    _saved(run_cli)
    assert "Survey/other" in json.loads((project / PLAN).read_text())["plan"]["kept"]

    _tamper(project, lambda plan: plan.update(kept=[]))
    assert "not in the manifests" not in run_cli("show", PLAN).stdout
    result = run_cli("apply", PLAN)
    assert result.exit_code == 1
    assert "the plan file is not what its manifests plan now for Survey/other" in result.stderr
    assert api.get_survey(_survey_id(project, "tracker"))["offer_price"] == 2.5


def test_a_plan_edited_to_carry_a_flood_of_warnings_is_refused_before_it_is_shown(
    project, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    _saved(run_cli)
    _tamper(project, lambda plan: plan.update(warnings=["look here"] * 1000))
    result = run_cli("show", PLAN, "--format", "markdown")
    assert result.exit_code == 1
    assert "not a valid plan at warnings" in result.stderr
    assert "look here" not in result.stdout
