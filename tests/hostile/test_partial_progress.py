"""Progress under faults: a resource that cannot be read holds back only itself."""

from __future__ import annotations

import json

from .conftest import recorded_ids, survey_manifest, survey_title, surveys_applied, write_surveys

NAMES = ("alpha", "bravo", "charlie")


def test_apply_makes_every_change_it_could_read_and_reports_the_rest(
    project, manifests, refusing_proxy, api, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    write_surveys(manifests, NAMES, "v2")
    refusing_proxy.unreadable = {ids["bravo"]}
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert "Apply incomplete: 2 done, 0 failed, 1 not attempted." in result.stdout
    assert "skipped: Survey/bravo (read): its live body could not be read" in result.stdout
    titles = {name: api.get_survey(i)["survey_title"] for name, i in ids.items()}
    assert titles == {
        "alpha": f"{survey_title('alpha')} v2",
        "bravo": f"{survey_title('bravo')} v1",
        "charlie": f"{survey_title('charlie')} v2",
    }


def test_a_plan_with_an_unreadable_resource_says_so_and_exits_1(
    project, manifests, refusing_proxy, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    refusing_proxy.unreadable = {ids["bravo"]}
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 1
    assert "Survey/bravo: cannot read the live survey" in result.stdout
    assert "1 managed resource could not be read" in result.stdout
    assert "apply refuses it" not in result.stdout


def test_an_apply_left_incomplete_by_an_unreadable_resource_converges_when_run_again(
    project, manifests, refusing_proxy, api, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    write_surveys(manifests, NAMES, "v2")
    refusing_proxy.unreadable = {ids["bravo"]}
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 1
    refusing_proxy.unreadable = set()
    again = run_cli("apply", "manifests", "--auto-approve")
    assert again.exit_code == 0, again.stdout
    assert "Apply complete! Resources: 0 added, 1 changed, 0 destroyed." in again.stdout
    assert api.get_survey(ids["bravo"])["survey_title"] == f"{survey_title('bravo')} v2"
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_a_read_that_fails_once_more_than_the_client_retries_is_tried_again(
    project, manifests, refusing_proxy, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    refusing_proxy.refusals_left = {ids["bravo"]: 1}
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert "No changes." in result.stdout


def _unreadable_notes(output: str, name: str) -> list[str]:
    """The lines of the plan's warnings that removed survey `name` could not be read."""
    start = f"  warning: Survey/{name}: no longer in the manifests; cannot read it: "
    return [line for line in output.splitlines() if line.startswith(start)]


def test_a_removed_survey_that_cannot_be_read_is_a_warning_and_kept_without_destroy(
    project, manifests, refusing_proxy, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    manifests.remove("bravo")
    refusing_proxy.unreadable = {ids["bravo"]}
    plan = run_cli("plan", "manifests")
    (note,) = _unreadable_notes(plan.stdout, "bravo")
    # Without --destroy nothing would be deleted anyway: the note ends with the read's error.
    assert note.endswith("answered 403 (code 1002): refused (test)"), note
    assert (
        "  warning: Survey/bravo: no longer in the manifests; left alone (plan with --destroy to "
        "delete it, or `surveyctl state rm` to stop managing it)"
    ) in plan.stdout.splitlines()


def test_destroy_does_not_delete_a_removed_survey_it_cannot_read(
    project, manifests, refusing_proxy, api, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    manifests.remove("bravo")
    refusing_proxy.unreadable = {ids["bravo"]}
    plan = run_cli("plan", "manifests", "--destroy")
    assert plan.exit_code == 1
    (note,) = _unreadable_notes(plan.stdout, "bravo")
    assert note.endswith("; not deleted until it can be read: plan again")
    assert "0 to destroy" in plan.stdout
    manifests.remove("charlie")  # readable, and planned after bravo: still deleted
    assert "1 to destroy" in run_cli("plan", "manifests", "--destroy").stdout
    result = run_cli("apply", "manifests", "--destroy", "--auto-approve")
    assert result.exit_code == 1
    assert "skipped: Survey/bravo (read): its live body could not be read" in result.stdout
    refusing_proxy.unreadable = set()
    assert api.get_survey(ids["bravo"])["survey_title"] == f"{survey_title('bravo')} v1"


def test_destroy_deletes_a_removed_survey_once_it_can_be_read_again(
    project, manifests, refusing_proxy, api, run_cli
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    bravo = ids["bravo"]
    manifests.remove("bravo")
    refusing_proxy.unreadable = {bravo}
    assert run_cli("apply", "manifests", "--destroy", "--auto-approve").exit_code == 1
    refusing_proxy.unreadable = set()
    again = run_cli("apply", "manifests", "--destroy", "--auto-approve")
    assert again.exit_code == 0, again.stdout
    assert "0 added, 0 changed, 1 destroyed" in again.stdout
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def _lowered_to_completes(project, manifests, sandbox, run_cli) -> None:
    """bravo with 3 completes in quota male, whose required_count the manifest lowers to 3."""
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    for _ in range(3):
        sandbox.store.record_complete(ids["bravo"], ["male"])
    edited = survey_manifest("bravo", survey_title=f"{survey_title('bravo')} v1")
    edited["spec"]["quotas"][0]["required_count"] = 3
    manifests.write(edited)


def test_a_plan_that_cannot_read_quota_performance_says_closing_was_not_checked(
    project, manifests, refusing_proxy, sandbox, run_cli
):
    _lowered_to_completes(project, manifests, sandbox, run_cli)
    refusing_proxy.performance_refused = True
    result = run_cli("plan", "manifests")
    assert "Survey/bravo: cannot read its quota performance (GET " in result.stdout
    assert "whether a lowered required_count closes a quota was not checked" in result.stdout
    assert "will close" not in result.stdout


def test_a_plan_that_reads_quota_performance_says_which_quota_closes(
    project, manifests, refusing_proxy, sandbox, run_cli
):
    _lowered_to_completes(project, manifests, sandbox, run_cli)
    result = run_cli("plan", "manifests")
    assert "quota male will close" in result.stdout
    assert "was not checked" not in result.stdout


def _planned(result) -> dict[str, dict]:
    """The resources of a `plan --format json`, by address."""
    return {r["address"]: r for r in json.loads(result.stdout)["resources"]}


def test_a_kept_survey_keeps_its_id_and_lifecycle_and_unread_has_no_spend(
    project, manifests, refusing_proxy, run_cli
):
    write_surveys(manifests, NAMES, "v1")
    guarded = survey_manifest("bravo", survey_title=f"{survey_title('bravo')} v1")
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    ids = recorded_ids(project, NAMES)
    manifests.remove("bravo")
    manifests.remove("charlie")
    refusing_proxy.unreadable = {ids["bravo"]}
    planned = _planned(run_cli("plan", "manifests", "--format", "json"))
    bravo, charlie = planned["Survey/bravo"], planned["Survey/charlie"]
    assert (bravo["action"], bravo["remote_id"], bravo["prevent_destroy"]) == (
        "no-op",
        ids["bravo"],
        True,
    )
    assert bravo["spend"] is None  # unread: what it spends is not known
    assert (charlie["action"], charlie["remote_id"], charlie["prevent_destroy"]) == (
        "no-op",
        ids["charlie"],
        False,
    )
    assert charlie["spend"] == {"before": 500.0, "after": 500.0}


def test_a_plan_of_new_surveys_holds_back_no_create(project, manifests, run_cli):
    write_surveys(manifests, NAMES, "v1")
    result = run_cli("plan", "manifests", "--format", "json")
    document = json.loads(result.stdout)
    assert document["blocked"] == []
    assert "blocked" not in document["summary"]["text"]
