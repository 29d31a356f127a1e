"""A list answer is untrusted: a `total_pages` that is no page count, a page larger than asked,
an empty page before the last, pages of items read already, a service that keeps announcing
more. Every read is bounded, hands on each item once and ends with one sentence naming the
call and what was wrong, never a traceback or a read without end.

The service here is a small real HTTP server on loopback answering the survey list, a
survey's quotas and its transactions from a script of pages."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from werkzeug.wrappers import Request, Response

from surveyctl.api import ApiClient, reading
from surveyctl.api.account_surveys import account_surveys
from surveyctl.api.reading import UntrustedPage
from surveyctl.statuses import SURVEY_STATUSES

from ..loopback import LoopbackServer
from .conftest import point_project_at

KEY = "sk-live-7f3c9a1e5b2d4c6e8a0b"
SURVEY_ID = 10001

# A page of the list: (items, total_pages header or None to leave it out).
Script = Callable[[int, int], tuple[list[dict], str | None]]


class ScriptedList(LoopbackServer):
    """Answers GET of the survey list, a survey's quotas and its transactions with the pages
    `script(page, limit)` makes; counts the reads."""

    def __init__(self, script: Script):
        self.script = script
        self.reads = 0
        super().__init__(self._app)

    def _app(self, environ, start_response):
        request = Request(environ)
        self.reads += 1
        page = int(request.args.get("page", "1"))
        limit = int(request.args.get("limit", "100"))
        items, announced = self.script(page, limit)
        headers = {} if announced is None else {"total_pages": announced}
        answer = Response(json.dumps(items), 200, headers, mimetype="application/json")
        return answer(environ, start_response)


@pytest.fixture
def service():
    """`service(script)`: a ScriptedList and a client of it (no retries)."""
    made: list[tuple[ScriptedList, ApiClient]] = []

    def make(script: Script) -> tuple[ScriptedList, ApiClient]:
        server = ScriptedList(script)
        client = ApiClient(server.url, KEY, retries=0)
        made.append((server, client))
        return server, client

    yield make
    for server, client in made:
        client.close()
        server.stop()


def _surveys(page: int, count: int, first: int = 0) -> list[dict]:
    start = first + (page - 1) * count
    return [{"ps_survey_id": 20000 + start + i, "ps_survey_status": 11} for i in range(count)]


def _ids(surveys: list[dict]) -> list[int]:
    return [survey["ps_survey_id"] for survey in surveys]


@pytest.mark.parametrize("announced", ["-3", "2.5", "many", "nan", "inf"])
def test_a_total_pages_that_is_no_page_count_ends_the_read_naming_the_call_and_field(
    service, announced
):
    server, client = service(lambda page, limit: (_surveys(page, 3), announced))
    with pytest.raises(UntrustedPage) as raised:
        client.list_surveys(status=11)
    assert re.fullmatch(
        rf"GET \S*/buyers/v2/surveys answered page 1 with total_pages {re.escape(repr(announced))}"
        r", which is not a page count: the list cannot be read whole, so nothing more was read",
        str(raised.value),
    )
    assert server.reads == 1


@pytest.mark.parametrize("announced", ["1e20", str(2**63 + 1), "100001"])
def test_a_total_pages_past_the_most_one_read_takes_ends_the_read_before_page_2(service, announced):
    server, client = service(lambda page, limit: (_surveys(page, 3), announced))
    with pytest.raises(UntrustedPage) as raised:
        client.list_surveys(status=11)
    assert f"answered page 1 with total_pages {announced!r}, more pages than one read takes " in (
        str(raised.value)
    )
    assert server.reads == 1


def test_a_total_pages_written_as_a_whole_float_is_read_as_that_many_pages(service):
    server, client = service(lambda page, limit: (_surveys(page, 2), "3.0"))
    assert len(client.list_surveys(status=11)) == 6
    assert server.reads == 3


def test_a_service_that_keeps_announcing_one_more_page_is_read_no_further_than_the_most(
    service, monkeypatch
):
    monkeypatch.setattr(reading, "MAX_PAGES", 5)
    server, client = service(lambda page, limit: (_surveys(page, 2), str(page + 1)))
    with pytest.raises(UntrustedPage, match=r"page 5 with total_pages '6', more pages than one"):
        client.list_surveys(status=11)
    assert server.reads == 5


def test_full_pages_without_end_and_without_a_header_are_read_no_further_than_the_most(
    service, monkeypatch
):
    monkeypatch.setattr(reading, "MAX_PAGES", 4)
    server, client = service(lambda page, limit: (_surveys(page, limit), None))
    with pytest.raises(UntrustedPage, match=r"/buyers/v2/surveys answered page 4 announcing more"):
        client.list_surveys(status=11, limit=10)
    assert server.reads == 4


def test_a_page_with_more_items_than_its_limit_ends_the_read(service):
    server, client = service(lambda page, limit: (_surveys(page, limit + 5), "2"))
    with pytest.raises(UntrustedPage) as raised:
        client.list_surveys(status=11, limit=10)
    assert "answered page 1 with 15 items, more than the 10 its limit asked for" in str(
        raised.value
    )
    assert server.reads == 1


def test_an_empty_page_before_the_last_announced_ends_the_read(service):
    def script(page, limit):
        return ([] if page == 2 else _surveys(page, 3)), "4"

    _server, client = service(script)
    with pytest.raises(UntrustedPage, match=r"answered page 2 empty, announcing 4 pages"):
        client.list_surveys(status=11)


def test_an_empty_last_page_of_a_list_that_shrank_ends_the_read_quietly(service):
    # Page 1 announced 3; by page 2 the filter holds fewer and the answer says 1 page.
    def script(page, limit):
        return (_surveys(page, 3), "3") if page == 1 else ([], "1")

    _server, client = service(script)
    assert len(client.list_surveys(status=11)) == 3


def test_pages_that_come_back_to_items_read_before_end_the_read(service):
    # Pages 1, 2, 1, 2...: each differs from the one before, none is new after page 2.
    server, client = service(lambda page, limit: (_surveys(2 - page % 2, 3), "9"))
    with pytest.raises(UntrustedPage) as raised:
        client.list_surveys(status=11)
    assert "answered page 3 with only items of the pages before it (each ps_survey_id read)" in (
        str(raised.value)
    )
    assert server.reads == 3


def test_an_item_on_two_pages_is_handed_on_once(service):
    # Offset paging while the list grows: page 2 starts with the last survey of page 1.
    def script(page, limit):
        return _surveys(1, 3) if page == 1 else _surveys(1, 3, first=2), "2"

    _server, client = service(script)
    assert _ids(client.list_surveys(status=11)) == [20000, 20001, 20002, 20003, 20004]


def test_a_transaction_on_two_pages_is_exported_once(service):
    def script(page, limit):
        ids = ["t1", "t2"] if page == 1 else ["t2", "t3"]
        return [{"Transaction ID": t, "Respondent Status Code": 21} for t in ids], "2"

    _server, client = service(script)
    rows = [
        row["Transaction ID"]
        for items in client.iter_pages(client.get_transactions_page, survey_id=SURVEY_ID)
        for row in items
    ]
    assert rows == ["t1", "t2", "t3"]


def test_a_quota_list_with_a_bad_total_pages_names_its_own_path(service):
    _server, client = service(lambda page, limit: ([{"buyer_quota_id": "male"}], "-1"))
    with pytest.raises(UntrustedPage, match=rf"GET \S*/buyers/v2/surveys/{SURVEY_ID}/quotas "):
        client.list_quotas(SURVEY_ID)


def test_a_command_reading_a_hostile_list_says_what_was_wrong_in_one_sentence(
    service, project, run_cli
):
    server, _client = service(lambda page, limit: (_surveys(page, 3), "1e20"))
    point_project_at(project, server.url)
    result = run_cli("surveys", "list")
    assert result.exit_code == 1
    assert "total_pages '1e20', more pages than one read takes" in result.stderr
    assert "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("Error:")] == [
        result.stderr.splitlines()[-1]
    ]


def _transactions(*ids: str) -> list[dict]:
    return [{"Transaction ID": t, "Respondent Status Code": 21} for t in ids]


def test_transaction_pages_that_come_back_to_a_page_read_before_end_the_read(service):
    # Only the page before is remembered of the transactions (memory stays flat): a page
    # that is one read earlier is still recognised.
    pages = {1: ("t1", "t2"), 2: ("t3", "t4")}
    server, client = service(lambda page, limit: (_transactions(*pages[2 - page % 2]), "9"))
    with pytest.raises(UntrustedPage, match="answered page 3 with only items of the pages before"):
        list(client.iter_pages(client.get_transactions_page, survey_id=SURVEY_ID))
    assert server.reads == 3


def test_transactions_without_an_id_are_all_handed_on(service):
    def script(page, limit):
        return ([{"Respondent Status Code": 16 + page}] * 2 if page < 3 else []), "3"

    _server, client = service(script)
    pages = list(client.iter_pages(client.get_transactions_page, survey_id=SURVEY_ID))
    assert [len(items) for items in pages] == [2, 2, 0]


def test_the_account_listing_reads_full_pages_without_a_header_no_further_than_the_most(
    service, monkeypatch
):
    monkeypatch.setattr(reading, "MAX_PAGES", 4)
    server, client = service(lambda page, limit: (_surveys(page, limit), None))
    with pytest.raises(UntrustedPage, match=r"the survey list answered page 4 full still"):
        account_surveys(client, parallelism=2)
    assert server.reads <= 4 * len(SURVEY_STATUSES)
