"""A plan reads the survey list and GETs only the surveys that changed since surveyctl last
wrote or saw them (their `mod_on`), or whose manifest changed; `--refresh=false` reads none."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from surveyctl.reconcile.kinds.survey_listing import MIN_LISTED
from surveyctl.reconcile.normalise import group_update_body
from surveyctl.reconcile.reads import LiveReads
from tests.overlapping import OverlappingReads
from tests.reconcile.conftest import point_project_at, pointed_at, survey_manifest
from tests.reconcile.proxies import Proxy

SURVEYS = 10
_REQUEST = re.compile(r"surveyctl\.http > (GET|PUT|POST|PATCH|DELETE) \S+/buyers/v\d(/\S*)")


def requests(result) -> list[str]:
    """The requests a `--debug` run sent, as "METHOD /path"."""
    return [f"{m.group(1)} {m.group(2)}" for m in _REQUEST.finditer(result.stderr)]


def survey_reads(result) -> list[str]:
    return [r for r in requests(result) if re.fullmatch(r"GET /surveys/\d+", r)]


def apply_surveys(manifests, run_cli, count: int) -> None:
    """`count` surveys, s0, s1, ..., created by one apply."""
    for index in range(count):
        manifests.write(survey_manifest(f"s{index}"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0


@pytest.fixture
def applied(own_market, manifests, run_cli):
    """SURVEYS surveys created by one apply in a marketplace of the test's own."""
    apply_surveys(manifests, run_cli, SURVEYS)
    return own_market


def survey_id(run_cli, name: str) -> int:
    shown = run_cli("state", "show", f"Survey/{name}")
    return int(re.search(r'"ps_survey_id": (\d+)', shown.stdout).group(1))


def test_a_no_op_plan_of_unchanged_surveys_reads_the_list_instead_of_each_survey(applied, run_cli):
    planned = run_cli("--debug", "plan", "manifests")

    assert planned.stdout.startswith("No changes.")  # no note: each is planned unchanged
    assert survey_reads(planned) == []
    listed = [r for r in requests(planned) if r == "GET /surveys"]
    assert len(requests(planned)) == len(listed) == 4  # one page of each status


def test_a_plan_with_a_create_reads_the_survey_list_once_for_its_reads_and_identity_check(
    applied, manifests, run_cli
):
    manifests.write(survey_manifest("new-one"))
    planned = run_cli("--debug", "plan", "manifests")

    assert "+ Survey/new-one will be created" in planned.stdout
    assert survey_reads(planned) == []
    listed = [r for r in requests(planned) if r == "GET /surveys"]
    assert len(requests(planned)) == len(listed) == 4  # one page of each status, once


def test_a_survey_changed_on_the_service_is_read_and_shown_as_drift(applied, run_cli):
    changed = survey_id(run_cli, "s3")
    body = applied.get_survey(changed)
    applied.update_survey(changed, {**body, "offer_price": 3.0})

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == [f"GET /surveys/{changed}"]
    assert "~ Survey/s3" in planned.stdout
    assert "offer_price" in planned.stdout and "No changes." not in planned.stdout


def test_a_survey_whose_drift_was_accepted_by_refresh_only_is_not_read_by_the_next_plan(
    applied, manifests, run_cli
):
    changed = survey_id(run_cli, "s3")
    applied.update_survey(changed, {**applied.get_survey(changed), "offer_price": 3.0})
    accepted = run_cli("apply", "--refresh-only", "--auto-approve")
    assert accepted.exit_code == 0, accepted.stdout + accepted.stderr
    manifests.write(survey_manifest("s3", offer_price=3.0))

    planned = run_cli("--debug", "plan", "manifests")

    assert planned.stdout.startswith("No changes.")
    assert survey_reads(planned) == []  # the refresh recorded the mod_on it read


def test_a_survey_changed_in_its_manifest_is_read_fresh(applied, manifests, run_cli):
    manifests.write(survey_manifest("s5", offer_price=2.75))

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == [f"GET /surveys/{survey_id(run_cli, 's5')}"]
    assert "Plan: 0 to add, 1 to change, 0 to destroy." in planned.stdout


def test_a_survey_removed_from_the_manifests_is_read_for_its_destroy_though_listed_unchanged(
    applied, manifests, run_cli
):
    removed = survey_id(run_cli, "s4")
    manifests.remove("s4")

    planned = run_cli("--debug", "plan", "manifests", "--destroy")

    assert survey_reads(planned) == [f"GET /surveys/{removed}"]
    assert f"- Survey/s4 (ps_survey_id {removed}) will be destroyed" in planned.stdout
    assert "Plan: 0 to add, 0 to change, 1 to destroy." in planned.stdout


def test_an_apply_writes_only_from_bodies_it_read_in_the_same_run(applied, manifests, run_cli):
    manifests.write(survey_manifest("s1", survey_title="Renamed"))

    applied_run = run_cli("--debug", "apply", "manifests", "--auto-approve")

    sent = requests(applied_run)
    target = survey_id(run_cli, "s1")
    assert sent.index(f"GET /surveys/{target}") < sent.index(f"PUT /surveys/{target}")
    assert [r for r in sent if r.startswith("PUT")] == [f"PUT /surveys/{target}"]


def test_after_a_quota_update_the_next_plan_reads_the_survey_once_and_apply_settles_it(
    applied, manifests, run_cli
):
    quotas = survey_manifest("s2")["spec"]["quotas"]
    quotas[0]["required_count"] = 90
    manifests.write(survey_manifest("s2", quotas=quotas))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    target = survey_id(run_cli, "s2")

    first = run_cli("--debug", "apply", "manifests", "--auto-approve")
    second = run_cli("--debug", "plan", "manifests")

    assert survey_reads(first) == [f"GET /surveys/{target}"]  # its mod_on moved with the quota
    assert survey_reads(second) == []  # the no-op apply recorded the mod_on it read


def test_refresh_false_reads_no_survey_and_says_so(applied, manifests, run_cli):
    manifests.write(survey_manifest("s7", offer_price=4.0))

    planned = run_cli("--debug", "plan", "manifests", "--refresh=false")

    assert survey_reads(planned) == []
    assert [r for r in requests(planned) if r.startswith("GET /surveys")] == []
    assert planned.stdout.startswith("! Planned against the state alone (--refresh=false)")
    assert "Plan: 0 to add, 1 to change, 0 to destroy." in planned.stdout


def test_refresh_false_without_changes_leaves_one_blank_line_before_the_summary(applied, run_cli):
    planned = run_cli("plan", "manifests", "--refresh=false")

    lines = planned.stdout.splitlines()
    assert [line[:1] for line in lines[:3]] == ["!", "!", ""]
    assert lines[3].startswith("No changes.")


def test_refresh_false_cannot_be_saved_for_apply(applied, run_cli):
    planned = run_cli("plan", "manifests", "--refresh=false", "--out", "p.plan")

    assert planned.exit_code == 2
    assert "--refresh=false cannot be combined with --out" in planned.stderr


def test_a_list_without_mod_on_falls_back_to_one_read_each_and_says_so_with_debug(
    applied, run_cli, monkeypatch
):
    from surveyctl.api.client import ApiClient

    original = ApiClient.get_surveys_page

    def without_mod_on(self, *args, **kwargs):
        listed, pages = original(self, *args, **kwargs)
        return [{k: v for k, v in survey.items() if k != "mod_on"} for survey in listed], pages

    monkeypatch.setattr(ApiClient, "get_surveys_page", without_mod_on)

    planned = run_cli("--debug", "plan", "manifests")

    assert len(survey_reads(planned)) == SURVEYS
    assert planned.stderr.count("the survey list carries no mod_on") == 1
    assert (
        "surveyctl.plan the survey list carries no mod_on; reading each survey (one GET each)"
        in planned.stderr.splitlines()
    )
    assert "No changes." in planned.stdout


def test_a_plan_of_fewer_surveys_than_the_list_could_spare_reads_each_and_lists_nothing(
    own_market, manifests, run_cli
):
    apply_surveys(manifests, run_cli, MIN_LISTED - 1)

    planned = run_cli("--debug", "plan", "manifests")

    assert len(survey_reads(planned)) == MIN_LISTED - 1
    assert "GET /surveys" not in requests(planned)
    assert "No changes." in planned.stdout


def test_a_plan_of_as_many_surveys_as_the_list_could_spare_reads_the_list_instead(
    own_market, manifests, run_cli
):
    apply_surveys(manifests, run_cli, MIN_LISTED)

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == []
    assert "GET /surveys" in requests(planned)
    assert "No changes." in planned.stdout


class ListRefused(Proxy):
    """The survey list refused; every other request passes."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and request.path == "/buyers/v2/surveys":
            answer.status_code = 403
            return b'{"ps_api_response_code": 1002, "ps_api_response_message": "list refused"}'
        return answer.content


def test_a_survey_list_that_fails_falls_back_to_one_read_each_and_says_why_with_debug(
    applied, project, run_cli
):
    proxy = ListRefused(applied.host)
    with pointed_at(project, proxy):
        planned = run_cli("--debug", "plan", "manifests")

    assert len(survey_reads(planned)) == SURVEYS
    assert "No changes." in planned.stdout
    (said,) = [line for line in planned.stderr.splitlines() if "could not be read" in line]
    assert said.startswith("surveyctl.plan the survey list could not be read (")
    assert said.endswith("); reading each survey")
    assert "list refused" in said


def test_surveys_whose_manifests_changed_are_read_side_by_side(applied, manifests, project):
    from surveyctl.manifests import load_desired
    from surveyctl.reconcile.planner import PlanRequest, make_plan
    from surveyctl.state import FileStateStore

    for index in range(SURVEYS):
        manifests.write(survey_manifest(f"s{index}", offer_price=2.75))
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    client = OverlappingReads(applied)

    plan = make_plan(client, PlanRequest(load_desired([project / "manifests"]), state, "local"))

    assert [r.action for r in plan.resources] == ["update"] * SURVEYS
    assert client.most > 1


def _lost_then_changed(project, manifests) -> None:
    """The state of the SURVEYS applied surveys lost, and one manifest changed since."""
    shutil.rmtree(project / ".surveyctl" / "state")
    manifests.write(survey_manifest("s5", offer_price=2.75))


def test_an_adopting_plan_reads_each_adopted_survey_once(applied, project, manifests, run_cli):
    _lost_then_changed(project, manifests)

    planned = run_cli("--debug", "plan", "manifests", "--adopt")

    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert f"{SURVEYS} resources are on the service adopted with --adopt" in planned.stdout
    reads = survey_reads(planned)
    assert len(reads) == len(set(reads)) == SURVEYS


def test_an_adopting_plan_is_the_plan_it_made_when_it_read_each_survey_twice(
    applied, project, manifests, run_cli, monkeypatch
):
    _lost_then_changed(project, manifests)
    once = run_cli("plan", "manifests", "--adopt")
    # What a plan did before it took the identity check's bodies: read each survey again.
    monkeypatch.setattr(LiveReads, "given", lambda self, bodies: None)
    twice = run_cli("--debug", "plan", "manifests", "--adopt")

    assert len(survey_reads(twice)) == 2 * SURVEYS  # the plan compared is the old one's
    assert "~ Survey/s5" in once.stdout and "offer_price" in once.stdout
    assert once.stdout == twice.stdout


def test_an_adopting_apply_writes_from_the_one_read_of_each_survey_in_its_run(
    applied, project, manifests, run_cli
):
    _lost_then_changed(project, manifests)

    applied_run = run_cli("--debug", "apply", "manifests", "--adopt", "--auto-approve")

    assert applied_run.exit_code == 0, applied_run.stdout + applied_run.stderr
    sent = requests(applied_run)
    target = survey_id(run_cli, "s5")
    assert len(survey_reads(applied_run)) == SURVEYS
    assert [r for r in sent if r.startswith("PUT")] == [f"PUT /surveys/{target}"]
    assert sent.index(f"GET /surveys/{target}") < sent.index(f"PUT /surveys/{target}")


def _plan(client, project, refresh: bool = True, state=None):
    from surveyctl.manifests import load_desired
    from surveyctl.reconcile.planner import PlanRequest, make_plan
    from surveyctl.state import FileStateStore

    if state is None:
        state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    desired = load_desired([project / "manifests"])
    return make_plan(client, PlanRequest(desired, state, "local", refresh=refresh))


def test_changed_surveys_are_read_side_by_side_beside_a_new_survey(applied, manifests, project):
    # The new survey's manifest sorts first: it has nothing to read, and the reads of the
    # changed ones after it are still sent at once.
    manifests.write(survey_manifest("a-new-survey"))
    for index in range(SURVEYS):
        manifests.write(survey_manifest(f"s{index}", offer_price=2.75))
    client = OverlappingReads(applied)

    plan = _plan(client, project)

    assert [r.action for r in plan.resources] == ["create"] + ["update"] * SURVEYS
    assert client.most > 1


def test_under_refresh_false_surveys_without_a_body_in_the_state_are_read_side_by_side(
    applied, project
):
    # An adopted survey has no last applied body, so even --refresh=false reads it; the first
    # survey, planned from the state, does not hold back the reads of those after it.
    from dataclasses import replace

    from surveyctl.state import FileStateStore

    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    for index in range(1, SURVEYS):
        address = f"Survey/s{index}"
        state.resources[address] = replace(state.resources[address], last_applied=None)
    client = OverlappingReads(applied)

    _plan(client, project, refresh=False, state=state)

    assert client.most > 1


def test_the_spend_of_surveys_left_unread_is_in_the_plans_estimate(applied, run_cli):
    planned = run_cli("--debug", "plan", "manifests")
    assert survey_reads(planned) == []
    assert "Estimated spend: $5,000.00 (unchanged)." in planned.stdout  # 10 x 200 x $2.50


def test_the_json_plan_gives_the_id_of_each_survey_left_unread(applied, run_cli):
    planned = run_cli("plan", "manifests", "--format", "json")
    shown = {r["name"]: r["remote_id"] for r in json.loads(planned.stdout)["resources"]}
    assert shown == {f"s{index}": survey_id(run_cli, f"s{index}") for index in range(SURVEYS)}


def test_prevent_destroy_added_to_a_survey_left_unread_is_recorded_in_state(
    applied, manifests, run_cli
):
    manifests.write({**survey_manifest("s0"), "lifecycle": {"prevent_destroy": True}})
    applied_again = run_cli("--debug", "apply", "manifests", "--auto-approve")
    assert applied_again.exit_code == 0, applied_again.stdout + applied_again.stderr
    assert survey_reads(applied_again) == []
    shown = run_cli("state", "show", "Survey/s0")
    assert '"prevent_destroy": true' in shown.stdout


def test_membership_drift_found_beside_a_change_made_both_by_hand_and_in_the_manifest_stays_shown(
    applied, manifests, run_cli
):
    # The survey's drift keeps it read: were its mod_on recorded as seen by the apply that
    # settles the other change, the next plan would leave it unread (the list shows it as last
    # seen) and the membership drift would no longer be shown.
    group = {"buyer_surveygroup_ref": "waves", "name": "waves", "exclusion_period": 30}
    applied.create_group({**group, "surveys_in_group": []})
    manifests.write(survey_manifest("grouped", buyer_surveygroup_refs=["waves"]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    emptied = {**group_update_body(applied.get_group("waves")), "surveys_in_group": []}
    applied.update_group("waves", emptied)
    grouped = survey_id(run_cli, "grouped")
    applied.update_survey(grouped, {**applied.get_survey(grouped), "offer_price": 3.0})
    manifests.write(survey_manifest("grouped", buyer_surveygroup_refs=["waves"], offer_price=3.0))
    settled = run_cli("apply", "manifests", "--auto-approve")
    assert settled.exit_code == 0, settled.stdout + settled.stderr

    planned = run_cli("plan", "manifests")

    assert (
        '! drift: buyer_surveygroup_refs was ["waves"] when last applied, is (absent) live'
    ) in planned.stdout


class UpdatesRefused(Proxy):
    """Each survey update refused before it reaches the service (sent on as a read, so
    nothing changes there); every other request passes."""

    def forward(self, request):
        if request.method == "PUT" and re.fullmatch(r"/buyers/v2/surveys/\d+", request.path):
            return self.session.get(self.upstream + request.path, timeout=30)
        return super().forward(request)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "PUT" and re.fullmatch(r"/buyers/v2/surveys/\d+", request.path):
            answer.status_code = 403
            return b'{"ps_api_response_code": 1002, "ps_api_response_message": "update refused"}'
        return answer.content


def test_a_survey_changed_on_the_service_whose_update_was_refused_is_read_by_the_next_plan(
    applied, project, run_cli
):
    # A survey read for an update is not recorded as seen: with the update refused, the list
    # shows the survey as that read found it, and the next plan would leave it unread, the
    # change made on the service no longer shown.
    changed = survey_id(run_cli, "s3")
    applied.update_survey(changed, {**applied.get_survey(changed), "offer_price": 3.0})
    proxy = UpdatesRefused(applied.host)
    with pointed_at(project, proxy):
        refused = run_cli("apply", "manifests", "--auto-approve")
    assert refused.exit_code != 0
    point_project_at(project, applied.host)

    planned = run_cli("plan", "manifests")

    assert "~ Survey/s3" in planned.stdout and "offer_price" in planned.stdout
