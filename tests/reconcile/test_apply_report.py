"""`apply --format json`: one JSON report on stdout that CI reads instead of the text (what
was done, failed and not attempted, with the remote ids), the plan as text on stderr; over
real HTTP against the sandbox, a proxy refusing what the sandbox would not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from surveyctl.state import FileStateStore

from .conftest import (
    Manifests,
    group_manifest,
    recorded_ids,
    survey_manifest,
    survey_title,
    surveys_applied,
    write_surveys,
)

NAMES = ("alpha", "bravo", "charlie")


def test_apply_json_reports_each_create_with_the_id_the_marketplace_gave(
    run_cli, manifests, project, api
):
    write_surveys(manifests, NAMES, "v1")
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["outcome"] == "complete"
    assert report["summary"] == {
        "imported": 0,
        "added": 3,
        "changed": 0,
        "destroyed": 0,
        "done": 3,
        "failed": 0,
        "not_attempted": 0,
    }
    rows = {row["name"]: row for row in report["resources"]}
    assert sorted(rows) == list(NAMES)
    for name, row in rows.items():
        assert (row["action"], row["status"], row["id_name"]) == ("create", "done", "ps_survey_id")
        assert api.get_survey(row["id"])["survey_title"] == f"{survey_title(name)} v1"
    assert report["plan"]["summary"]["add"] == 3
    assert "Survey/alpha will be created" in result.stderr  # the plan, for the log


def test_apply_json_reports_what_failed_and_what_was_not_attempted(
    run_cli, manifests, project, refusing_proxy
):
    ids = surveys_applied(run_cli, manifests, project, NAMES, "v1")
    refusing_proxy.unwritable, refusing_proxy.unreadable = {ids["alpha"]}, {ids["bravo"]}
    write_surveys(manifests, NAMES, "v2")
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["outcome"] == "incomplete"
    statuses = {row["name"]: (row["status"], row["id"]) for row in report["resources"]}
    assert statuses == {
        "alpha": ("failed", ids["alpha"]),
        "bravo": ("not attempted", ids["bravo"]),
        "charlie": ("done", ids["charlie"]),
    }
    failed = next(row for row in report["resources"] if row["name"] == "alpha")
    assert failed["action"] == "update"
    assert "refused (test)" in failed["message"]
    unread = next(row for row in report["resources"] if row["name"] == "bravo")
    assert (unread["action"], unread["message"]) == (
        "read",
        "its live body could not be read, so it was not planned; run apply again",
    )
    assert report["summary"]["failed"] == 1 and report["summary"]["not_attempted"] == 1


def test_apply_json_says_of_each_done_write_what_it_did_and_to_which_survey(
    run_cli, manifests, project
):
    write_surveys(manifests, NAMES, "v1")
    created = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    write_surveys(manifests, NAMES, "v2")
    updated = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    for result, verb in ((created, "created"), (updated, "updated")):
        assert result.exit_code == 0, result.stderr
        rows = json.loads(result.stdout)["resources"]
        assert len(rows) == len(NAMES)
        assert [row["message"] for row in rows] == [
            f"{verb} ps_survey_id {row['id']}" for row in rows
        ]


def test_apply_json_reports_a_group_not_attempted_when_a_survey_it_names_failed(
    run_cli, manifests, project, refusing_proxy, api, unique
):
    ref = f"trackers-{unique}"
    write_surveys(manifests, NAMES, "v1")
    manifests.write(group_manifest(ref, *NAMES))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    refusing_proxy.unwritable = {recorded_ids(project, NAMES)["alpha"]}
    write_surveys(manifests, NAMES, "v2")
    longer = group_manifest(ref, *NAMES)
    longer["spec"]["exclusion_period"] = 60
    manifests.write(longer)
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 1
    rows = {row["address"]: row for row in json.loads(result.stdout)["resources"]}
    assert rows["Survey/alpha"]["status"] == "failed"
    assert (rows["Survey/bravo"]["status"], rows["Survey/charlie"]["status"]) == ("done", "done")
    group = rows["ExclusionGroup/trackers"]
    assert (group["action"], group["status"], group["message"]) == (
        "update",
        "not attempted",
        "Survey/alpha, which the group names, failed",
    )
    assert api.get_group(ref)["exclusion_period"] == 30


def test_apply_json_of_no_changes_is_a_complete_report_with_no_writes(run_cli, manifests, project):
    write_surveys(manifests, NAMES, "v1")
    run_cli("apply", "manifests", "--auto-approve")
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["outcome"], report["resources"]) == ("complete", [])
    assert report["plan"]["has_changes"] is False


def test_apply_json_of_a_destroy_reports_the_id_of_what_was_deleted(
    run_cli, manifests, project, api
):
    manifests.write(survey_manifest("gone"))
    run_cli("apply", "manifests", "--auto-approve")
    survey_id = (
        FileStateStore(project / ".surveyctl" / "state" / "local.json")
        .load()
        .survey("gone")
        .ps_survey_id
    )
    manifests.remove("gone")
    manifests.write(survey_manifest("kept"))
    result = run_cli("apply", "manifests", "--auto-approve", "--destroy", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["resources"]}
    assert (rows["gone"]["action"], rows["gone"]["status"]) == ("delete", "done")
    assert rows["gone"]["id"] == survey_id


def test_apply_json_reports_a_create_held_back_by_an_unreadable_survey_list_once(
    run_cli, manifests, project, refusing_proxy
):
    # Whether the survey exists already cannot be checked, so it is not created: one row.
    refusing_proxy.list_refused = True
    manifests.write(survey_manifest("alpha"))
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(row["name"], row["action"], row["status"]) for row in report["resources"]] == [
        ("alpha", "create", "not attempted")
    ]
    assert report["resources"][0]["message"] == (
        "whether it exists on the service already could not be checked, so it was not "
        "created; run apply again"
    )
    assert report["summary"]["not_attempted"] == 1


def _adopted_after_a_lost_state(run_cli, manifests: Manifests, project: Path, *extra: str):
    """The survey of manifest alpha applied, the state lost, then `apply --adopt`."""
    manifests.write(survey_manifest("alpha"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    shutil.rmtree(project / ".surveyctl" / "state")
    result = run_cli("apply", "manifests", "--adopt", "--auto-approve", *extra)
    assert result.exit_code == 0, result.stderr
    return result


def test_an_apply_that_adopts_a_survey_counts_it_as_imported(run_cli, manifests, project):
    result = _adopted_after_a_lost_state(run_cli, manifests, project)
    assert result.stdout.splitlines()[-1] == (
        "Apply complete! Resources: 1 imported, 0 added, 0 changed, 0 destroyed."
    )


def test_apply_json_counts_the_surveys_it_adopted(run_cli, manifests, project):
    result = _adopted_after_a_lost_state(run_cli, manifests, project, "--format", "json")
    assert json.loads(result.stdout)["summary"]["imported"] == 1
