"""A plan that trusts the survey list (reads only the surveys whose `mod_on` moved) still shows
a membership changed by hand: the sandbox does not move a survey's `mod_on` when a group is
edited, so the plan reads the exclusion groups and reads fresh the surveys that joined or left
one. Its output is the output of a plan that reads each survey."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from surveyctl.reconcile.kinds.survey_listing import MIN_LISTED
from surveyctl.reconcile.normalise import group_update_body
from tests.reconcile.conftest import group_manifest, survey_manifest
from tests.reconcile.test_list_reads import requests, survey_id, survey_reads

SURVEYS = [f"s{index}" for index in range(MIN_LISTED + 2)]
PAIRED = ["s0", "s1"]  # the members of the managed group


@pytest.fixture
def grouped(own_market, manifests, run_cli, unique):
    """Surveys whose manifests put each in a group made by hand (`waves`, not managed), and a
    managed ExclusionGroup (`pairs`) of two more, whose manifests name no group; created by
    one apply."""
    waves, pairs = f"waves-{unique}", f"pairs-{unique}"
    body = {"buyer_surveygroup_ref": waves, "name": "Waves", "exclusion_period": 30}
    own_market.create_group({**body, "surveys_in_group": []})
    for name in SURVEYS:
        refs = {} if name in PAIRED else {"buyer_surveygroup_refs": [waves]}
        manifests.write(survey_manifest(name, **refs))
    manifests.write(group_manifest(pairs, *PAIRED, name="pairs"))
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    return SimpleNamespace(client=own_market, waves=waves, pairs=pairs)


def _set_members(client, ref: str, change) -> None:
    body = group_update_body(client.get_group(ref))
    client.update_group(ref, {**body, "surveys_in_group": change(body["surveys_in_group"])})


def _read_each_plan(run_cli, monkeypatch):
    """The plan as it is made when the survey list carries no `mod_on`: one GET per survey."""
    from surveyctl.api.client import ApiClient

    original = ApiClient.get_surveys_page

    def without_mod_on(self, *args, **kwargs):
        listed, pages = original(self, *args, **kwargs)
        return [{k: v for k, v in item.items() if k != "mod_on"} for item in listed], pages

    with monkeypatch.context() as patched:
        patched.setattr(ApiClient, "get_surveys_page", without_mod_on)
        planned = run_cli("--debug", "plan", "manifests")
    assert len(survey_reads(planned)) == len(SURVEYS)
    return planned


def test_a_survey_taken_out_of_its_group_by_hand_is_shown_by_a_plan_that_trusts_the_list(
    grouped, run_cli, monkeypatch
):
    removed = survey_id(run_cli, "s3")
    _set_members(grouped.client, grouped.waves, lambda ids: [i for i in ids if i != removed])

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == [f"GET /surveys/{removed}"]
    assert (
        f'! drift: buyer_surveygroup_refs was ["{grouped.waves}"] when last applied, '
        "is (absent) live"
    ) in planned.stdout
    assert planned.stdout == _read_each_plan(run_cli, monkeypatch).stdout


def test_a_survey_put_into_a_group_by_hand_is_shown_by_a_plan_that_trusts_the_list(
    grouped, run_cli, monkeypatch
):
    added = survey_id(run_cli, "s7")
    _set_members(grouped.client, grouped.pairs, lambda ids: [*ids, added])

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == [f"GET /surveys/{added}"]
    assert (
        f'! drift: buyer_surveygroup_refs was ["{grouped.waves}"] when last applied, '
        f'is ["{grouped.pairs}", "{grouped.waves}"] live'
    ) in planned.stdout
    assert planned.stdout == _read_each_plan(run_cli, monkeypatch).stdout


def test_a_plan_whose_groups_are_unchanged_reads_each_group_once_and_no_survey(grouped, run_cli):
    planned = run_cli("--debug", "plan", "manifests")

    assert planned.stdout.startswith("No changes.")
    sent = sorted(requests(planned))
    groups = sorted(f"GET /surveygroups/{ref}" for ref in (grouped.waves, grouped.pairs))
    assert sent == sorted(["GET /surveys"] * 4 + groups)  # one page of each status


def test_refresh_false_reads_no_survey_though_a_group_changed_by_hand(grouped, run_cli):
    removed = survey_id(run_cli, "s3")
    _set_members(grouped.client, grouped.waves, lambda ids: [i for i in ids if i != removed])

    planned = run_cli("--debug", "plan", "manifests", "--refresh=false")

    assert survey_reads(planned) == []


def test_the_apply_after_a_survey_was_put_into_a_group_by_hand_takes_it_out_again(grouped, run_cli):
    added = survey_id(run_cli, "s7")
    _set_members(grouped.client, grouped.pairs, lambda ids: [*ids, added])

    applied = run_cli("apply", "manifests", "--auto-approve")

    assert applied.exit_code == 0, applied.stdout + applied.stderr
    members = grouped.client.get_group(grouped.pairs)["surveys_in_group"]
    assert sorted(members) == sorted(survey_id(run_cli, name) for name in PAIRED)


def test_the_plan_after_that_apply_has_no_changes_and_reads_no_survey(grouped, run_cli):
    added = survey_id(run_cli, "s7")
    _set_members(grouped.client, grouped.pairs, lambda ids: [*ids, added])
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0

    planned = run_cli("--debug", "plan", "manifests")

    assert planned.stdout.startswith("No changes."), planned.stdout
    assert survey_reads(planned) == []


def test_a_survey_taken_out_of_a_managed_group_by_hand_is_planned_as_by_a_plan_reading_each(
    grouped, run_cli, monkeypatch
):
    removed = survey_id(run_cli, "s1")
    _set_members(grouped.client, grouped.pairs, lambda ids: [i for i in ids if i != removed])

    planned = run_cli("--debug", "plan", "manifests")

    assert "~ ExclusionGroup/pairs" in planned.stdout
    assert planned.stdout == _read_each_plan(run_cli, monkeypatch).stdout


def test_a_group_the_surveys_name_deleted_by_hand_is_shown_by_a_plan_that_trusts_the_list(
    grouped, run_cli, monkeypatch
):
    grouped.client.delete_group(grouped.waves)

    planned = run_cli("--debug", "plan", "manifests")

    assert len(survey_reads(planned)) == len(SURVEYS) - len(PAIRED)
    assert planned.stdout == _read_each_plan(run_cli, monkeypatch).stdout
