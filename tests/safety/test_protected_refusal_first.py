"""On a protected environment without a terminal, a write that is not named with --env and
approved is refused before the service is asked anything: no answer could make it allowed."""

from __future__ import annotations

import re

import pytest
import responses

from surveyctl.ops.adjust_journal import AdjustmentJournal, account_id

from ..conftest import BUYER_1_KEY
from .conftest import survey_manifest, write_manifest

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@pytest.fixture
def sandbox_requests(sandbox):
    """The requests the sandbox receives during the test: each one reaches it as usual and
    is counted on its way."""
    every_path = re.compile(re.escape(sandbox.url) + r"(/.*)?$")
    with responses.RequestsMock(assert_all_requests_are_fired=False) as counted:
        for method in METHODS:
            counted.add(responses.PassthroughResponse(method, every_path))
        yield counted.calls


def test_set_status_with_yes_but_without_env_is_refused_before_the_transaction_is_read(
    prod, completes, sandbox_requests, run_cli
):
    survey_id, ids = completes
    result = run_cli(
        "transactions", "set-status", str(survey_id), ids[0], "--status", "term", "--yes"
    )
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod" in result.stderr
    assert len(sandbox_requests) == 0


def test_state_rebuild_with_yes_but_without_env_is_refused_before_the_service_is_read(
    prod, sandbox_requests, run_cli
):
    write_manifest(prod, survey_manifest("tracker"))
    result = run_cli("state", "rebuild", "manifests", "--yes")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod" in result.stderr
    assert len(sandbox_requests) == 0


def test_adjust_with_yes_but_without_env_is_refused_before_a_lost_adjustment_is_read_back(
    prod, completes, sandbox_requests, run_cli
):
    survey_id, ids = completes
    journal = AdjustmentJournal(
        prod / ".surveyctl" / "adjustments" / f"{account_id(BUYER_1_KEY)}.jsonl"
    )
    lost = journal.sending(prod / "ids.csv", [(t, survey_id) for t in ids], None)
    journal.settle(lost, "lost", reason="the connection was reset")
    result = run_cli("adjust", "ids.csv", "--yes")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert len(sandbox_requests) == 0


def test_conformance_without_env_and_yes_is_refused_before_the_service_is_read(
    prod, sandbox_requests, run_cli
):
    result = run_cli("conformance", "--yes")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod" in result.stderr
    assert len(sandbox_requests) == 0


def test_import_of_a_program_without_env_and_yes_is_refused_before_the_service_is_read(
    prod, sandbox_requests, run_cli
):
    template = {k: v for k, v in survey_manifest("x")["spec"].items() if k != "survey_localization"}
    template["survey_title"] = "Wave {wave}"
    write_manifest(
        prod,
        {
            "kind": "SurveyProgram",
            "name": "waves",
            "spec": {"template": template, "markets": {"en_US": None}, "waves": ["w1"]},
        },
    )
    result = run_cli("import", "--program", "waves", "--manifests", "manifests", "--yes")
    assert result.exit_code == 1
    assert "environment 'prod' is protected and there is no terminal to ask" in result.stderr
    assert "name it with --env prod" in result.stderr
    assert len(sandbox_requests) == 0
