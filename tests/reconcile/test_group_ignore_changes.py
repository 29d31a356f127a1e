"""`lifecycle.ignore_changes` of an ExclusionGroup: a field named there keeps its live value in
what apply sends, not only in what the plan shows, and its live changes are not drift."""

from __future__ import annotations

import pytest

from surveyctl.api import ApiClient

from .conftest import group_manifest, survey_manifest


def _group(
    ref: str, *surveys: str, ignore: str | list[str] = "exclusion_period", name: str = "T"
) -> dict:
    manifest = group_manifest(ref, *(surveys or ("tracker-a", "tracker-b")))
    manifest["spec"]["name"] = name
    manifest["lifecycle"] = {"ignore_changes": [ignore] if isinstance(ignore, str) else ignore}
    return manifest


@pytest.fixture
def client(sandbox):
    with ApiClient(sandbox.url, "sandbox-buyer-1", retries=0) as api:
        yield api


@pytest.fixture
def applied_group(manifests, unique, run_cli):
    """Two surveys and a group of both, applied; the group's ref."""
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(_group(ref))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    return ref


def _set_live_period(client: ApiClient, ref: str, period: int) -> None:
    client.update_group(ref, {**client.get_group(ref), "exclusion_period": period})


def test_an_ignored_group_field_changed_by_hand_survives_an_update_of_another_field(
    manifests, client, applied_group, run_cli
):
    _set_live_period(client, applied_group, 60)
    manifests.write(_group(applied_group, name="Renamed"))

    applied = run_cli("apply", "manifests", "--auto-approve")

    assert applied.exit_code == 0, applied.stdout + applied.stderr
    after = client.get_group(applied_group)
    assert (after["name"], after["exclusion_period"]) == ("Renamed", 60)


def test_an_ignored_group_field_changed_by_hand_is_not_drift(
    manifests, client, applied_group, run_cli
):
    _set_live_period(client, applied_group, 60)

    plan = run_cli("plan", "manifests", "--detailed-exitcode")

    assert plan.exit_code == 0, plan.stdout
    assert "drift" not in plan.stdout


@pytest.mark.parametrize("ignored", ["surveys", "surveys_in_group"])
def test_ignoring_a_groups_surveys_keeps_its_live_members(
    project, manifests, client, unique, run_cli, ignored
):
    for name in ("tracker-a", "tracker-b", "tracker-c"):
        manifests.write(survey_manifest(name))
    ref = f"trackers-{unique}"
    manifests.write(_group(ref, ignore=ignored))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    members = sorted(client.get_group(ref)["surveys_in_group"])
    manifests.write(_group(ref, "tracker-a", "tracker-c", ignore=ignored, name="Renamed"))

    applied = run_cli("apply", "manifests", "--auto-approve")

    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "surveys_in_group" not in applied.stdout
    assert sorted(client.get_group(ref)["surveys_in_group"]) == members


def test_ignoring_a_groups_surveys_beside_another_field_keeps_that_fields_live_value(
    manifests, client, applied_group, run_cli
):
    client.update_group(applied_group, {**client.get_group(applied_group), "name": "By hand"})
    manifests.write(_group(applied_group, name="Renamed", ignore=["surveys", "name"]))
    _set_live_period(client, applied_group, 60)  # what the manifest's 30 changes back

    applied = run_cli("apply", "manifests", "--auto-approve")

    assert applied.exit_code == 0, applied.stdout + applied.stderr
    after = client.get_group(applied_group)
    assert (after["name"], after["exclusion_period"]) == ("By hand", 30)


def test_ignoring_a_groups_surveys_plans_no_pending_member_for_a_survey_not_created_yet(
    manifests, unique, run_cli
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(_group(ref, ignore="surveys_in_group"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker-c"))
    manifests.write(_group(ref, "tracker-a", "tracker-b", "tracker-c", ignore="surveys_in_group"))

    planned = run_cli("plan", "manifests")

    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert "Plan: 1 to add, 0 to change, 0 to destroy." in planned.stdout
