"""A plan of some of the project's manifests (PATHS that are not the `manifests:` of
surveyctl.yaml): the resources of the others are unread, not removed."""

from __future__ import annotations

from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.manifests import load_desired
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.state import FileStateStore

from .conftest import group_manifest, survey_manifest
from .test_list_reads import requests, survey_id, survey_reads


def _configured(project: Path) -> None:
    config = project / "surveyctl.yaml"
    config.write_text(config.read_text() + "manifests: [manifests/]\n", encoding="utf-8")


def _applied(run_cli, manifests, *names: str) -> None:
    for name in names:
        manifest = survey_manifest(name, offer_price=1.0, completes_required=10)
        for quota in manifest["spec"]["quotas"]:  # within the goal: no manifest warning
            quota["required_count"] = 5
        manifests.write(manifest)
    result = run_cli("apply", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def test_a_plan_of_one_manifest_says_once_that_the_others_were_not_read(
    project, manifests, run_cli
):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo", "charlie", "delta", "echo")
    result = run_cli("plan", "manifests/alpha.yaml", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout + result.stderr
    notes = result.stdout.split("Notes:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert notes == [
        "  note: 4 managed resources are not in the manifests read (manifests/alpha.yaml): "
        "Survey/bravo, Survey/charlie, Survey/delta and 1 more; nothing is planned for them, "
        "and they were not read (the estimated spend leaves them out). To plan some resources "
        "of the whole project, plan without PATHS and with --target ADDRESS"
    ]
    assert "No changes." in result.stdout
    assert "--destroy" not in result.stdout


def test_a_plan_of_some_manifests_plans_no_delete_even_when_asked_to_destroy(
    project, manifests, run_cli, sandbox
):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo")
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    desired = load_desired([project / "manifests" / "alpha.yaml"])
    request = PlanRequest(desired, state, "local", destroy=True, partial=("manifests/alpha.yaml",))
    plan = make_plan(client, request)
    assert [(r.address, r.action) for r in plan.resources] == [
        ("Survey/alpha", "no-op"),
        ("Survey/bravo", "no-op"),
    ]


def test_a_saved_plan_of_some_manifests_is_applied(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo")
    manifests.write(survey_manifest("alpha", offer_price=1.5, completes_required=10))
    planned = run_cli("plan", "manifests/alpha.yaml", "--out", "change.plan")
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    applied = run_cli("apply", "change.plan")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "Apply complete! Resources: 0 added, 1 changed, 0 destroyed." in applied.stdout


def test_a_plan_of_one_manifest_reads_only_its_own_survey(project, manifests, run_cli):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo", "charlie", "delta", "echo")
    whole = run_cli("--debug", "plan")
    assert len(survey_reads(whole)) == 5
    partial = run_cli("--debug", "plan", "manifests/alpha.yaml")
    assert requests(partial) == [f"GET /surveys/{survey_id(run_cli, 'alpha')}"]


def test_a_plan_of_one_manifest_reads_the_group_its_survey_is_in(
    project, manifests, run_cli, unique
):
    _configured(project)
    manifests.write(group_manifest(f"trackers-{unique}", "alpha", "bravo"))
    _applied(run_cli, manifests, "alpha", "bravo", "charlie")
    partial = run_cli("--debug", "plan", "manifests/alpha.yaml")
    assert sorted(requests(partial)) == [
        f"GET /surveygroups/trackers-{unique}",
        f"GET /surveys/{survey_id(run_cli, 'alpha')}",
    ]


def test_a_plan_of_one_new_manifest_reads_only_the_survey_list_for_its_twin(
    project, manifests, run_cli
):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo", "charlie")
    manifests.write(survey_manifest("delta", offer_price=1.0, completes_required=10))
    partial = run_cli("--debug", "plan", "manifests/delta.yaml")
    assert "+ Survey/delta will be created" in partial.stdout
    assert survey_reads(partial) == []
    assert set(requests(partial)) == {"GET /surveys"}


def test_a_plan_of_some_manifests_asked_to_destroy_reads_none_of_the_others(
    project, manifests, run_cli, sandbox
):
    _configured(project)
    _applied(run_cli, manifests, "alpha", "bravo", "charlie")
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    desired = load_desired([project / "manifests" / "alpha.yaml"])
    request = PlanRequest(desired, state, "local", destroy=True, partial=("manifests/alpha.yaml",))
    plan = make_plan(client, request)
    assert not plan.counts()["destroy"]
    assert client.request_counts == {"GET survey": 1}
