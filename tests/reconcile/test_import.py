"""import over real HTTP: an imported survey behaves like one surveyctl created."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from surveyctl.manifests import load_desired
from surveyctl.state import FileStateStore
from surveyctl.state.file.lock import StateLock

from .conftest import point_project_at, survey_manifest
from .proxies import QuirkyProxy

AGE = {"qualification_code": 212, "range_sets": [{"from": 21, "to": 45, "units": 311}]}


def _state(project: Path):
    return FileStateStore(project / ".surveyctl" / "state" / "local.json").load()


@pytest.fixture(params=["faithful", "strict"])
def sandbox(request, sandbox, strict_sandbox):
    """Each import test against the default sandbox, then against one served --strict: an
    apply after an import sends nothing a strict sandbox refuses."""
    return strict_sandbox if request.param == "strict" else sandbox


@pytest.fixture
def proxy(sandbox):
    """The sandbox seen through the documented response shapes (see proxies.py)."""
    running = QuirkyProxy(sandbox.url)
    yield running
    running.stop()


def _import(run_cli, survey_id: int, name: str = "adopted"):
    result = run_cli("import", str(survey_id), "--name", name, "--out", f"manifests/{name}.yaml")
    assert result.exit_code == 0, result.stderr
    return result


def _targeted_survey() -> dict:
    """A survey with an age range in a qualification and a quota, priced without decimals."""
    spec = survey_manifest("x", offer_price=10.0)["spec"]
    spec["qualifications"].append(AGE)
    spec["quotas"][0]["criteria"].append(AGE)
    return spec


def test_import_records_the_manifest_it_writes_as_last_applied(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    _import(run_cli, survey_id)
    desired = load_desired([project / "manifests"])
    record = _state(project).survey("adopted")
    assert record.ps_survey_id == survey_id
    assert record.last_applied == desired.surveys["adopted"].body()


def test_an_imported_manifest_is_already_formatted(project, api, run_cli):
    survey_id = api.create_survey(_targeted_survey())["ps_survey_id"]
    _import(run_cli, survey_id)
    checked = run_cli("fmt", "--check", "manifests/adopted.yaml")
    assert checked.exit_code == 0, checked.stdout
    assert "0 file(s) would be reformatted" in checked.stderr


def test_a_field_removed_from_an_imported_manifest_is_planned_as_a_reset(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    _import(run_cli, survey_id)
    path = project / "manifests" / "adopted.yaml"
    manifest = yaml.safe_load(path.read_text())
    del manifest["spec"]["test_url"]
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 2, plan.stdout
    assert "- test_url:" in plan.stdout
    assert "Plan: 0 to add, 1 to change, 0 to destroy." in plan.stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert api.get_survey(survey_id)["test_url"] is None


def test_a_managed_field_changed_in_the_marketplace_after_import_is_drift(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    _import(run_cli, survey_id)
    from surveyctl.reconcile.normalise import update_body

    api.update_survey(survey_id, {**update_body(api.get_survey(survey_id)), "offer_price": 4.0})
    plan = run_cli("plan", "manifests")
    assert "! drift: offer_price was 2.5 when last applied, is 4 live" in plan.stdout


def test_import_without_out_prints_the_manifest_and_records_nothing(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "adopted")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["name"] == "adopted"
    assert _state(project).addresses() == []
    assert "Nothing was recorded in the state" in result.stderr
    assert f"surveyctl import {survey_id} --name adopted --out FILE" in result.stderr


def test_plan_destroy_after_an_import_without_out_deletes_nothing(project, api, manifests, run_cli):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    run_cli("import", str(survey_id), "--name", "adopted")
    plan = run_cli("plan", "manifests", "--destroy", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout
    assert "0 to destroy" in plan.stdout or "No changes." in plan.stdout
    assert survey_id in {s["ps_survey_id"] for s in api.list_surveys()}


def test_import_leaves_out_what_the_service_fills_in(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    live = api.get_survey(survey_id)
    assert live["billing_id"] == f"PS{survey_id}" and live["click_balancing"] == 0
    _import(run_cli, survey_id)
    spec = yaml.safe_load((project / "manifests" / "adopted.yaml").read_text())["spec"]
    for filled_in in ("billing_id", "click_balancing", "incl_excl", "qlc", "qbp", "feot"):
        assert filled_in not in spec
    assert all("quota_title" not in quota for quota in spec["quotas"])
    assert "ps_quota_id" not in str(spec)


def test_import_keeps_a_billing_id_the_buyer_chose(project, api, run_cli):
    survey = survey_manifest("x", billing_id="PO-4711")["spec"]
    survey_id = api.create_survey(survey)["ps_survey_id"]
    _import(run_cli, survey_id)
    spec = yaml.safe_load((project / "manifests" / "adopted.yaml").read_text())["spec"]
    assert spec["billing_id"] == "PO-4711"


def test_a_survey_read_in_the_documented_shapes_imports_as_a_valid_manifest(
    project, api, proxy, run_cli
):
    survey_id = api.create_survey(_targeted_survey())["ps_survey_id"]
    point_project_at(project, proxy.url)
    _import(run_cli, survey_id)
    spec = yaml.safe_load((project / "manifests" / "adopted.yaml").read_text())["spec"]
    assert spec["offer_price"] == 10
    assert spec["qualifications"][1]["range_sets"] == [{"from": 21, "to": 45, "units": 311}]
    assert spec["quotas"][0]["criteria"][1]["range_sets"][0]["from"] == 21
    assert "mod_on" not in spec and "crtd_on" not in spec
    assert all("quota_title" not in quota for quota in spec["quotas"])
    validated = run_cli("validate", "manifests")
    assert validated.exit_code == 0, validated.stdout + validated.stderr


def test_a_survey_imported_from_the_documented_shapes_plans_no_changes_and_no_drift(
    project, api, sandbox, proxy, run_cli
):
    survey_id = api.create_survey(_targeted_survey())["ps_survey_id"]
    point_project_at(project, proxy.url)
    _import(run_cli, survey_id)
    point_project_at(project, sandbox.url)  # the same environment, read as the sandbox answers
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout
    assert "No changes." in plan.stdout and "drift" not in plan.stdout


def test_an_imported_survey_planned_against_the_documented_shapes_shows_no_changes(
    project, api, proxy, run_cli
):
    survey_id = api.create_survey(_targeted_survey())["ps_survey_id"]
    point_project_at(project, proxy.url)
    _import(run_cli, survey_id)
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout


def _manifests_in_examples(project: Path) -> None:
    config = project / "surveyctl.yaml"
    config.write_text(config.read_text() + "manifests: [examples/]\n")


def test_import_never_overwrites_an_existing_out_file(project, api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    mine = project / "manifests" / "adopted.yaml"
    mine.parent.mkdir()
    mine.write_text("# a manifest of mine\n")
    result = run_cli("import", str(survey_id), "--name", "adopted", "--out", str(mine))
    assert result.exit_code == 1
    assert f"{mine} exists already; choose another --out" in result.stderr
    assert mine.read_text() == "# a manifest of mine\n"
    assert not (project / ".surveyctl" / "state" / "local.json").exists()


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        (["--program", "p", "1"], "--program takes no SURVEY_ID, --name, --out or --out-dir"),
        (["--all-unmanaged", "1"], "--all-unmanaged takes no SURVEY_ID, --name or --out"),
        (["1"], "give SURVEY_ID and --name NAME (or --all-unmanaged --out-dir DIR)"),
        (["1", "--name", "x", "--out-dir", "d"], "--out-dir goes with --all-unmanaged"),
    ],
)
def test_import_refuses_options_that_do_not_go_together(project, run_cli, arguments, refusal):
    result = run_cli("import", *arguments)
    assert result.exit_code == 2
    assert refusal in result.stderr
    assert not (project / ".surveyctl").exists()


def test_import_refuses_an_out_outside_the_configured_manifests(project, api, run_cli):
    _manifests_in_examples(project)
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "x", "--out", "surveys/x.yaml")
    assert result.exit_code == 1
    assert "surveys/x.yaml is outside the manifests of surveyctl.yaml (examples/)" in result.stderr
    assert "`plan --destroy` would destroy it" in result.stderr
    assert not (project / "surveys" / "x.yaml").exists()
    assert _state(project).resources == {}


def test_import_with_force_writes_outside_the_manifests_and_says_so(project, api, run_cli):
    _manifests_in_examples(project)
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    args = ("import", str(survey_id), "--name", "x", "--out", "surveys/x.yaml", "--force")
    result = run_cli(*args)
    assert result.exit_code == 0, result.stderr
    assert "warning: surveys/x.yaml is outside the manifests" in result.stderr
    assert _state(project).survey("x").ps_survey_id == survey_id


def test_import_into_the_configured_manifests_plans_no_changes(project, api, run_cli):
    _manifests_in_examples(project)
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("import", str(survey_id), "--name", "x", "--out", "examples/x.yaml")
    assert result.exit_code == 0, result.stderr
    assert run_cli("plan", "--detailed-exitcode").exit_code == 0


def test_import_all_refuses_an_out_dir_outside_the_configured_manifests(project, api, run_cli):
    _manifests_in_examples(project)
    result = run_cli("import", "--all-unmanaged", "--out-dir", "surveys/imported")
    assert result.exit_code == 1
    assert "surveys/imported is outside the manifests of surveyctl.yaml" in result.stderr
    assert not (project / "surveys").exists()


def _lost_state(project, manifests, run_cli) -> int:
    """Survey/tracker applied, then its state deleted: the plan finds it as a twin."""
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    survey_id = _state(project).survey("tracker").ps_survey_id
    (project / ".surveyctl" / "state" / "local.json").unlink()
    return survey_id


def test_the_import_a_twin_note_names_records_the_twin_whose_manifest_exists(
    project, manifests, run_cli
):
    survey_id = _lost_state(project, manifests, run_cli)
    config = project / "surveyctl.yaml"
    config.write_text(config.read_text() + "manifests: [manifests/]\n")
    plan = run_cli("plan")
    assert f"`surveyctl import {survey_id} --name tracker`" in plan.stdout
    written = (project / "manifests" / "tracker.yaml").read_text()
    result = run_cli("import", str(survey_id), "--name", "tracker")
    assert result.exit_code == 0, result.stderr
    assert "Recorded Survey/tracker as survey" in result.stderr
    assert (project / "manifests" / "tracker.yaml").read_text() == written
    record = _state(project).survey("tracker")
    assert (record.ps_survey_id, record.last_applied) == (survey_id, None)
    assert run_cli("plan", "--detailed-exitcode").exit_code == 0


def test_import_finds_the_manifest_in_the_manifests_named(project, manifests, run_cli):
    survey_id = _lost_state(project, manifests, run_cli)
    result = run_cli("import", str(survey_id), "--name", "tracker", "--manifests", "manifests")
    assert result.exit_code == 0, result.stderr
    assert _state(project).survey("tracker").ps_survey_id == survey_id


def test_import_refuses_to_record_another_survey_than_its_manifest_describes(
    project, api, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    other = api.create_survey(survey_manifest("other")["spec"])["ps_survey_id"]
    result = run_cli("import", str(other), "--name", "tracker", "--manifests", "manifests")
    assert result.exit_code == 1
    assert f"survey {other} (" in result.stderr
    assert "is not the survey its manifest describes" in result.stderr
    assert _state(project).resources == {}


def test_import_with_force_records_another_survey_for_an_existing_manifest(
    project, api, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    other = api.create_survey(survey_manifest("other")["spec"])["ps_survey_id"]
    args = ("import", str(other), "--name", "tracker", "--manifests", "manifests", "--force")
    result = run_cli(*args)
    assert result.exit_code == 0, result.stderr
    assert "(--force given)" in result.stderr
    assert _state(project).survey("tracker").ps_survey_id == other


@pytest.mark.parametrize(
    "command",
    [
        ["import", "{survey_id}", "--name", "adopted", "--out", "manifests/adopted.yaml"],
        ["import-group", "trackers-2026", "--name", "trackers", "--out", "manifests/g.yaml"],
        ["import", "--all-unmanaged", "--out-dir", "manifests/imported"],
    ],
    ids=["import", "import-group", "all-unmanaged"],
)
def test_an_import_with_a_lock_timeout_waits_for_the_holder_then_names_the_wait(
    command, project, api, run_cli
):
    # The refusal without it says "wait for it (or pass --lock-timeout SECONDS)".
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    arguments = [word.format(survey_id=survey_id) for word in command]
    state_path = project / ".surveyctl" / "state" / "local.json"
    with StateLock(state_path, "apply", environment="local"):
        result = run_cli(*arguments, "--lock-timeout", "0.3", "--yes")
    assert result.exit_code == 1
    assert "after waiting 0.3s" in result.stderr
    assert _state(project).survey("adopted") is None


# -- options of another form of import are refused, not ignored -----------------------------


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (
            ["import", "10001", "--name", "x", "--out", "manifests/x.yaml", "--manifests", "m"],
            "--out writes a new manifest and --manifests names the existing one: give one",
        ),
        (
            ["import-group", "ref", "--name", "x", "--out", "manifests/x.yaml", "--manifests", "m"],
            "--out writes a new manifest and --manifests names the existing one: give one",
        ),
        (
            ["import", "10001", "--name", "x", "--status", "live"],
            "--status goes with --all-unmanaged; SURVEY_ID names one survey",
        ),
        (["import", "--program", "p", "--status", "live"], "--program takes no --status"),
        (["import", "--program", "p", "--force"], "--program takes no --status or --force"),
        (
            ["import", "--all-unmanaged", "--out-dir", "manifests/i", "--manifests", "manifests"],
            "--manifests goes with --program or --name, not --all-unmanaged",
        ),
    ],
)
def test_an_option_the_form_of_import_does_not_take_is_a_usage_error(
    project, run_cli, args, sentence
):
    result = run_cli(*args)
    assert result.exit_code == 2
    assert f"Error: {sentence}" in result.stderr
    assert not (project / "manifests").exists()
    assert not (project / ".surveyctl" / "state").exists()
