"""`surveyctl status`: read and move a survey's status over HTTP, against a sandbox served
--strict (the move sends nothing the API does not define)."""

from __future__ import annotations

import pytest

from .conftest import survey_manifest, survey_title


@pytest.fixture
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `api` and `project`): the session's strict one."""
    return strict_sandbox


def test_status_shows_a_new_survey_as_draft(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"survey {survey_id} is draft: {survey_title('x')}\n")


def test_status_launches_pauses_and_closes_a_survey(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    for name, code in (("live", 22), ("paused", 33), ("closed", 44)):
        result = run_cli("status", str(survey_id), name, "--yes")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip() == f"survey {survey_id} is {name} ({code})"
    assert api.get_survey(survey_id)["ps_survey_status"] == 44


def test_a_move_the_marketplace_does_not_make_names_the_steps_and_sends_nothing(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    api.set_survey_status(survey_id, 22)
    result = run_cli("status", str(survey_id), "closed", "--yes")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: survey {survey_id} is live (22) and cannot move to closed directly (the "
        "marketplace moves draft -> live <-> paused -> closed): "
        f"`surveyctl status {survey_id} paused`, then `surveyctl status {survey_id} closed`"
    )
    assert api.get_survey(survey_id)["ps_survey_status"] == 22


def test_a_closed_survey_is_said_to_stay_closed(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    for status in (22, 33, 44):
        api.set_survey_status(survey_id, status)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1
    assert "is closed (44) and cannot move to live: a closed survey stays closed" in result.stderr


def test_moving_a_survey_where_it_is_already_says_so_and_exits_0(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    api.set_survey_status(survey_id, 22)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"survey {survey_id} is live (22) already; nothing to do.\n"


def test_a_move_without_a_terminal_needs_yes_as_apply_does(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id), "live")
    assert result.exit_code == 1
    assert "a confirmation is needed to move survey" in result.stderr
    assert "confirm with --yes" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == 11


def test_a_move_on_a_terminal_asks_first(api, run_cli, monkeypatch):
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    declined = run_cli("status", str(survey_id), "live", input="n\n")
    assert declined.exit_code == 1
    assert f"Move survey {survey_id} to live?" in declined.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == 11


def test_a_survey_paused_again_at_once_on_going_live_is_an_error_that_says_why(api, run_cli):
    spec = survey_manifest("x")["spec"]
    spec["quotas"] = [{**quota, "required_count": 0} for quota in spec["quotas"]]
    survey_id = api.create_survey(spec)["ps_survey_id"]
    assert api.set_survey_status(survey_id, 22)["ps_survey_status"] == 33  # spec 1.5
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1
    assert result.stdout == f"survey {survey_id} is paused (33)\n"
    assert result.stderr.splitlines()[-1] == (
        f"Error: survey {survey_id} did not stay live: the marketplace pauses a survey whose "
        "goal or every quota is reached (spec 1.5); raise completes_required or the quotas in "
        "its manifest and apply, then move it again"
    )


def test_times_without_watch_is_a_usage_error(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id), "--times", "2")
    assert result.exit_code == 2
    assert "--times counts the refreshes of --watch: give --watch SECONDS too" in result.stderr


def test_a_move_with_format_json_is_a_usage_error_and_moves_nothing(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id), "live", "--format", "json", "--yes")
    assert result.exit_code == 2
    assert "--format json shows fieldwork; it cannot be combined with NEW_STATUS" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == 11


def _answer_lost_then_retried(monkeypatch) -> None:
    """The status PUT is made, its answer lost and the PUT sent again, as the client does after
    a reset: the service refuses the second (the survey is already where it was sent)."""
    from surveyctl.api import ApiClient

    original = ApiClient.set_survey_status

    def retried(client, survey_id, status):
        original(client, survey_id, status)
        return original(client, survey_id, status)

    monkeypatch.setattr(ApiClient, "set_survey_status", retried)


def test_a_move_made_whose_answer_was_lost_is_reported_made_and_exits_0(api, run_cli, monkeypatch):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    _answer_lost_then_retried(monkeypatch)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"survey {survey_id} is live (22)\n"
    assert "but the survey is live now: the move was made" in result.stderr
    assert api.get_survey(survey_id)["ps_survey_status"] == 22


def test_a_move_the_service_failed_says_where_the_survey_is(api, run_cli, monkeypatch):
    from surveyctl.api import ApiClient
    from surveyctl.errors import ApiError

    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]

    def failing(client, survey_id, status):
        raise ApiError("PUT", f"/surveys/{survey_id}/status", 500, None, "boom")

    monkeypatch.setattr(ApiClient, "set_survey_status", failing)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: PUT /surveys/{survey_id}/status answered 500: boom; survey {survey_id} is "
        "draft (11), not moved"
    )


def test_a_failed_move_that_cannot_be_read_back_says_so_and_how_to_see(api, run_cli, monkeypatch):
    from surveyctl.api import ApiClient
    from surveyctl.errors import ApiError, SurveyctlError

    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    reads = []
    original = ApiClient.get_survey

    def failing(client, survey_id, status):
        raise ApiError("PUT", f"/surveys/{survey_id}/status", 502, None, "bad gateway")

    def read_once(client, survey_id):  # the read before the move; the read-back fails
        reads.append(survey_id)
        if len(reads) > 1:
            raise SurveyctlError("connection reset")
        return original(client, survey_id)

    monkeypatch.setattr(ApiClient, "set_survey_status", failing)
    monkeypatch.setattr(ApiClient, "get_survey", read_once)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: PUT /surveys/{survey_id}/status answered 502: bad gateway; whether survey "
        f"{survey_id} moved could not be read back: `surveyctl status {survey_id}` shows where "
        "it is"
    )


def test_a_move_refuses_a_watch(run_cli):
    result = run_cli("status", "1", "live", "--watch", "5")
    assert result.exit_code == 2
    assert "--watch shows fieldwork; it cannot be combined with NEW_STATUS" in result.stderr


def test_a_move_made_despite_an_error_says_the_error_without_the_key_or_escape_codes(
    api, run_cli, monkeypatch
):
    from surveyctl.api import ApiClient
    from surveyctl.errors import ApiError

    from ..conftest import BUYER_1_KEY

    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    original = ApiClient.set_survey_status

    def made_then_refused(client, survey_id, status):
        original(client, survey_id, status)
        raise ApiError(
            "PUT", f"/surveys/{survey_id}/status", 502, None, f"bad key {BUYER_1_KEY}\x1b[2J"
        )

    monkeypatch.setattr(ApiClient, "set_survey_status", made_then_refused)
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert "but the survey is live now: the move was made" in result.stderr
    assert BUYER_1_KEY not in result.stderr
    assert "\x1b" not in result.stderr
