"""A closed survey cannot change (the service answers 400, code 1010): plans never send it an
update or a quota PUT. A closed wave of a program is left as it is while its open waves take
the program's change; a Survey manifest changed while its survey is closed is a plan error.
Over real HTTP against the sandbox, a proxy recording what is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from werkzeug.wrappers import Request

from surveyctl.state import FileStateStore

from .conftest import Manifests, pointed_at, survey_manifest, title_tag
from .proxies import Proxy

CLOSED_WAVE = "Survey/tracker[en_US,w1]"
OPEN_WAVES = ("Survey/tracker[en_GB,w1]", "Survey/tracker[en_GB,w2]", "Survey/tracker[en_US,w2]")


class Recording(Proxy):
    """Passes everything through and records every write: (method, path under /buyers/v2)."""

    def __init__(self, upstream: str):
        self.writes: list[tuple[str, str]] = []
        super().__init__(upstream)

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        if request.method != "GET":
            self.writes.append((request.method, request.path.removeprefix("/buyers/v2")))
        return answer.content


@pytest.fixture
def proxy(sandbox, project):
    running = Recording(sandbox.url)
    with pointed_at(project, running):
        yield running


def _quota(quota_id: str, count: int, code: str) -> dict:
    return {
        "buyer_quota_id": quota_id,
        "required_count": count,
        "criteria": [{"qualification_code": 211, "condition_codes": [code]}],
    }


def _program(loi: int = 10, male: int = 100, price: float = 2.5) -> dict:
    """Two markets x two waves; `loi`, the male quota's count and the offer price come from
    the template."""
    return {
        "kind": "SurveyProgram",
        "name": "tracker",
        "spec": {
            "template": {
                "survey_title": "Closed {country} {wave} " + title_tag(),
                "survey_category_code": 231,
                "completes_required": 200,
                "expected_ir": 50,
                "expected_loi": loi,
                "offer_price": price,
                "field_time": 10,
                "live_url": "https://survey.example.com/s?w={wave}&tid=[%%transaction_id%%]",
                "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
                "quotas": [_quota("male", male, "111"), _quota("female", 100, "112")],
            },
            "markets": {"en_US": None, "en_GB": None},
            "waves": ["w1", "w2"],
        },
    }


def _write_program(project: Path, document: dict) -> None:
    folder = project / "manifests"
    folder.mkdir(exist_ok=True)
    (folder / "tracker.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


def _ids(project: Path) -> dict[str, int]:
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    return {address: record.remote_id for address, record in state.resources.items()}


def _close(api, survey_id: int) -> None:
    for status in (22, 33, 44):  # draft -> live -> paused -> closed
        api.set_survey_status(survey_id, status)


def _apply(run_cli):
    return run_cli("apply", "manifests", "--auto-approve")


@pytest.fixture
def closed_wave(run_cli, project, api) -> dict[str, int]:
    """The program applied, then its en_US wave w1 closed: the ids of its four surveys."""
    _write_program(project, _program())
    applied = _apply(run_cli)
    assert applied.exit_code == 0, applied.output + applied.stderr
    ids = _ids(project)
    _close(api, ids[CLOSED_WAVE])
    return ids


def test_a_template_change_applies_to_the_open_waves_and_leaves_the_closed_one(
    run_cli, project, api, closed_wave
):
    _write_program(project, _program(loi=15))
    result = _apply(run_cli)
    assert result.exit_code == 0, result.output + result.stderr
    assert "Apply complete! Resources: 0 added, 3 changed, 0 destroyed." in result.stdout
    closed = api.get_survey(closed_wave[CLOSED_WAVE])
    assert (closed["ps_survey_status"], closed["expected_loi"]) == (44, 10)
    assert [api.get_survey(closed_wave[a])["expected_loi"] for a in OPEN_WAVES] == [15] * 3


def test_after_it_the_plan_notes_the_closed_wave_and_has_no_changes(run_cli, project, closed_wave):
    _write_program(project, _program(loi=15))
    assert _apply(run_cli).exit_code == 0
    result = run_cli("plan", "manifests", "--detailed-exitcode")
    assert result.exit_code == 0, result.output + result.stderr
    assert (
        f"note: {CLOSED_WAVE}: survey {closed_wave[CLOSED_WAVE]} is closed and cannot change: "
        "this finished wave is left as it is (expected_loi differs from the program's)"
    ) in result.stdout
    assert result.stdout.splitlines()[-1].startswith("No changes.")


def test_the_json_plan_shows_the_closed_wave_unchanged_without_changes(
    run_cli, project, closed_wave
):
    _write_program(project, _program(loi=15))
    result = run_cli("plan", "manifests", "--format", "json")
    resources = {r["address"]: r for r in json.loads(result.stdout)["resources"]}
    closed = resources[CLOSED_WAVE]
    assert (closed["action"], closed["changes"]) == ("no-op", [])


def test_the_closed_wave_note_says_that_several_fields_differ(run_cli, project, closed_wave):
    _write_program(project, _program(loi=15, male=90))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0, result.output + result.stderr
    assert "left as it is (expected_loi, quotas differ from the program's)" in result.stdout


def test_the_spend_of_a_closed_wave_stays_as_it_is_in_the_plans_estimate(
    run_cli, project, closed_wave
):
    # 200 completes each: the three open waves go from $2.50 to $3.00, the closed one stays.
    _write_program(project, _program(price=3.0))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 0, result.output + result.stderr
    assert "Estimated spend: $2,000.00 -> $2,300.00 (+$300.00)." in result.stdout


def test_a_quota_change_sends_no_quota_put_to_the_closed_wave(run_cli, project, proxy, closed_wave):
    _write_program(project, _program(male=90))
    proxy.writes.clear()
    result = _apply(run_cli)
    assert result.exit_code == 0, result.output + result.stderr
    assert sorted(proxy.writes) == sorted(
        ("PUT", f"/surveys/{closed_wave[a]}/quotas/male") for a in OPEN_WAVES
    )


def test_a_survey_manifest_changed_while_closed_is_a_plan_error_and_nothing_is_sent(
    run_cli, project, api, proxy
):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    assert _apply(run_cli).exit_code == 0
    survey_id = _ids(project)["Survey/solo"]
    _close(api, survey_id)
    manifests.write(survey_manifest("solo", expected_loi=15))
    proxy.writes.clear()
    planned = run_cli("plan", "manifests")
    assert planned.exit_code == 1
    assert (
        f"error: Survey/solo: survey {survey_id} is closed and cannot change (expected_loi "
        "differs from the manifest), and the marketplace refuses any update of it: revert the "
        "manifest to what the survey is, or give the manifest a new name to create a new survey"
    ) in planned.stdout
    applied = _apply(run_cli)
    assert applied.exit_code == 1
    assert "the plan has errors; nothing was applied" in applied.stderr
    assert proxy.writes == []
    assert api.get_survey(survey_id)["expected_loi"] == 10


def test_a_quota_change_of_a_closed_survey_manifest_is_a_plan_error(run_cli, project, api, proxy):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    assert _apply(run_cli).exit_code == 0
    survey_id = _ids(project)["Survey/solo"]
    _close(api, survey_id)
    spec = survey_manifest("solo")["spec"]
    manifests.write(survey_manifest("solo", quotas=[dict(spec["quotas"][0], required_count=90)]))
    proxy.writes.clear()
    applied = _apply(run_cli)
    assert applied.exit_code == 1
    assert f"survey {survey_id} is closed and cannot change (quotas differs" in applied.stdout
    assert proxy.writes == []


def test_destroying_a_closed_survey_warns_that_its_transactions_go_with_it(run_cli, project, api):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    manifests.write(survey_manifest("other"))
    assert _apply(run_cli).exit_code == 0
    _close(api, _ids(project)["Survey/solo"])
    manifests.remove("solo")
    result = run_cli("plan", "manifests", "--destroy")
    assert "- Survey/solo" in result.stdout
    assert (
        "warning: Survey/solo: deleting a closed survey removes it from the marketplace with "
        "its quotas and transactions"
    ) in result.stdout


@pytest.mark.parametrize(("moves", "status"), [((22,), "live"), ((22, 33), "paused")])
def test_destroying_a_survey_in_fieldwork_warns_that_its_fieldwork_stops(
    run_cli, project, api, moves, status
):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    manifests.write(survey_manifest("other"))
    assert _apply(run_cli).exit_code == 0
    for move in moves:
        api.set_survey_status(_ids(project)["Survey/solo"], move)
    manifests.remove("solo")
    result = run_cli("plan", "manifests", "--destroy")
    assert "- Survey/solo" in result.stdout
    assert f"warning: Survey/solo: deleting a {status} survey stops its fieldwork" in result.stdout


def test_destroying_a_draft_survey_warns_of_nothing(run_cli, project):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    manifests.write(survey_manifest("other"))
    assert _apply(run_cli).exit_code == 0
    manifests.remove("solo")
    result = run_cli("plan", "manifests", "--destroy")
    assert "- Survey/solo" in result.stdout
    assert "warning: Survey/solo" not in result.stdout


def test_the_error_of_a_survey_manifest_changed_while_closed_is_at_its_manifest(
    run_cli, project, api
):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    assert _apply(run_cli).exit_code == 0
    _close(api, _ids(project)["Survey/solo"])
    manifests.write(survey_manifest("solo", expected_loi=15))

    planned = run_cli("plan", "manifests")

    (line,) = [row.strip() for row in planned.stdout.splitlines() if "is closed" in row]
    assert line.startswith("error: Survey/solo: survey")
    assert line.endswith("(manifests/solo.yaml:1:1)")


def test_a_closed_survey_whose_manifest_still_says_what_it_is_plans_no_change(
    run_cli, project, api
):
    manifests = Manifests(project)
    manifests.write(survey_manifest("solo"))
    assert _apply(run_cli).exit_code == 0
    _close(api, _ids(project)["Survey/solo"])

    planned = run_cli("plan", "manifests")

    assert planned.exit_code == 0, planned.stdout + planned.stderr
    assert "closed" not in planned.stdout
    assert planned.stdout.splitlines()[-1].startswith("No changes.")
