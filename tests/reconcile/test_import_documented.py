"""Surveys written with the bodies the service's public material shows (beyond the spec's
fields) import as managed resources: the import plans no change, and an apply of an unrelated
edit keeps what the service kept (`external_project_id`, a quota's title)."""

from __future__ import annotations

import time

import pytest
import requests
import yaml

from .conftest import survey_manifest

HEADERS = {"access-token": "sandbox-buyer-1"}
STATES = {"qualification_code": 225, "condition_codes": ["06", "36", "34", "6"]}
EXCLUSIONS = {
    "enable": True,
    "start": "20260101",
    "end": "20261231",
    "criteriaSurveys": [123],
    "statuses": [21],
    "criterias": ["complete"],
}


def _call(sandbox, method: str, path: str, body=None) -> dict:
    response = requests.request(
        method, f"{sandbox.url}/buyers/v2{path}", json=body, headers=HEADERS, timeout=10
    )
    assert response.status_code in (200, 201), response.text
    return response.json()


def _created(sandbox, **spec) -> int:
    return _call(sandbox, "POST", "/surveys", {**survey_manifest("x")["spec"], **spec})[
        "ps_survey_id"
    ]


def _put_as_get_returns_it(sandbox) -> int:
    survey_id = _created(sandbox)
    body = _call(sandbox, "GET", f"/surveys/{survey_id}")
    body.update(launch_date=int(time.time() * 1000), external_project_id="proj-77")
    _call(sandbox, "PUT", f"/surveys/{survey_id}", body)
    return survey_id


def _quota_put(sandbox, **extra) -> int:
    survey_id = _created(sandbox)
    criteria = survey_manifest("x")["spec"]["quotas"][0]["criteria"]
    body = {"required_count": 90, "criteria": criteria, **extra}
    _call(sandbox, "PUT", f"/surveys/{survey_id}/quotas/male", body)
    return survey_id


BODIES = {
    "survey sent back with external_project_id": _put_as_get_returns_it,
    "quota put repeating buyer_quota_id": lambda s: _quota_put(s, buyer_quota_id="male"),
    "quota put renaming the quota": lambda s: _quota_put(s, quota_title="Men"),
    "feasibility_exclusions with criterias": lambda s: _created(
        s, feasibility_exclusions=EXCLUSIONS
    ),
    "zero-padded US state codes": lambda s: _created(
        s, qualifications=[*survey_manifest("x")["spec"]["qualifications"], STATES]
    ),
    "a survey in en_AU": lambda s: _created(s, survey_localization="en_AU"),
}


def _import(run_cli, survey_id: int) -> None:
    result = run_cli("import", str(survey_id), "--name", "adopted", "--out", "manifests/a.yaml")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("written", list(BODIES))
def test_an_import_of_a_survey_written_with_a_documented_body_plans_no_changes(
    sandbox, run_cli, manifests, written
):
    _import(run_cli, BODIES[written](sandbox))
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert "No changes." in plan.stdout


def test_an_unrelated_edit_keeps_external_project_id_and_quota_title(
    sandbox, project, run_cli, manifests
):
    survey_id = _put_as_get_returns_it(sandbox)
    criteria = survey_manifest("x")["spec"]["quotas"][0]["criteria"]
    _call(
        sandbox,
        "PUT",
        f"/surveys/{survey_id}/quotas/male",
        {"required_count": 90, "criteria": criteria, "quota_title": "Men"},
    )
    _import(run_cli, survey_id)
    path = project / "manifests" / "a.yaml"
    manifest = yaml.safe_load(path.read_text())
    manifest["spec"]["field_time"] = 21
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    live = _call(sandbox, "GET", f"/surveys/{survey_id}")
    assert live["field_time"] == 21
    assert live["external_project_id"] == "proj-77"
    assert [q["quota_title"] for q in live["quotas"]] == ["Men", ""]
