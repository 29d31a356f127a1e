"""plan and apply over real HTTP against the sandbox: what the plan shows is what apply does.

Every test runs twice: against the sandbox in its default (faithful) mode, and against one
served --strict, so surveyctl never depends on the sandbox's leniency and never sends a field
a strict sandbox refuses."""

from __future__ import annotations

import json
import threading

import pytest

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.errors import ApiError
from surveyctl.manifests import load_desired
from surveyctl.reconcile.apply import INTERRUPTED, apply_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.state import FileStateStore

from .conftest import group_manifest, pointed_at, survey_manifest, survey_title, title_tag
from .proxies import Proxy, RefusingProxy


@pytest.fixture(params=["faithful", "strict"])
def sandbox(request, sandbox, strict_sandbox):
    """The session's sandbox, then the strict one (the project fixture points at it too)."""
    return strict_sandbox if request.param == "strict" else sandbox


def _store(project) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _plan(project, client: ApiClient, destroy: bool = False):
    desired = load_desired([project / "manifests"], Catalog(lambda: client, "local", None))
    return make_plan(client, PlanRequest(desired, _store(project).load(), "local", destroy))


def _apply(project, client: ApiClient, destroy: bool = False):
    plan = _plan(project, client, destroy)
    result = apply_plan(plan, client, _store(project))
    assert not result.failed, result.failed
    return plan


def _fresh_client(sandbox) -> ApiClient:
    return ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)


def _tracker_applied(project, manifests, sandbox) -> tuple[ApiClient, int]:
    """Survey tracker written and applied: the client that applied it, and the survey's id."""
    manifests.write(survey_manifest("tracker"))
    client = _fresh_client(sandbox)
    _apply(project, client)
    return client, _store(project).load().survey("tracker").ps_survey_id


def _changed_by_hand(client: ApiClient, survey_id: int, **fields) -> None:
    """An update of the live survey outside surveyctl: its live body with `fields`."""
    from surveyctl.reconcile.normalise import update_body

    client.update_survey(survey_id, {**update_body(client.get_survey(survey_id)), **fields})


def _group_applied(project, manifests, sandbox, unique) -> str:
    """Survey tracker-a and group trackers of it, applied; the group's reference."""
    manifests.write(survey_manifest("tracker-a"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a"))
    _apply(project, _fresh_client(sandbox))
    return ref


def _group_changed_by_hand(client: ApiClient, ref: str, **fields) -> None:
    """An update of the live group outside surveyctl: its live body with `fields`."""
    from surveyctl.reconcile.normalise import group_update_body

    client.update_group(ref, {**group_update_body(client.get_group(ref)), **fields})


def _line_holding(output: str, words: str) -> str:
    """The one line of `output` that holds `words`, stripped."""
    (line,) = [row.strip() for row in output.splitlines() if words in row]
    return line


def _plan_through(project, proxy: Proxy, run_cli):
    """`surveyctl plan` with the project pointed at `proxy`, which is stopped after."""
    with pointed_at(project, proxy):
        return run_cli("plan", "manifests")


def test_apply_then_plan_shows_no_changes(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("concept", completes_required=300))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.output + applied.stderr
    assert "Apply complete! Resources: 2 added, 0 changed, 0 destroyed." in applied.stdout
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0, replanned.stdout
    assert "No changes." in replanned.stdout


def test_a_created_survey_is_recorded_with_the_body_sent_its_protection_and_its_version(
    project, manifests, sandbox, run_cli
):
    manifest = survey_manifest("tracker")
    manifest["lifecycle"] = {"prevent_destroy": True}
    manifests.write(manifest)
    applied = run_cli("apply", "manifests", "--auto-approve")
    record = _store(project).load().survey("tracker")
    assert f"create ok created ps_survey_id {record.ps_survey_id}" in applied.stderr
    live = _fresh_client(sandbox).get_survey(record.ps_survey_id)
    assert (record.last_applied, record.prevent_destroy) == (manifest["spec"], True)
    assert (record.mod_on, set(record.quota_ids)) == (live["mod_on"], {"male", "female"})


def test_plan_of_a_new_survey_lists_it_as_a_create(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 2
    assert "+ Survey/tracker will be created" in result.stdout
    assert "+ quotas[male]: 100 completes; Gender: Male (111)" in result.stdout
    assert "+ quotas[female]: 100 completes; Gender: Female (112)" in result.stdout
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in result.stdout


def test_every_command_names_its_environment_on_stderr(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests")
    assert "environment local" in result.stderr
    assert "environment" not in result.stdout.split("\n")[0]


def test_editing_a_quota_count_sends_only_that_quota_put(project, manifests, sandbox):
    _tracker_applied(project, manifests, sandbox)
    edited = survey_manifest("tracker")
    edited["spec"]["quotas"][0]["required_count"] = 80
    manifests.write(edited)
    client = _fresh_client(sandbox)
    plan = _plan(project, client)
    (change,) = [r for r in plan.resources if r.is_change]
    assert change.action == "quota-update"
    assert list(change.quota_updates) == ["male"]
    client.request_counts.clear()
    apply_plan(plan, client, _store(project))
    assert client.request_counts == {"PUT quota": 1}
    live = client.get_survey(change.remote_id)
    assert {q["buyer_quota_id"]: q["required_count"] for q in live["quotas"]} == {
        "male": 80,
        "female": 100,
    }


def test_a_quota_put_records_the_manifests_body_as_applied(project, manifests, sandbox):
    _tracker_applied(project, manifests, sandbox)
    edited = survey_manifest("tracker")
    edited["spec"]["quotas"][0]["required_count"] = 80
    manifests.write(edited)
    plan = _apply(project, _fresh_client(sandbox))
    assert [r.action for r in plan.resources] == ["quota-update"]
    recorded = _store(project).load().survey("tracker").last_applied
    assert [q["required_count"] for q in recorded["quotas"]] == [80, 100]


def test_an_apply_of_quota_puts_names_each_quota_it_updated(project, manifests, sandbox, run_cli):
    manifests.write(survey_manifest("tracker"))
    run_cli("apply", "manifests", "--auto-approve")
    edited = survey_manifest("tracker")
    for quota in edited["spec"]["quotas"]:
        quota["required_count"] = 90
    manifests.write(edited)
    applied = run_cli("apply", "manifests", "--auto-approve")
    survey_id = _store(project).load().survey("tracker").ps_survey_id
    assert f"updated quotas female, male of ps_survey_id {survey_id}" in applied.stderr


def test_title_edit_is_one_full_put_that_keeps_outside_fields_and_resets_dropped_ones(
    project, manifests, sandbox
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    # Someone sets buyer_message by a direct API call, outside surveyctl.
    _changed_by_hand(client, survey_id, buyer_message="set by hand")
    edited = survey_manifest("tracker", survey_title="Tracker, renamed")
    del edited["spec"]["test_url"]
    manifests.write(edited)
    client.request_counts.clear()
    plan = _plan(project, client)
    (change,) = [r for r in plan.resources if r.is_change]
    assert change.action == "update"
    assert {c.path for c in change.changes} == {"survey_title", "test_url"}
    apply_plan(plan, client, _store(project))
    assert client.request_counts["PUT survey"] == 1
    after = client.get_survey(survey_id)
    assert after["survey_title"] == "Tracker, renamed"
    assert after["buyer_message"] == "set by hand"
    assert after["test_url"] is None


def test_plan_marks_drift_of_a_managed_field_changed_outside(project, manifests, sandbox, run_cli):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    _changed_by_hand(client, survey_id, offer_price=4.0)
    result = run_cli("plan", "manifests")
    assert "! drift: offer_price was 2.5 when last applied, is 4 live" in result.stdout
    assert "~ offer_price: 4 -> 2.5" in result.stdout


def test_json_plan_has_format_version_and_the_changes(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "json")
    data = json.loads(result.stdout)
    assert data["format_version"] == 1
    assert data["summary"]["add"] == 1
    assert data["resources"][0]["address"] == "Survey/tracker"
    assert data["resources"][0]["action"] == "create"


def test_markdown_plan_starts_with_a_summary_table(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--format", "markdown")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("### surveyctl plan")
    assert "| `Survey/tracker` | create |" in result.stdout
    assert "<details" in result.stdout


def test_plan_shows_estimated_spend_before_and_after(project, manifests, sandbox, run_cli):
    _tracker_applied(project, manifests, sandbox)
    manifests.write(survey_manifest("tracker", offer_price=3.0))
    result = run_cli("plan", "manifests")
    assert "spend: $500.00 -> $600.00" in result.stdout
    assert "Estimated spend: $500.00 -> $600.00 (+$100.00)." in result.stdout


def test_lowering_a_quota_to_its_completes_notes_that_it_closes(project, manifests, sandbox):
    _, survey_id = _tracker_applied(project, manifests, sandbox)
    store = sandbox.store
    for _ in range(3):
        store.record_complete(survey_id, ["male"])
    edited = survey_manifest("tracker")
    edited["spec"]["quotas"][0]["required_count"] = 3
    manifests.write(edited)
    plan = _plan(project, _fresh_client(sandbox))
    assert any("quota male will close" in note.message for note in plan.notes)


def test_removed_survey_is_left_alone_without_destroy(project, manifests, sandbox, run_cli):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("other"))
    _apply(project, _fresh_client(sandbox))
    manifests.remove("other")
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0
    assert "Survey/other: no longer in the manifests; left alone" in result.stdout


def test_destroy_deletes_a_removed_survey(project, manifests, sandbox, run_cli):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("other"))
    client = _fresh_client(sandbox)
    _apply(project, client)
    survey_id = _store(project).load().survey("other").ps_survey_id
    manifests.remove("other")
    result = run_cli("apply", "manifests", "--destroy", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "- Survey/other" in result.stdout
    assert _store(project).load().survey("other") is None
    assert survey_id not in {s["ps_survey_id"] for s in client.list_surveys()}


def test_prevent_destroy_blocks_a_destroy(project, manifests, sandbox, run_cli):
    guarded = survey_manifest("guarded")
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    _tracker_applied(project, manifests, sandbox)
    manifests.remove("guarded")
    manifests.write(survey_manifest("next"))  # the folder keeps a manifest
    manifests.remove("tracker")  # unprotected, and planned after `guarded`: still deleted
    result = run_cli("plan", "manifests", "--destroy")
    assert result.exit_code == 1
    assert "prevent_destroy forbids deleting it" in result.stdout
    assert "Plan: 1 to add, 0 to change, 1 to destroy." in result.stdout


def _applied_then_ignoring_a_new_price(project, manifests, sandbox) -> None:
    """Survey `tracker` applied at $2.50, then its manifest at $9 with offer_price ignored."""
    _tracker_applied(project, manifests, sandbox)
    edited = survey_manifest("tracker", offer_price=9.0)
    edited["lifecycle"] = {"ignore_changes": ["offer_price"]}
    manifests.write(edited)


def test_ignore_changes_keeps_the_live_value(project, manifests, sandbox, run_cli):
    _applied_then_ignoring_a_new_price(project, manifests, sandbox)
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout
    assert "No changes." in result.stdout


def test_an_ignored_field_is_not_recorded_as_applied(project, manifests, sandbox, run_cli):
    _applied_then_ignoring_a_new_price(project, manifests, sandbox)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().survey("tracker").last_applied["offer_price"] == 2.5


def test_the_fields_not_ignored_are_recorded_as_the_manifest_has_them(
    project, manifests, sandbox, run_cli
):
    _applied_then_ignoring_a_new_price(project, manifests, sandbox)
    edited = survey_manifest("tracker", offer_price=9.0, completes_required=300)
    edited["lifecycle"] = {"ignore_changes": ["offer_price"]}
    manifests.write(edited)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    recorded = _store(project).load().survey("tracker").last_applied
    assert recorded == {**edited["spec"], "offer_price": 2.5}


def test_a_field_no_longer_ignored_is_planned_from_its_live_value(
    project, manifests, sandbox, run_cli
):
    _applied_then_ignoring_a_new_price(project, manifests, sandbox)
    run_cli("apply", "manifests", "--auto-approve")
    manifests.write(survey_manifest("tracker", offer_price=9.0))
    result = run_cli("plan", "manifests", "--format", "json")
    (change,) = json.loads(result.stdout)["resources"]
    assert change["action"] == "update"
    assert [(c["path"], c["old"], c["new"]) for c in change["changes"]] == [
        ("offer_price", 2.5, 9.0)
    ]
    assert change["drift"] == []


def test_qlc_change_on_a_survey_that_has_been_live_is_an_error_before_any_write(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    client.set_survey_status(survey_id, 22)
    path = manifests.write(
        survey_manifest("tracker", qlc={"enable": True, "multiple_quotas": {"enable": True}})
    )
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert "QLC cannot change once a survey has been live" in result.stdout
    line = path.read_text().splitlines().index("  qlc:") + 1
    assert f"(manifests/tracker.yaml:{line}:" in result.stdout  # at the field, not the top
    assert client.get_survey(survey_id)["qlc"]["enable"] is False


def test_exclusion_group_is_created_after_the_surveys_it_names(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a", "tracker-b"))
    plan = run_cli("plan", "manifests")
    assert '+ surveys: ["tracker-a", "tracker-b"]' in plan.stdout
    assert "surveys_in_group" not in plan.stdout  # empty: the ids come after apply
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    state = _store(project).load()
    ids = sorted([state.survey("tracker-a").ps_survey_id, state.survey("tracker-b").ps_survey_id])
    group = _fresh_client(sandbox).get_group(ref)
    assert sorted(group["surveys_in_group"]) == ids
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0, replanned.stdout


def test_a_created_group_is_recorded_with_the_body_sent_and_its_prevent_destroy(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    ref = f"trackers-{unique}"
    group = group_manifest(ref, "tracker-a")
    group["lifecycle"] = {"prevent_destroy": True}
    manifests.write(group)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    state = _store(project).load()
    survey_id = state.survey("tracker-a").ps_survey_id
    record = state.group("trackers")
    assert (record.prevent_destroy, record.ps_survey_ids) == (True, [survey_id])
    assert record.last_applied == {
        "buyer_surveygroup_ref": ref,
        "name": "Trackers",
        "exclusion_period": 30,
        "surveys_in_group": [survey_id],
    }


def test_a_group_naming_a_survey_whose_create_failed_is_not_attempted_and_says_why(
    manifests, unique, run_cli, monkeypatch
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker-a"))

    def refused(client, body):
        raise ApiError("POST", "/surveys", 400, 1004, "refused")

    monkeypatch.setattr(ApiClient, "create_survey", refused)
    result = run_cli("apply", "manifests", "--auto-approve", "--format", "json")
    assert result.exit_code == 1
    rows = {row["address"]: row for row in json.loads(result.stdout)["resources"]}
    group = rows["ExclusionGroup/trackers"]
    assert (group["status"], group["message"]) == (
        "not attempted",
        "Survey/tracker-a, which the group names, failed",
    )


class Deletes(Proxy):
    """Keeps the path of every DELETE, in the order they arrived."""

    def __init__(self, upstream: str):
        self.deleted: list[str] = []
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "DELETE" and answer.ok:
            self.deleted.append(request.path)
        return answer.content


def test_destroy_deletes_a_group_before_the_surveys_it_names(project, manifests, sandbox, unique):
    # The group would otherwise name surveys gone from the marketplace until it is deleted.
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a", "tracker-b"))
    _apply(project, _fresh_client(sandbox))
    manifests.remove("tracker-a")
    manifests.remove("tracker-b")
    manifests.remove("trackers")
    manifests.write(survey_manifest("kept"))
    proxy = Deletes(sandbox.url)
    try:
        plan = _plan(project, _fresh_client(sandbox), destroy=True)
        with ApiClient(proxy.url, "sandbox-buyer-1", retries=0) as client:
            result = apply_plan(plan, client, _store(project))
    finally:
        proxy.stop()
    assert not result.failed, result.failed
    assert [path.split("/")[-2] for path in proxy.deleted] == ["surveygroups", "surveys", "surveys"]
    assert proxy.deleted[0].endswith(f"/{ref}")


def test_group_membership_is_carried_over_by_a_survey_update(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a", "tracker-b"))
    run_cli("apply", "manifests", "--auto-approve")
    manifests.write(survey_manifest("tracker-a", survey_title="Renamed"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout
    assert len(_fresh_client(sandbox).get_group(ref)["surveys_in_group"]) == 2


def test_a_group_member_swapped_for_a_new_survey_is_one_change_of_the_members(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a", "tracker-b"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    state = _store(project).load()
    a, b = state.survey("tracker-a").ps_survey_id, state.survey("tracker-b").ps_survey_id
    manifests.write(survey_manifest("tracker-c", survey_title="Tracker C"))
    manifests.write(group_manifest(ref, "tracker-b", "tracker-c"))
    plan = run_cli("plan", "manifests", "--format", "json")
    (group,) = [r for r in json.loads(plan.stdout)["resources"] if r["kind"] == "ExclusionGroup"]
    members = [(c["old"], c["new"]) for c in group["changes"] if c["path"] == "surveys_in_group"]
    assert members == [(sorted([a, b]), [b, "tracker-c (known after apply)"])]


def test_import_writes_a_manifest_and_a_plan_after_it_shows_no_changes(project, api, run_cli):
    created = api.create_survey(survey_manifest("x")["spec"])
    result = run_cli(
        "import",
        str(created["ps_survey_id"]),
        "--name",
        "adopted",
        "--out",
        "manifests/adopted.yaml",
    )
    assert result.exit_code == 0, result.stderr
    text = (project / "manifests" / "adopted.yaml").read_text()
    assert "ps_survey_id" not in text and "ps_quota_id" not in text
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0, replanned.stdout
    assert "No changes." in replanned.stdout


def test_import_refuses_a_name_that_validate_would_refuse(project, api, run_cli):
    created = api.create_survey(survey_manifest("x")["spec"])
    result = run_cli(
        "import", str(created["ps_survey_id"]), "--name", "Old Tracker", "--out", "old.yaml"
    )
    assert result.exit_code == 1
    assert "'Old Tracker' is not a valid resource name" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / "old.yaml").exists()
    assert _store(project).load().addresses() == []


def test_an_imported_name_passes_validate(project, api, run_cli):
    created = api.create_survey(survey_manifest("x")["spec"])
    run_cli("import", str(created["ps_survey_id"]), "--name", "old--tracker", "--out", "m/o.yaml")
    validated = run_cli("validate", "m", "--offline")
    assert validated.exit_code == 0, validated.stdout


def test_import_refuses_a_survey_already_managed(project, manifests, sandbox, run_cli):
    _, survey_id = _tracker_applied(project, manifests, sandbox)
    result = run_cli("import", str(survey_id), "--name", "again")
    assert result.exit_code == 1
    assert "already managed as Survey/tracker" in result.stderr


def test_apply_without_a_terminal_needs_auto_approve(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("apply", "manifests")
    assert result.exit_code == 1
    assert "--auto-approve" in result.stderr


def test_protected_environment_refuses_auto_approve_unless_named(
    project, sandbox, monkeypatch, run_cli, manifests
):
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  prod: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY, protected: true}}\n"
        "default_environment: prod\n"
    )
    manifests.write(survey_manifest("tracker"))
    refused = run_cli("apply", "manifests", "--auto-approve")
    assert refused.exit_code == 1
    assert "protected" in refused.stderr and "--env prod" in refused.stderr
    allowed = run_cli("--env", "prod", "apply", "manifests", "--auto-approve")
    assert allowed.exit_code == 0, allowed.stdout + allowed.stderr


def test_manifest_errors_stop_the_plan_with_file_and_line(run_cli, manifests):
    broken = survey_manifest("tracker")
    broken["spec"]["completes_required"] = "many"
    path = manifests.write(broken)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert f"{path.name}:" in result.stderr or str(path) in result.stderr
    assert "Traceback" not in result.stderr


def test_prevent_destroy_added_to_an_unchanged_survey_is_recorded_in_state(
    project, manifests, sandbox, run_cli
):
    manifests.write(survey_manifest("tracker"))
    run_cli("apply", "manifests", "--auto-approve")
    guarded = survey_manifest("tracker")
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().survey("tracker").prevent_destroy is True


def test_prevent_destroy_added_with_a_quota_count_is_recorded_by_the_quota_put(
    project, manifests, sandbox, run_cli
):
    manifests.write(survey_manifest("tracker"))
    run_cli("apply", "manifests", "--auto-approve")
    guarded = survey_manifest("tracker")
    guarded["spec"]["quotas"][0]["required_count"] = 80
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert "quotas will be updated (1 quota PUT)" in applied.stdout, applied.stdout
    assert _store(project).load().survey("tracker").prevent_destroy is True


def test_import_group_writes_a_manifest_naming_managed_surveys(
    project, manifests, sandbox, unique, run_cli, api
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    run_cli("apply", "manifests", "--auto-approve")
    state = _store(project).load()
    ids = [state.survey("tracker-a").ps_survey_id, state.survey("tracker-b").ps_survey_id]
    ref = f"made-by-hand-{unique}"
    api.create_group(
        {
            "buyer_surveygroup_ref": ref,
            "name": "By hand",
            "exclusion_period": 7,
            "surveys_in_group": ids,
        }
    )
    result = run_cli("import-group", ref, "--name", "by-hand", "--out", "manifests/group.yaml")
    assert result.exit_code == 0, result.stderr
    text = (project / "manifests" / "group.yaml").read_text()
    assert "surveys:\n    - tracker-a\n    - tracker-b" in text  # fmt's layout
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0, replanned.stdout


def test_import_group_refuses_a_group_with_unmanaged_surveys(project, api, unique, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    ref = f"foreign-{unique}"
    api.create_group(
        {
            "buyer_surveygroup_ref": ref,
            "name": "Foreign",
            "exclusion_period": 7,
            "surveys_in_group": [survey_id],
        }
    )
    result = run_cli("import-group", ref, "--name", "foreign")
    assert result.exit_code == 1
    assert f"surveyctl import {survey_id} --name NAME" in result.stderr


def test_import_group_refuses_a_group_already_managed_under_another_name(
    project, manifests, unique, run_cli
):
    ref = f"managed-{unique}"
    manifests.write(survey_manifest("tracker"))
    manifests.write(group_manifest(ref, "tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    before = _store(project).load()
    result = run_cli("import-group", ref, "--name", "again", "--out", "manifests/again.yaml")
    assert result.exit_code == 1
    assert f"exclusion group {ref} is already managed as ExclusionGroup/trackers" in result.stderr
    assert not (project / "manifests" / "again.yaml").exists()
    assert _store(project).load().to_json() == before.to_json()


def test_import_refuses_a_name_already_managed_and_names_the_state_rm(
    project, manifests, api, run_cli
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    other = api.create_survey(survey_manifest("other")["spec"])["ps_survey_id"]
    result = run_cli("import", str(other), "--name", "tracker", "--out", "manifests/t2.yaml")
    assert result.exit_code == 1
    assert (
        "Survey/tracker is already managed in this environment; `surveyctl state rm "
        "Survey/tracker` first to re-import it"
    ) in result.stderr
    assert _store(project).load().survey("tracker").ps_survey_id != other


def test_validate_names_its_environment_even_from_a_cached_catalogue(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    run_cli("validate", "manifests")  # fills the catalogue cache
    cached = run_cli("validate", "manifests")
    assert cached.exit_code == 0
    assert "surveyctl: environment local" in cached.stderr


def test_an_apply_refused_at_approval_leaves_the_state_as_it_was(
    project, manifests, sandbox, run_cli
):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("other"))
    run_cli("apply", "manifests", "--auto-approve")
    guarded = survey_manifest("tracker")  # unchanged but for its lifecycle
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    manifests.write(survey_manifest("other", survey_title="Renamed"))  # needs approval
    state_file = project / ".surveyctl" / "state" / "local.json"
    before = state_file.read_text()
    refused = run_cli("apply", "manifests")  # no terminal to ask, no --auto-approve
    assert refused.exit_code == 1
    assert state_file.read_text() == before


def test_an_apply_stopped_before_it_starts_writes_nothing_and_names_each_write_interrupted(
    project, manifests, sandbox
):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("concept"))
    manifests.write(group_manifest(f"stopped-{survey_title('x')[-8:]}", "tracker", "concept"))
    client = _fresh_client(sandbox)
    plan = _plan(project, client)
    stopped = threading.Event()
    stopped.set()
    result = apply_plan(plan, client, _store(project), stop=stopped)
    assert result.interrupted
    rows = [(o.address, o.action, o.status, o.message) for o in result.outcomes]
    assert rows == [
        ("Survey/concept", "create", "skipped", INTERRUPTED),
        ("Survey/tracker", "create", "skipped", INTERRUPTED),
        ("ExclusionGroup/trackers", "create", "skipped", INTERRUPTED),
    ]
    assert _store(project).load().resources == {}
    listed = client.list_surveys(status=[11, 22, 33, 44])
    assert survey_title("tracker") not in {s["survey_title"] for s in listed}


def test_a_changed_group_reference_is_an_error_at_its_line_and_nothing_is_written(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker-a"))
    _apply(project, _fresh_client(sandbox))
    path = manifests.write(group_manifest(f"other-{unique}", "tracker-a"))
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    line = path.read_text().splitlines().index(f"  buyer_surveygroup_ref: other-{unique}") + 1
    assert (
        f"ExclusionGroup/trackers: buyer_surveygroup_ref changed from 'trackers-{unique}' to "
        f"'other-{unique}'; a group's reference cannot change in place: give the manifest a "
        "new name (a new group) and delete the old one with --destroy"
    ) in result.stdout
    assert f"(manifests/trackers.yaml:{line}:" in result.stdout
    assert _store(project).load().resources["ExclusionGroup/trackers"].remote_id == (
        f"trackers-{unique}"
    )


def test_make_plan_asked_not_to_refresh_reads_no_survey_of_its_own(project, manifests, sandbox):
    # Without the reads of a run (a caller of make_plan other than the CLI), the reads it
    # starts itself keep the request's refresh=False.
    client, _ = _tracker_applied(project, manifests, sandbox)
    desired = load_desired([project / "manifests"], Catalog(lambda: client, "local", None))
    client.request_counts.clear()
    plan = make_plan(client, PlanRequest(desired, _store(project).load(), "local", refresh=False))
    assert plan.from_state
    assert [r.action for r in plan.resources] == ["no-op"]
    assert dict(client.request_counts) == {}


def test_a_plan_from_the_state_alone_says_first_that_no_survey_was_read(
    project, manifests, sandbox, run_cli
):
    _tracker_applied(project, manifests, sandbox)
    result = run_cli("plan", "manifests", "--refresh=false")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("! Planned against the state alone (--refresh=false)")
    fresh = run_cli("plan", "manifests")
    assert "Planned against the state alone" not in fresh.stdout


def test_a_plan_from_the_state_alone_shows_the_destroy_of_a_removed_survey(
    project, manifests, sandbox, run_cli
):
    manifests.write(survey_manifest("tracker"))
    manifests.write(survey_manifest("old"))
    _apply(project, _fresh_client(sandbox))
    manifests.remove("old")
    result = run_cli("plan", "manifests", "--destroy", "--refresh=false")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "- Survey/old" in result.stdout
    assert "Plan: 0 to add, 0 to change, 1 to destroy." in result.stdout


def test_a_survey_deleted_outside_surveyctl_is_planned_as_a_create_with_a_warning(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    client.delete_survey(survey_id)
    result = run_cli("plan", "manifests")
    assert "+ Survey/tracker will be created" in result.stdout
    assert (
        f"survey {survey_id} was deleted outside surveyctl; it will be created again"
    ) in result.stdout


def test_a_group_deleted_outside_surveyctl_is_planned_as_a_create(
    project, manifests, sandbox, unique, run_cli
):
    ref = _group_applied(project, manifests, sandbox, unique)
    client = _fresh_client(sandbox)
    client.delete_group(ref)
    result = run_cli("plan", "manifests")
    assert "+ ExclusionGroup/trackers will be created" in result.stdout
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in result.stdout


def test_a_saved_plan_of_a_group_changed_by_hand_since_is_refused_as_outdated(
    project, manifests, sandbox, unique, run_cli
):
    ref = _group_applied(project, manifests, sandbox, unique)
    client = _fresh_client(sandbox)
    renamed = group_manifest(ref, "tracker-a")
    renamed["spec"]["name"] = "Renamed"
    manifests.write(renamed)
    saved = run_cli("plan", "manifests", "--out", "change.plan")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    _group_changed_by_hand(client, ref, exclusion_period=60)
    result = run_cli("apply", "change.plan")
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: ExclusionGroup/trackers" in result.stderr
    assert client.get_group(ref)["exclusion_period"] == 60


class GroupReadsRefused(Proxy):
    """Refuses (403) every read of one group, as a read refused on every retry is."""

    def __init__(self, upstream: str, ref: str):
        self.path = f"/buyers/v2/surveygroups/{ref}"
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and request.path == self.path:
            headers["Content-Type"] = "application/json"
            answer.status_code = 403
            return b'{"ps_api_response_code": 1002, "ps_api_response_message": "refused"}'
        return answer.content


def test_the_warning_of_a_group_that_cannot_be_read_names_its_manifest(
    project, manifests, sandbox, unique, run_cli
):
    ref = _group_applied(project, manifests, sandbox, unique)
    proxy = GroupReadsRefused(sandbox.url, ref)
    result = _plan_through(project, proxy, run_cli)
    line = _line_holding(result.stdout, "cannot read the live group")
    assert line.startswith("warning: ExclusionGroup/trackers: cannot read the live group: GET")
    assert line.endswith(
        "1002): refused; it is left out of this plan and apply does not attempt it (run it "
        "again) (manifests/trackers.yaml:1:1)"
    )


def test_a_group_create_whose_answer_was_lost_is_not_planned_again_before_it_settles(
    project, manifests, sandbox, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    _apply(project, _fresh_client(sandbox))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a"))
    _store(project).journal_create("ExclusionGroup/trackers", group_manifest(ref)["spec"])
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1, result.stdout + result.stderr  # held back, as an unread one
    assert "ExclusionGroup/trackers will be created" not in result.stdout
    assert "1 create is blocked by an unresolved earlier attempt" in result.stdout


def test_plan_of_a_new_survey_shows_its_spend(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests")
    assert "Estimated spend: $0.00 -> $500.00 (+$500.00)." in result.stdout


def _quotas_line(manifests) -> int:
    """The line of the tracker manifest's `quotas:`, where a note about its quotas points."""
    text = (manifests.folder / "tracker.yaml").read_text(encoding="utf-8")
    return next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == "quotas:")


def test_plan_of_a_new_survey_whose_quotas_sum_below_its_goal_notes_a_soft_launch(
    run_cli, manifests
):
    spec = survey_manifest("tracker")["spec"]
    manifests.write(survey_manifest("tracker", quotas=spec["quotas"][:1]))
    result = run_cli("plan", "manifests")
    assert (
        "note: Survey/tracker: soft launch: the quotas sum to 100, below completes_required 200 "
        f"(manifests/tracker.yaml:{_quotas_line(manifests)}:3)"
    ) in result.stdout


def test_lowering_a_quota_below_the_goal_notes_a_soft_launch(project, manifests, sandbox, run_cli):
    _tracker_applied(project, manifests, sandbox)
    edited = survey_manifest("tracker")
    edited["spec"]["quotas"][0]["required_count"] = 80
    manifests.write(edited)
    result = run_cli("plan", "manifests")
    assert (
        "note: Survey/tracker: soft launch: the quotas sum to 180, below completes_required 200 "
        f"(manifests/tracker.yaml:{_quotas_line(manifests)}:3)"
    ) in result.stdout


def test_a_create_journaled_beside_a_groups_record_does_not_hold_the_group_back(
    project, manifests, sandbox, unique, run_cli
):
    # The state of a group deleted outside surveyctl whose create again lost its answer.
    ref = _group_applied(project, manifests, sandbox, unique)
    _store(project).journal_create("ExclusionGroup/trackers", group_manifest(ref)["spec"])
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "No changes." in result.stdout


def test_prevent_destroy_added_to_an_unchanged_group_is_recorded_in_state(
    project, manifests, sandbox, unique, run_cli
):
    ref = _group_applied(project, manifests, sandbox, unique)
    guarded = group_manifest(ref, "tracker-a")
    guarded["lifecycle"] = {"prevent_destroy": True}
    manifests.write(guarded)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").prevent_destroy is True


def test_a_group_renamed_by_hand_is_shown_as_drift(project, manifests, sandbox, unique, run_cli):
    ref = _group_applied(project, manifests, sandbox, unique)
    _group_changed_by_hand(_fresh_client(sandbox), ref, name="Set by hand")
    result = run_cli("plan", "manifests")
    assert '! drift: name was "Trackers" when last applied, is "Set by hand" live' in result.stdout


def test_a_group_renamed_by_hand_as_its_manifest_now_says_is_settled_by_the_next_apply(
    project, manifests, sandbox, unique, run_cli
):
    ref = _group_applied(project, manifests, sandbox, unique)
    _group_changed_by_hand(_fresh_client(sandbox), ref, name="Renamed")
    renamed = group_manifest(ref, "tracker-a")
    renamed["spec"]["name"] = "Renamed"
    manifests.write(renamed)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").last_applied["name"] == "Renamed"


@pytest.mark.parametrize("applied_first", [False, True], ids=["new group", "group update"])
def test_a_group_whose_name_holds_the_api_key_is_refused_at_its_manifest(
    project, manifests, sandbox, unique, run_cli, applied_first
):
    from tests.conftest import BUYER_1_KEY

    if applied_first:
        ref = _group_applied(project, manifests, sandbox, unique)
    else:
        ref = f"trackers-{unique}"
        manifests.write(survey_manifest("tracker-a"))
    group = group_manifest(ref, "tracker-a")
    group["spec"]["name"] = f"Trackers {BUYER_1_KEY}"
    manifests.write(group)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    line = _line_holding(result.stdout, "holds the API key")
    assert line.startswith("error: ExclusionGroup/trackers: the body to send holds the API key")
    assert line.endswith("(manifests/trackers.yaml:1:1)")


@pytest.mark.parametrize("applied_first", [False, True], ids=["new survey", "survey update"])
def test_a_survey_whose_title_holds_the_api_key_is_refused_at_its_manifest(
    project, manifests, sandbox, run_cli, applied_first
):
    from tests.conftest import BUYER_1_KEY

    if applied_first:
        _tracker_applied(project, manifests, sandbox)
    manifests.write(survey_manifest("tracker", survey_title=f"Tracker {BUYER_1_KEY}"))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    line = _line_holding(result.stdout, "holds the API key")
    assert line.startswith("error: Survey/tracker: the body to send holds the API key")
    assert line.endswith("(manifests/tracker.yaml:1:1)")


def test_a_survey_changed_by_hand_as_its_manifest_now_says_is_noted_as_not_recorded(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    _changed_by_hand(client, survey_id, offer_price=4.0)
    manifests.write(survey_manifest("tracker", offer_price=4.0))
    result = run_cli("plan", "manifests")
    assert (
        "note: Survey/tracker: offer_price is already as the manifest asks while the state "
        "records another value as last applied: written by an apply that could not record it "
        "(stopped before its state write, or its answer lost), or changed so by hand; not drift"
    ) in result.stdout


def test_the_error_of_a_qlc_change_on_a_survey_that_has_been_live_names_the_survey(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    client.set_survey_status(survey_id, 22)
    manifests.write(
        survey_manifest("tracker", qlc={"enable": True, "multiple_quotas": {"enable": True}})
    )
    result = run_cli("plan", "manifests")
    line = _line_holding(result.stdout, "QLC cannot change")
    assert line.startswith(
        "error: Survey/tracker: QLC cannot change once a survey has been live; this survey is "
        "live (22)"
    )


def test_a_saved_plan_of_a_survey_changed_by_hand_since_is_refused_as_outdated(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    manifests.write(survey_manifest("tracker", expected_loi=15))
    saved = run_cli("plan", "manifests", "--out", "change.plan")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    _changed_by_hand(client, survey_id, offer_price=4.0)
    result = run_cli("apply", "change.plan")
    assert result.exit_code == 1
    assert "changed outside this plan since it was made: Survey/tracker" in result.stderr
    assert client.get_survey(survey_id)["offer_price"] == 4.0


def test_raising_the_goal_above_the_quotas_notes_a_soft_launch(
    project, manifests, sandbox, run_cli
):
    _tracker_applied(project, manifests, sandbox)
    manifests.write(survey_manifest("tracker", completes_required=250))
    result = run_cli("plan", "manifests")
    assert (
        "note: Survey/tracker: soft launch: the quotas sum to 200, below completes_required 250 "
        f"(manifests/tracker.yaml:{_quotas_line(manifests)}:3)"
    ) in result.stdout


def test_a_soft_launch_is_not_noted_again_by_an_update_that_leaves_the_quotas_and_goal(
    project, manifests, sandbox, run_cli
):
    spec = survey_manifest("tracker")["spec"]
    manifests.write(survey_manifest("tracker", quotas=spec["quotas"][:1]))
    _apply(project, _fresh_client(sandbox))
    manifests.write(survey_manifest("tracker", quotas=spec["quotas"][:1], expected_loi=15))
    result = run_cli("plan", "manifests")
    assert "~ expected_loi: 10 -> 15" in result.stdout
    assert "soft launch" not in result.stdout


def test_the_warning_of_a_survey_deleted_outside_surveyctl_names_its_manifest(
    project, manifests, sandbox, run_cli
):
    client, survey_id = _tracker_applied(project, manifests, sandbox)
    client.delete_survey(survey_id)
    result = run_cli("plan", "manifests")
    assert (
        f"warning: Survey/tracker: survey {survey_id} was deleted outside surveyctl; it will be "
        "created again (manifests/tracker.yaml:1:1)"
    ) in result.stdout


def test_the_warning_of_a_survey_that_cannot_be_read_names_its_manifest(
    project, manifests, sandbox, run_cli
):
    _, survey_id = _tracker_applied(project, manifests, sandbox)
    manifests.write(survey_manifest("tracker", expected_loi=15))
    proxy = RefusingProxy(sandbox.url)
    proxy.unreadable.add(survey_id)
    result = _plan_through(project, proxy, run_cli)
    line = _line_holding(result.stdout, "cannot read the live survey")
    assert line.startswith("warning: Survey/tracker: cannot read the live survey: GET")
    assert line.endswith(
        "1002): refused (test); it is left out of this plan and apply does not attempt it (run "
        "it again) (manifests/tracker.yaml:1:1)"
    )


def test_a_survey_create_whose_answer_was_lost_is_not_planned_again_before_it_settles(
    project, manifests, run_cli
):
    manifest = survey_manifest("tracker")
    manifests.write(manifest)
    _store(project).journal_create("Survey/tracker", manifest["spec"])
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1, result.stdout + result.stderr  # held back, as an unread one
    assert "Survey/tracker will be created" not in result.stdout
    assert "1 create is blocked by an unresolved earlier attempt" in result.stdout


def test_a_create_journaled_beside_a_surveys_record_does_not_hold_the_survey_back(
    project, manifests, sandbox, run_cli
):
    # The state of a survey deleted outside surveyctl whose create again lost its answer.
    manifest = survey_manifest("tracker")
    manifests.write(manifest)
    _apply(project, _fresh_client(sandbox))
    _store(project).journal_create("Survey/tracker", manifest["spec"])
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "No changes." in result.stdout


def _program(ref: str) -> dict:
    """One market in two waves, the second excluding the first under `ref`-{wave}."""
    template = {k: v for k, v in survey_manifest("tracker")["spec"].items() if k != "quotas"}
    template["survey_title"] = "Tracker {wave} " + title_tag()
    del template["survey_localization"]
    return {
        "kind": "SurveyProgram",
        "name": "tracker",
        "spec": {
            "template": template,
            "markets": {"en_US": None},
            "waves": ["w1", "w2"],
            "exclusion": {"waves": 1, "exclusion_period": 30, "ref": ref + "-{wave}"},
        },
    }


def test_a_changed_exclusion_ref_of_a_program_says_how_to_move_its_group(
    project, manifests, unique, run_cli
):
    manifests.write(_program(f"t-{unique}"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    manifests.write(_program(f"u-{unique}"))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    group = "ExclusionGroup/tracker[en_US,w2]"
    assert (
        f"a group's reference cannot change in place: restore the program's exclusion.ref, or "
        f"`surveyctl state rm {group}` (the old group stays on the service) and plan a new group "
        "under the new one"
    ) in result.stdout


def test_the_json_plan_of_an_unchanged_group_has_no_body_to_send(
    project, manifests, sandbox, unique, run_cli
):
    _group_applied(project, manifests, sandbox, unique)
    result = run_cli("plan", "manifests", "--format", "json")
    (group,) = [r for r in json.loads(result.stdout)["resources"] if r["kind"] == "ExclusionGroup"]
    assert (group["action"], group["body"]) == ("no-op", None)
