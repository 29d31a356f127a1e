"""A key the marketplace refuses (401) ends plan and apply with one sentence: every read would
be refused alike, and a note for each survey, each advising another run, would hide why."""

from __future__ import annotations

import pytest

from surveyctl.api import ApiClient

from .conftest import survey_manifest, survey_title

REFUSED = "the marketplace refused the API key"
# Well shaped, so the client sends it, and unknown to the sandbox, so the service refuses it.
WRONG_KEY = "sandbox-buyer-unknown-4242"


@pytest.fixture
def applied(manifests, run_cli):
    for name in ("alpha", "bravo", "charlie"):
        manifests.write(survey_manifest(name))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    return manifests


def test_a_plan_with_a_refused_key_ends_with_one_sentence_and_exit_1(applied, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert result.stderr.count(REFUSED) == 1
    assert "answered 401" in result.stderr
    assert "run it again" not in result.stdout + result.stderr
    assert WRONG_KEY not in result.stdout + result.stderr


def test_a_first_plan_with_a_refused_key_ends_the_same_way(manifests, run_cli, monkeypatch):
    manifests.write(survey_manifest("alpha"))  # no state: the plan lists the account first
    # The catalogue kept here is signed with the right key: with the wrong one it is fetched
    # again, and that refusal is said the same way.
    assert run_cli("validate", "manifests").exit_code == 0
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert result.stderr.count(REFUSED) == 1
    assert "run it again" not in result.stdout + result.stderr


def test_a_refused_key_is_one_sentence_when_the_catalogue_is_read_first(
    manifests, run_cli, monkeypatch
):
    manifests.write(survey_manifest("alpha"))
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert result.stderr.count("answered 401") == 1
    assert "run it again" not in result.stdout + result.stderr


def test_an_apply_with_a_refused_key_changes_nothing(applied, run_cli, monkeypatch, sandbox):
    applied.write(survey_manifest("alpha", survey_title="A title the apply must not send"))
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 1
    assert REFUSED in result.stderr
    client = ApiClient(sandbox.url, "sandbox-buyer-1")
    try:
        titles = {s["survey_title"] for s in client.list_surveys(targeting=False)}
    finally:
        client.close()
    assert survey_title("alpha") in titles
    assert "A title the apply must not send" not in titles
