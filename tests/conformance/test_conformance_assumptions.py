"""Rows of `surveyctl conformance` the client's correctness rests on, checked against the
sandbox (they hold) and against a deliberately wrong service (a loopback proxy in front of the
sandbox that alters one kind of answer: they differ)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from werkzeug.wrappers import Request, Response

from surveyctl.cli.main import cli

from ..reconcile.proxies import Proxy

KEY = "sandbox-buyer-1"
_LIST = re.compile(r"^/buyers/v2/surveys/?$")
_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")
_ATTRIBUTES = re.compile(r"^/buyers/v3/attributes/?$")
_TEXT_CHECK = re.compile(r"^/buyers/v3/transactions/ps_api_fail$")
GENDER = 211
TEXT_FLAGS = (
    "coretext_api_fail",
    "ai_generated_response",
    "incoherent_response",
    "duplicate_response",
    "language_mismatch",
)


class ListWithoutLocale(Proxy):
    """A survey list whose items lack `survey_localization` (GET of one survey still has it)."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and _LIST.match(request.path) and answer.ok:
            items = [
                {k: v for k, v in item.items() if k != "survey_localization"}
                for item in answer.json()
            ]
            return json.dumps(items).encode()
        return answer.content


class CodesWrittenAsText(Proxy):
    """A service that writes a survey's id, status and goal as text ("11") in the answers of
    a survey, its status, a patch and its list items, as it writes other numbers."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "PUT" or not answer.ok or not answer.content:
            return answer.content  # a PUT's answer: what the check sends back stays the sandbox's
        body = answer.json()
        items = body if isinstance(body, list) else [body]
        for item in items:
            for name in ("ps_survey_id", "ps_survey_status", "completes_required"):
                if isinstance(item, dict) and isinstance(item.get(name), int):
                    item[name] = str(item[name])
        return json.dumps(body).encode()


class RefusalsSayMessage(Proxy):
    """A service whose refusals keep their message under `message`, as gateways' do."""

    def reshape(self, request, answer, headers) -> bytes:
        if answer.ok or not answer.content:
            return answer.content
        body = answer.json()
        return json.dumps({"message": body.get("ps_api_response_message")}).encode()


class QuotasRemadeOnEveryRead(Proxy):
    """A service that gives every quota a new ps_quota_id (as one that re-creates the quotas
    of a PUT would): each GET of a survey shows fresh ids."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and _SURVEY.match(request.path) and answer.ok:
            body = answer.json()
            for quota in body.get("quotas") or []:
                quota["ps_quota_id"] = str(uuid.uuid4())
            return json.dumps(body).encode()
        return answer.content


class CreationTimeMovesOnWrites(Proxy):
    """A service that rewrites crtd_on on every write: a survey's GET shows the time of its
    last write there, as it does in mod_on."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and _SURVEY.match(request.path) and answer.ok:
            body = answer.json()
            body["crtd_on"] = body["mod_on"]
            return json.dumps(body).encode()
        return answer.content


class GenderOnTheLastPage(Proxy):
    """A catalogue that lists gender (211) on its last page rather than its first (spec 4.6:
    a question may be on any page, and on several); `nowhere` leaves it off every page."""

    def __init__(self, upstream: str, *, nowhere: bool = False):
        super().__init__(upstream)
        self.nowhere = nowhere
        self.gender: dict | None = None

    def reshape(self, request, answer, headers) -> bytes:
        if not (request.method == "GET" and _ATTRIBUTES.match(request.path) and answer.ok):
            return answer.content
        items = []
        for item in answer.json():
            if item["qualification_code"] == GENDER:
                self.gender = item  # page 1, which every reader reads first
            else:
                items.append(item)
        last = request.args.get("page", "1") == answer.headers["total_pages"]
        if last and not self.nowhere and self.gender is not None:
            items.append(self.gender)
        return json.dumps(items).encode()


class ReadFailsAfterAPutWithoutMessage(Proxy):
    """A service whose GET of a survey fails (500) once a PUT of it has left out
    buyer_message, until a PUT sends one again: the read a check makes after a PUT that
    clears fields is then no answer at all."""

    def __init__(self, upstream: str):
        super().__init__(upstream)
        self.failing = False

    def reshape(self, request, answer, headers) -> bytes:
        if _SURVEY.match(request.path):
            if request.method == "PUT":
                self.failing = "buyer_message" not in (request.get_json(silent=True) or {})
            elif request.method == "GET" and self.failing:
                answer.status_code = 500
                headers["Content-Type"] = "application/json"
                return json.dumps({"ps_api_response_message": "read failed (test)"}).encode()
        return answer.content


class TextCheckOfAnyTransaction(Proxy):
    """An open-ended check that checks the answers of any transaction id, one that does not
    exist too; or (`refuses_silently`) refuses every one with 400 and a body without message."""

    def __init__(self, upstream: str, *, refuses_silently: bool = False):
        super().__init__(upstream)
        self.refuses_silently = refuses_silently

    def _app(self, environ, start_response):
        request = Request(environ)
        if request.method != "POST" or not _TEXT_CHECK.match(request.path):
            return super()._app(environ, start_response)
        if self.refuses_silently:
            return _json_answer(400, {})(environ, start_response)
        sent = request.get_json()
        flags = dict.fromkeys(TEXT_FLAGS, 0)
        data = [{"question_id": q["question_id"], **flags} for q in sent["questions"]]
        answer = _json_answer(200, {"transaction_id": sent["transaction_id"], "data": data})
        return answer(environ, start_response)


def _json_answer(status: int, body: dict) -> Response:
    answer = Response(json.dumps(body), status)
    answer.content_type = "application/json"
    return answer


@pytest.fixture
def verdicts(tmp_path, monkeypatch):
    """{row id: (verdict, seen)} of one run against `url`."""
    monkeypatch.chdir(tmp_path)

    def run(url: str) -> dict[str, tuple[str, str]]:
        config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_A_KEY"}}}
        Path("surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = ["--env", "local", "conformance", "--format", "json"]
        result = CliRunner().invoke(cli, command, env={"SURVEYCTL_A_KEY": KEY})
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)["rows"]
        return {row["id"]: (row["verdict"], row["seen"]) for row in rows}

    return run


def _through(proxy_class, upstream: str, run, **options) -> dict[str, tuple[str, str]]:
    """The verdicts `run` finds through a `proxy_class(upstream, **options)`, stopped after."""
    proxy = proxy_class(upstream, **options)
    try:
        return run(proxy.url)
    finally:
        proxy.stop()


def test_the_list_carries_the_fields_surveyctl_recognises_a_survey_by(verdicts, sandbox):
    assert verdicts(sandbox.url)["list-identity"][0] == "holds"


def test_the_list_identity_row_holds_against_a_strict_sandbox(verdicts, strict_sandbox):
    assert verdicts(strict_sandbox.url)["list-identity"][0] == "holds"


def test_a_list_without_the_locale_differs_naming_the_field(verdicts, sandbox):
    verdict, seen = _through(ListWithoutLocale, sandbox.url, verdicts)["list-identity"]
    assert verdict == "differs"
    assert "survey_localization" in seen


def test_numbers_written_as_text_hold_where_the_client_reads_them_as_numbers(verdicts, sandbox):
    seen = _through(CodesWrittenAsText, sandbox.url, verdicts)
    for row in ("get-like-create", "list-identity", "survey-status", "patch", "survey-performance"):
        assert seen[row][0] == "holds", (row, seen[row])


def test_a_401_whose_message_is_under_message_is_readable(verdicts, sandbox):
    verdict, seen = _through(RefusalsSayMessage, sandbox.url, verdicts)["invalid-key-401"]
    assert verdict == "holds", seen


def test_quota_ids_are_kept_across_a_put_and_a_quota_put(verdicts, sandbox):
    assert verdicts(sandbox.url)["quota-ids-kept"][0] == "holds"


def test_quota_ids_that_change_differ(verdicts, sandbox):
    verdict, _ = _through(QuotasRemadeOnEveryRead, sandbox.url, verdicts)["quota-ids-kept"]
    assert verdict == "differs"


def test_a_crtd_on_that_moves_on_a_write_differs_naming_both_values(verdicts, sandbox):
    verdict, seen = _through(CreationTimeMovesOnWrites, sandbox.url, verdicts)["mod_on-moves"]
    assert verdict == "differs"
    before, after = re.search(r"crtd_on (\d+) -> (\d+): crtd_on moved on a write", seen).groups()
    assert int(after) > int(before)


def test_mod_on_moving_and_crtd_on_staying_holds_against_the_sandbox(verdicts, sandbox):
    verdict, seen = verdicts(sandbox.url)["mod_on-moves"]
    assert verdict == "holds"
    before, after = re.search(r"crtd_on (\d+) -> (\d+)$", seen).groups()
    assert before == after


def test_gender_found_on_a_later_page_of_the_catalogue_holds(verdicts, sandbox):
    verdict, seen = _through(GenderOnTheLastPage, sandbox.url, verdicts)["catalogue-gender"]
    assert verdict == "holds", seen
    assert seen == "211 answers ['111', '112', '113'] (page 3)"


def test_gender_on_no_page_of_the_catalogue_differs_after_reading_every_page(verdicts, sandbox):
    rows = _through(GenderOnTheLastPage, sandbox.url, verdicts, nowhere=True)
    verdict, seen = rows["catalogue-gender"]
    assert verdict == "differs"
    assert seen == "no attribute 211 on any of the 3 page(s) of the catalogue"


def test_a_read_that_fails_after_a_put_is_a_difference_not_fields_cleared(verdicts, sandbox):
    rows = _through(ReadFailsAfterAPutWithoutMessage, sandbox.url, verdicts)
    verdict, seen = rows["put-overwrites"]
    assert verdict == "differs"
    assert re.fullmatch(
        r"GET /surveys/\d+ answered 500: read failed \(test\), no survey to look at", seen
    )


def test_the_open_ended_check_refuses_an_unknown_transaction_with_its_message(verdicts, sandbox):
    verdict, seen = verdicts(sandbox.url)["text-check-unknown"]
    assert verdict == "holds"
    assert seen == "POST /transactions/ps_api_fail answered 400 (code 1023): Invalid transaction"


def test_an_open_ended_check_that_takes_an_unknown_transaction_differs(verdicts, sandbox):
    verdict, seen = _through(TextCheckOfAnyTransaction, sandbox.url, verdicts)["text-check-unknown"]
    assert verdict == "differs"
    assert seen == "POST /transactions/ps_api_fail answered 200"


def test_an_unknown_transaction_refused_without_a_message_differs(verdicts, sandbox):
    rows = _through(TextCheckOfAnyTransaction, sandbox.url, verdicts, refuses_silently=True)
    verdict, seen = rows["text-check-unknown"]
    assert verdict == "differs"
    assert seen.endswith("answered 400, without a message the client can read")
