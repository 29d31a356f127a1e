"""A Survey manifest's `buyer_surveygroup_ref(s)` join groups when the survey is created; an
update keeps the live membership (merge rule 6). A plan says so when the manifest names other
groups than the survey is in, rather than call the survey as its manifest describes it."""

from __future__ import annotations

import json

import pytest

from surveyctl.api import ApiClient

from .conftest import survey_manifest


@pytest.fixture
def client(sandbox):
    with ApiClient(sandbox.url, "sandbox-buyer-1", retries=0) as api:
        yield api


@pytest.fixture
def refs(client, unique) -> tuple[str, str]:
    """Two groups of no survey yet."""
    made = (f"first-{unique}", f"second-{unique}")
    for ref in made:
        client.create_group(
            {
                "buyer_surveygroup_ref": ref,
                "name": ref,
                "surveys_in_group": [],
                "exclusion_period": 30,
            }
        )
    return made


@pytest.fixture
def moved(manifests, refs, run_cli) -> str:
    """A survey created in the first group whose manifest then names the second; the ref
    the manifest now names."""
    first, second = refs
    manifests.write(survey_manifest("tracker", buyer_surveygroup_refs=[first]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(survey_manifest("tracker", buyer_surveygroup_refs=[second]))
    return second


def test_a_manifest_naming_a_group_its_survey_is_not_in_is_a_warning_of_the_plan(moved, run_cli):
    planned = run_cli("plan", "manifests")

    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert (
        f"warning: Survey/tracker: the manifest puts the survey in group(s) {moved}, which it "
        "is not in" in planned.stdout
    )
    assert "apply does not change this" in planned.stdout


def test_the_membership_warning_comes_back_after_an_apply_that_could_not_change_it(
    moved, client, run_cli
):
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0

    planned = run_cli("plan", "manifests")

    assert f"the manifest puts the survey in group(s) {moved}" in planned.stdout
    assert client.get_group(moved)["surveys_in_group"] == []


def test_an_apply_records_the_manifest_but_the_membership_it_could_not_change(
    moved, refs, manifests, project, run_cli
):
    edited = survey_manifest("tracker", buyer_surveygroup_refs=[moved], offer_price=3.0)
    manifests.write(edited)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0

    shown = json.loads(run_cli("state", "show", "tracker").stdout)

    assert shown["last_applied"]["offer_price"] == 3.0
    assert shown["last_applied"]["survey_title"] == edited["spec"]["survey_title"]
    assert shown["last_applied"]["buyer_surveygroup_refs"] == [refs[0]]


def test_the_membership_warning_names_the_groups_the_survey_is_still_in_that_the_manifest_dropped(
    moved, refs, run_cli
):
    planned = run_cli("plan", "manifests")

    assert (
        f"the manifest puts the survey in group(s) {moved}, which it is not in, and no longer "
        f"names group(s) {refs[0]}, which it is still in; apply does not change this"
    ) in planned.stdout


def test_the_membership_warning_is_at_the_survey_manifest(moved, run_cli):
    planned = run_cli("plan", "manifests")

    (line,) = [row.strip() for row in planned.stdout.splitlines() if "which it is not in" in row]
    assert line.startswith("warning: Survey/tracker: the manifest puts the survey in group(s)")
    assert line.endswith("(manifests/tracker.yaml:1:1)")


def test_a_survey_taken_out_of_its_manifests_group_by_hand_is_shown_as_drift(
    manifests, refs, client, run_cli
):
    from surveyctl.reconcile.normalise import group_update_body

    first, _ = refs
    manifests.write(survey_manifest("tracker", buyer_surveygroup_refs=[first]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    client.update_group(
        first, {**group_update_body(client.get_group(first)), "surveys_in_group": []}
    )

    planned = run_cli("plan", "manifests")

    assert (
        f'! drift: buyer_surveygroup_refs was ["{first}"] when last applied, is (absent) live'
    ) in planned.stdout
