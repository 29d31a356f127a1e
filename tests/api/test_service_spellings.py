"""Spellings of the real service that the sandbox never uses, met through a loopback proxy over
real HTTP: survey codes written as text, a page without its `total_pages` header, error
bodies that name their message `message` or `error`. A first run against a real account must
not fail or show wrong figures where the sandbox passed."""

from __future__ import annotations

import json

import pytest

from ..reconcile.conftest import pointed_at
from ..reconcile.proxies import Proxy

PAGED = ("/transactions", "/attributes")
TEXT_FIELDS = ("ps_survey_id", "ps_survey_status", "completes_required", "offer_price")


def _codes_as_text(survey: dict) -> dict:
    """The survey with its id, status, goal and price written as text, as the documentation
    shows other numbers of the service written ("1.30")."""
    text = {name: str(survey[name]) for name in TEXT_FIELDS if survey.get(name) is not None}
    return {**survey, **text}


class Spelling(Proxy):
    """Answers as the sandbox does, respelled by whichever of its switches a test turns on."""

    def __init__(self, upstream: str):
        self.codes_as_text = self.no_pages_header = False
        self.error_key: str | None = None
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if self.no_pages_header and request.path.endswith(PAGED):
            headers.pop("total_pages", None)
        if not answer.content or "json" not in answer.headers.get("Content-Type", ""):
            return answer.content
        body = answer.json()
        if not answer.ok and self.error_key and isinstance(body, dict):
            text = body.get("ps_api_response_message") or body.get("ps_error_message")
            return json.dumps({self.error_key: text}).encode()
        if self.codes_as_text and isinstance(body, dict) and "ps_survey_status" in body:
            return json.dumps(_codes_as_text(body)).encode()
        if self.codes_as_text and isinstance(body, list) and body and "live_url" in body[0]:
            return json.dumps([_codes_as_text(s) for s in body]).encode()
        return answer.content


@pytest.fixture
def spelling(project, sandbox):
    """The CLI's project pointed at the respelling proxy in front of the sandbox."""
    proxy = Spelling(sandbox.url)
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  real: {{host: '{proxy.url}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: real\n",
        encoding="utf-8",
    )
    yield proxy
    proxy.stop()


def test_surveys_whose_status_is_written_as_text_are_listed(spelling, run_cli, new_survey):
    survey_id = new_survey(survey_title="Status as text")
    spelling.codes_as_text = True
    result = run_cli("surveys", "list", "--status", "draft")
    assert result.exit_code == 0, result.stderr
    assert f"{survey_id}  draft" in result.stdout
    assert "Status as text" in result.stdout


def test_a_goal_and_price_written_as_text_are_listed_as_numbers(spelling, run_cli, new_survey):
    survey_id = new_survey(offer_price=2.5, completes_required=1000)
    spelling.codes_as_text = True
    listed = run_cli("surveys", "list", "--status", "draft", "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["ps_survey_id"] == survey_id)
    assert (row["completes_required"], row["offer_price"]) == (1000, 2.5)
    table = run_cli("surveys", "list", "--status", "draft")
    assert table.exit_code == 0, table.stderr
    row_line = next(line for line in table.stdout.splitlines() if line.startswith(str(survey_id)))
    assert row_line.split()[-3:-1] == ["1000", "2.5"]  # GOAL and PRICE, before MANAGED AS


def test_a_status_move_reads_a_status_written_as_text(spelling, run_cli, new_survey):
    survey_id = new_survey()
    spelling.codes_as_text = True
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert f"survey {survey_id} is live (22)" in result.stdout


def test_transactions_without_a_total_pages_header_are_read_to_the_last_page(
    spelling, run_cli, new_survey, api
):
    survey_id = new_survey(live=True)
    api.simulate_traffic(survey_id, {"respondents": 25, "seed": 3})
    spelling.no_pages_header = True
    result = run_cli(
        "transactions", "list", str(survey_id), "--page-size", "10", "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)) == 25


def test_the_catalogue_without_a_total_pages_header_is_read_whole(spelling, run_cli, sandbox):
    whole = run_cli("attributes", "--locale", "en_US", "--format", "json", "--refresh")
    spelling.no_pages_header = True
    result = run_cli("attributes", "--locale", "en_US", "--format", "json", "--refresh")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(whole.stdout)


@pytest.mark.parametrize("key", ["message", "error", "msg"])
def test_an_error_body_naming_its_message_otherwise_still_shows_it(spelling, run_cli, key):
    spelling.error_key = key
    result = run_cli("status", "99999")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    # `status` of a missing survey says so in its own words; --debug shows the service's.
    debugged = run_cli("--debug", "status", "99999")
    assert "the marketplace answered: GET " in debugged.stderr
    assert "answered 404: Survey not found" in debugged.stderr


def _error_of_a_missing_survey(sandbox, error_body: dict) -> str:
    """The client's error for a GET of a survey the sandbox does not hold, whose error body a
    proxy replaces with `error_body`."""

    class Rewritten(Proxy):
        def reshape(self, request, answer, headers) -> bytes:
            return json.dumps(error_body).encode()

    from surveyctl.api import ApiClient
    from surveyctl.errors import ApiError

    proxy = Rewritten(sandbox.url)
    client = ApiClient(proxy.url, "sandbox-buyer-1", retries=0)
    try:
        with pytest.raises(ApiError) as failed:
            client.get_survey(99999)
    finally:
        client.close()
        proxy.stop()
    return str(failed.value)


def test_an_error_body_of_unknown_names_is_shown_as_it_came(sandbox):
    shown = _error_of_a_missing_survey(sandbox, {"detail": {"reason": "quota of calls used up"}})
    assert shown.endswith('answered 404: {"detail": {"reason": "quota of calls used up"}}')


def test_an_error_message_of_megabytes_is_cut_short_in_the_error(sandbox):
    shown = _error_of_a_missing_survey(sandbox, {"ps_api_response_message": "x" * 1_000_000})
    assert "answered 404: xxx" in shown
    assert shown.endswith("x...")
    assert len(shown) < 2200


class MoveAnsweredWithout(Proxy):
    """Moves a survey's status as the sandbox does, answering the move with `body`."""

    body, status = b"[]", 200

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "PUT" and request.path.endswith("/status") and answer.ok:
            answer.status_code = self.status
            return self.body
        return answer.content


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, b"[]"), (200, b""), (204, b""),
     (200, b'{"ps_api_response_message": "Survey status updated"}')],
)  # fmt: skip
def test_a_status_move_answered_without_the_status_is_confirmed_by_a_read(
    sandbox, project, run_cli, new_survey, status, body
):
    survey_id = new_survey()
    proxy = MoveAnsweredWithout(sandbox.url)
    proxy.body, proxy.status = body, status
    with pointed_at(project, proxy):
        result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.exit_code == 0, result.stderr
    assert f"survey {survey_id} is live (22)" in result.stdout


class NoRecord(Proxy):
    """Answers every read of one transaction with an array of none, the documented array of
    one without its record."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and "/transactions/" in request.path:
            answer.status_code = 200
            return b"[]"
        return answer.content


@pytest.mark.parametrize(
    "command",
    [("transactions", "get"), ("transactions", "set-status", "--status", "term", "--yes")],
    ids=["get", "set-status"],
)
def test_a_transaction_answered_as_an_empty_array_is_one_sentence(
    sandbox, project, run_cli, new_survey, command
):
    survey_id = new_survey()
    proxy = NoRecord(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli(*command[:2], str(survey_id), "t-1", *command[2:])
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().endswith(
        "/transactions/t-1 answered 200: no record of the transaction (an empty list)"
    )


class AdjustmentAsArrayOfOne(Proxy):
    """Answers an adjustment request with its summary wrapped in an array of one, the shape
    the service gives one transaction (public facts)."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "POST" and "/adjustments" in request.path and answer.ok:
            return json.dumps([answer.json()]).encode()
        return answer.content


def test_an_adjustment_answered_as_an_array_of_one_shows_its_id_and_status(
    sandbox, project, run_cli, new_survey, api
):
    survey_id = new_survey(live=True)
    api.simulate_traffic(survey_id, {"respondents": 20, "seed": 4})
    pages = api.iter_pages(api.get_transactions_page, survey_id=survey_id, status=[21])
    complete = next(iter(pages))[0]["Transaction ID"]
    (project / "ids.csv").write_text(f"transaction_id\n{complete}\n", encoding="utf-8")
    proxy = AdjustmentAsArrayOfOne(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("adjust", "ids.csv", "--survey", str(survey_id), "--yes")
    assert result.exit_code == 0, result.stderr
    assert "status 1 (Pending)" in result.stdout + result.stderr
    assert "adjustment ?" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("body", "message"),
    [({"error": {"message": "Rate limit"}}, "Rate limit"),
     ({"error": True, "message": "Survey not found"}, "Survey not found"),
     ({"error": True}, ""),
     ({"error_description": "token expired"}, "token expired")],
)  # fmt: skip
def test_the_message_of_an_error_body_is_found_under_each_name(body, message):
    from surveyctl.api.reading import error_fields

    assert error_fields(body) == (None, message)


def test_an_error_code_of_digits_that_are_not_ascii_is_no_code_not_a_bug():
    from surveyctl.api.reading import error_fields

    assert error_fields({"ps_api_response_code": "²", "msg": "Survey not found"}) == (
        None,
        "Survey not found",
    )
