"""A saved plan cannot be edited into something else: apply plans its manifests again, checks
deletes against the state, and, with a plan key, accepts only plans signed with it."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from pathlib import Path

import pytest

from surveyctl.reconcile.plan import FORMAT_VERSION, Plan, ResourceChange
from surveyctl.reconcile.planfile import MAX_PLAN_BYTES, PlanFileError, read_plan, save_plan
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
            (lambda plan: plan.pop("resources"), "top level"),
        ],
        ids=[
            *("resource-not-object", "unknown-kind", "bad-name", "notes-not-list"),
            *("serial-text", "no-resources"),
        ],
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


def _plan() -> Plan:
    plan = Plan("local", "lineage-1", 0, sources=["manifests"])
    plan.resources.append(
        ResourceChange("Survey", "tracker", "create", body={"survey_title": "Café tracker"})
    )
    return plan


def _written(path: Path, edit) -> Path:
    """A saved plan edited as a file, its checksum made again to fit the edited plan."""
    save_plan(_plan(), path)
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document["plan"])
    document["checksum"] = fingerprint(document["plan"])
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _refusal(path: Path, key: bytes | None = None) -> str:
    with pytest.raises(PlanFileError) as refused:
        read_plan(path, key)
    return str(refused.value)


def _bytes_read() -> int:
    """What this process has read so far (Linux)."""
    line = next(x for x in Path("/proc/self/io").read_text().splitlines() if x.startswith("rch"))
    return int(line.split()[1])


needs_proc_io = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc")


class TestSigningRules:
    """The signature and the refusals of a signed plan, as the plan file module says them."""

    def test_the_signature_is_hmac_sha256_of_the_plans_canonical_json(self, tmp_path):
        # Sorted keys, no spaces, UTF-8: what a pipeline that holds the key can check itself.
        save_plan(_plan(), tmp_path / PLAN, b"the key")
        document = json.loads((tmp_path / PLAN).read_text(encoding="utf-8"))
        canonical = json.dumps(
            document["plan"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        digest = hmac.new(b"the key", canonical.encode("utf-8"), hashlib.sha256).hexdigest()
        assert document["signature"] == f"hmac-sha256:{digest}"
        assert read_plan(tmp_path / PLAN, b"the key").verified

    def test_an_unsigned_plan_while_a_key_is_set_says_how_to_make_one(self, tmp_path):
        save_plan(_plan(), tmp_path / PLAN)
        assert _refusal(tmp_path / PLAN, b"the key") == (
            f"{tmp_path / PLAN}: the plan is not signed, and $SURVEYCTL_PLAN_KEY is set, so "
            "only plans signed with that key are applied; make the plan with the same key set"
        )

    def test_a_plan_signed_with_another_key_says_to_make_a_new_plan(self, tmp_path):
        save_plan(_plan(), tmp_path / PLAN, b"another key")
        assert _refusal(tmp_path / PLAN, b"the key") == (
            f"{tmp_path / PLAN}: the plan's signature does not match $SURVEYCTL_PLAN_KEY: it "
            "was signed with another key or edited since; make a new plan"
        )

    def test_show_refuses_an_unsigned_plan_while_a_key_is_set(self, project, run_cli, monkeypatch):
        save_plan(_plan(), project / PLAN)
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "plan-key-of-the-pipeline")
        result = run_cli("show", PLAN)
        assert result.exit_code == 1
        assert "the plan is not signed, and $SURVEYCTL_PLAN_KEY is set" in result.stderr
        assert "Café tracker" not in result.stdout


class TestPlanFileRefusals:
    """Each file that is not a usable plan is refused in one sentence that names it."""

    def test_a_plan_outside_the_project_cannot_be_saved(self, tmp_path):
        plan = _plan()
        plan.sources = ["/srv/elsewhere/manifests"]
        with pytest.raises(PlanFileError) as refused:
            save_plan(plan, tmp_path / PLAN)
        assert str(refused.value) == (
            "cannot save a plan of /srv/elsewhere/manifests: it is outside the project, and "
            "apply plans a saved plan's manifests again from the project's folder; plan "
            "manifests inside the project"
        )

    def test_a_plan_that_cannot_be_written_names_the_file_and_why(self, tmp_path):
        (tmp_path / "a-file").write_text("not a folder")
        path = tmp_path / "a-file" / PLAN
        with pytest.raises(PlanFileError) as refused:
            save_plan(_plan(), path)
        assert str(refused.value) == (
            f"cannot write the plan file: {tmp_path / 'a-file'} is a file where a folder is "
            "expected"
        )

    def test_a_missing_plan_file_is_named(self, tmp_path):
        assert _refusal(tmp_path / PLAN) == f"{tmp_path / PLAN}: no such plan file"

    def test_a_folder_is_not_a_plan_file(self, tmp_path):
        (tmp_path / PLAN).mkdir()
        assert _refusal(tmp_path / PLAN) == f"{tmp_path / PLAN}: is a folder, not a plan file"

    def test_a_plan_under_a_file_says_why_it_cannot_be_read(self, tmp_path):
        (tmp_path / "a-file").write_text("not a folder")
        path = tmp_path / "a-file" / PLAN
        assert _refusal(path) == f"{path}: cannot read the plan file: Not a directory"

    def test_a_file_that_is_not_json_is_not_a_plan_file(self, tmp_path):
        (tmp_path / PLAN).write_text("kind: surveyctl-plan\n")
        assert (
            _refusal(tmp_path / PLAN) == f"{tmp_path / PLAN}: not a surveyctl plan file (not JSON)"
        )

    def test_a_json_file_of_something_else_is_not_a_plan_file(self, tmp_path):
        (tmp_path / PLAN).write_text(json.dumps({"name": "surveys", "version": "1.0.0"}))
        assert _refusal(tmp_path / PLAN) == f"{tmp_path / PLAN}: not a surveyctl plan file"

    def test_a_plan_edited_without_its_checksum_is_refused(self, tmp_path):
        save_plan(_plan(), tmp_path / PLAN)
        document = json.loads((tmp_path / PLAN).read_text(encoding="utf-8"))
        document["plan"]["resources"][0]["body"]["offer_price"] = 99.0
        (tmp_path / PLAN).write_text(json.dumps(document), encoding="utf-8")
        assert _refusal(tmp_path / PLAN) == (
            f"{tmp_path / PLAN}: the plan file is damaged or was edited; make a new plan"
        )

    def test_a_plan_of_another_format_names_both_formats(self, tmp_path):
        path = _written(tmp_path / PLAN, lambda plan: plan.update(format_version=99))
        assert _refusal(path) == (
            f"{path}: plan format 99 is not supported by this surveyctl (it reads format "
            f"{FORMAT_VERSION})"
        )

    def test_a_plan_without_a_required_field_is_refused_at_the_top_level(self, tmp_path):
        path = _written(tmp_path / PLAN, lambda plan: plan.pop("environment"))
        assert _refusal(path) == (
            f"{path}: not a valid plan at top level: 'environment' is a required property"
        )

    def test_a_plan_without_its_resources_is_refused_at_the_top_level(self, tmp_path):
        path = _written(tmp_path / PLAN, lambda plan: plan.pop("resources"))
        assert _refusal(path) == (
            f"{path}: not a valid plan at top level: 'resources' is a required property"
        )

    def test_a_resource_of_an_unknown_kind_is_named_with_its_kind(self, tmp_path):
        path = _written(tmp_path / PLAN, lambda plan: plan["resources"][0].update(kind="Volcano"))
        assert _refusal(path) == (
            f"{path}: not a valid plan at resources.0.kind: 'Volcano' is not a known resource kind"
        )

    def test_a_plan_with_a_field_this_surveyctl_does_not_know_names_it(self, tmp_path):
        path = _written(tmp_path / PLAN, lambda plan: plan.update(surprise=1))
        assert _refusal(path) == (
            f"{path}: not a valid plan at top level: 'surprise' is not a field of a plan this "
            "surveyctl makes; make a new plan"
        )

    def test_a_plan_of_exactly_the_largest_size_is_read(self, tmp_path):
        path = tmp_path / PLAN
        save_plan(_plan(), path)
        with open(path, "ab") as handle:  # JSON allows the spaces after the document
            handle.write(b" " * (MAX_PLAN_BYTES - path.stat().st_size))
        assert path.stat().st_size == MAX_PLAN_BYTES
        assert read_plan(path).plan.resources[0].name == "tracker"

    @needs_proc_io
    def test_a_huge_plan_file_is_refused_without_a_byte_of_it_read(self, tmp_path):
        path = tmp_path / PLAN
        with open(path, "wb") as handle:
            handle.truncate(MAX_PLAN_BYTES + 1)  # sparse: costs no disk
        before = _bytes_read()
        message = _refusal(path)
        assert _bytes_read() - before < 1024 * 1024
        assert message == (
            f"{path}: larger than 64 MiB, far beyond any plan surveyctl writes; refused without "
            "reading it"
        )

    @needs_proc_io
    def test_a_plan_from_a_pipe_is_refused_once_past_the_largest_size_unread_beyond(self, tmp_path):
        # `apply <(curl ...)`: a pipe has no size, so the read itself is bounded.
        pipe = tmp_path / PLAN
        os.mkfifo(pipe)

        def feed():
            chunk = b" " * (1024 * 1024)
            try:
                with open(pipe, "wb") as handle:
                    for _ in range(MAX_PLAN_BYTES // len(chunk) + 16):
                        handle.write(chunk)
            except BrokenPipeError:
                pass  # the reader stopped, as it should

        writer = threading.Thread(target=feed)
        writer.start()
        before = _bytes_read()
        message = _refusal(pipe)
        read = _bytes_read() - before
        writer.join(timeout=60)
        assert "larger than 64 MiB, far beyond any plan surveyctl writes" in message
        assert read < MAX_PLAN_BYTES + 2 * 1024 * 1024
