"""`surveyctl conformance` against a service that contradicts an assumption, over real HTTP
through a loopback proxy in front of the sandbox: the report says "differs" for that check,
with what came back, and every other check says what it says against the sandbox itself."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from werkzeug.wrappers import Request

from surveyctl.cli.main import cli
from surveyctl.conformance.reads import UNKNOWN_GROUP_REF
from surveyctl.conformance.writes import INVALID_KEY, UNKNOWN_SURVEY_ID

from ..reconcile.proxies import Proxy

KEY = "sandbox-buyer-1"
_LIST = "/buyers/v2/surveys"
_ATTRIBUTES = "/buyers/v3/attributes"
_SURVEY = re.compile(r"^/buyers/v2/surveys/\d+$")


class Contradicting(Proxy):
    """Passes everything through, but answers the requests `picks` chooses as `answer` says:
    `answer(request, body, headers)` returns (status, body), `headers` changed in place. With
    `reshapes_reads`, `picks` sees only the run's own reads the service answered 200 (not the
    probe of an invalid key, nor the 404 after the draft's delete)."""

    reshapes_reads = False

    def picks(self, request: Request) -> bool:
        raise NotImplementedError

    def answer(self, request: Request, body, headers: dict) -> tuple[int, object]:
        raise NotImplementedError

    def reshape(self, request, answer, headers) -> bytes:
        if self.reshapes_reads and not (
            request.method == "GET"
            and answer.status_code == 200
            and request.headers.get("access-token") == KEY
        ):
            return answer.content
        if not self.picks(request):
            return answer.content
        body = answer.json() if answer.content else None
        status, body = self.answer(request, body, headers)
        answer.status_code = status
        headers["Content-Type"] = "application/json"
        return json.dumps(body).encode()


def _run(url: str, folder: Path, output: str = "json") -> Result:
    """`surveyctl conformance --format OUTPUT` in `folder` against `url`."""
    config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_D_KEY"}}}
    (folder / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    command = ["--env", "local", "--timeout", "3", "conformance", "--format", output]
    before = os.getcwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(cli, command, env={"SURVEYCTL_D_KEY": KEY})
    finally:
        os.chdir(before)


@pytest.fixture
def run_through(sandbox, tmp_path):
    """Runs `surveyctl conformance --format json` through `proxy_class` in front of the
    session sandbox; the report's rows by id."""

    def run(proxy_class: type[Proxy]) -> dict[str, dict]:
        proxy = proxy_class(sandbox.url)
        try:
            result = _run(proxy.url, tmp_path)
        finally:
            proxy.stop()
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return {row["id"]: row for row in json.loads(result.stdout)["rows"]}

    return run


@pytest.fixture
def plain(sandbox, tmp_path) -> dict[str, str]:
    """The verdicts of a run against the sandbox itself, by id."""
    folder = tmp_path / "plain"
    folder.mkdir()
    result = _run(sandbox.url, folder)
    return {row["id"]: row["verdict"] for row in json.loads(result.stdout)["rows"]}


def _others(rows: dict[str, dict], *changed: str) -> dict[str, str]:
    return {name: row["verdict"] for name, row in rows.items() if name not in changed}


def _without(plain: dict[str, str], *changed: str) -> dict[str, str]:
    return {name: verdict for name, verdict in plain.items() if name not in changed}


# The list's mod_on: whether a plan can skip reading unchanged surveys.


class ListWithoutModOn(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return request.path == _LIST

    def answer(self, request, body, headers):
        return 200, [{k: v for k, v in item.items() if k != "mod_on"} for item in body]


def test_a_list_without_mod_on_differs_saying_how_many_items_carry_it(run_through, plain):
    rows = run_through(ListWithoutModOn)
    assert rows["list-mod_on"]["verdict"] == "differs"
    assert re.fullmatch(r"0 of \d+ items carry mod_on", rows["list-mod_on"]["seen"])
    assert _others(rows, "list-mod_on") == _without(plain, "list-mod_on")


def test_a_list_without_mod_on_is_said_to_make_a_plan_read_every_survey(sandbox, tmp_path):
    proxy = ListWithoutModOn(sandbox.url)
    try:
        result = _run(proxy.url, tmp_path, "table")
    finally:
        proxy.stop()
    assert "The survey list carries mod_on: no (a plan reads every survey)" in (
        result.stdout.splitlines()
    )


class ListModOnAsText(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return request.path == _LIST

    def answer(self, request, body, headers):
        return 200, [dict(item, mod_on=str(item["mod_on"])) for item in body]


def test_a_list_writing_mod_on_as_text_holds_as_the_plan_reads_it(run_through, plain):
    rows = run_through(ListModOnAsText)
    assert rows["list-mod_on"]["verdict"] == "holds", rows["list-mod_on"]["seen"]
    assert _others(rows) == plain


# One survey's mod_on and crtd_on.


class SurveyModOnAsText(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return bool(_SURVEY.match(request.path))

    def answer(self, request, body, headers):
        return 200, dict(body, mod_on=str(body["mod_on"]), crtd_on=str(body["crtd_on"]))


def test_a_survey_writing_mod_on_as_text_holds_for_both_mod_on_checks(run_through, plain):
    rows = run_through(SurveyModOnAsText)
    assert rows["get-mod_on"]["verdict"] == "holds", rows["get-mod_on"]["seen"]
    assert rows["mod_on-moves"]["verdict"] == "holds", rows["mod_on-moves"]["seen"]
    assert _others(rows) == plain


class ModOnPinned(Contradicting):
    """A service whose mod_on never moves (as the documentation's examples show one value)."""

    reshapes_reads = True

    def picks(self, request):
        return bool(_SURVEY.match(request.path))

    def answer(self, request, body, headers):
        return 200, dict(body, mod_on=1741166851000)


def test_a_mod_on_that_does_not_move_on_a_put_differs_naming_both_values(run_through, plain):
    rows = run_through(ModOnPinned)
    assert rows["mod_on-moves"]["verdict"] == "differs"
    assert rows["mod_on-moves"]["seen"].startswith("mod_on 1741166851000 -> 1741166851000, ")
    assert _others(rows, "mod_on-moves") == _without(plain, "mod_on-moves")


class StatusFilterIgnored(Contradicting):
    """A service whose survey list ignores `status`: status=22 lists the drafts too."""

    reshapes_reads = True

    def picks(self, request):
        return request.path == _LIST and request.args.get("status") == "22"

    def answer(self, request, body, headers):
        params = dict(request.args, status="11")
        drafts = self.session.get(
            self.upstream + _LIST, params=params, headers={"access-token": KEY}, timeout=30
        )
        headers["total_pages"] = drafts.headers.get("total_pages", "1")
        return 200, drafts.json()


def test_a_list_that_ignores_the_status_differs_showing_the_draft_among_live_surveys(
    run_through, plain
):
    rows = run_through(StatusFilterIgnored)
    assert rows["list-status"]["verdict"] == "differs"
    assert re.search(r"in status=22 \(\d+\): True$", rows["list-status"]["seen"])
    assert _others(rows, "list-status") == _without(plain, "list-status")


# Paging.


class ListWithoutPages(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return request.path == _LIST

    def answer(self, request, body, headers):
        headers.pop("total_pages", None)
        return 200, body


def test_a_list_without_total_pages_differs_saying_the_header_is_missing(run_through, plain):
    rows = run_through(ListWithoutPages)
    assert rows["list-total-pages"]["verdict"] == "differs"
    assert rows["list-total-pages"]["seen"].endswith("answered 200; total_pages None")
    assert _others(rows, "list-total-pages") == _without(plain, "list-total-pages")


class CatalogueWithoutPages(Contradicting):
    reshapes_reads = True

    def picks(self, request):
        return request.path == _ATTRIBUTES

    def answer(self, request, body, headers):
        headers.pop("total_pages", None)
        return 200, body


def test_a_catalogue_without_total_pages_differs_saying_what_page_1_held(run_through, plain):
    rows = run_through(CatalogueWithoutPages)
    assert rows["catalogue-pages"]["verdict"] == "differs"
    assert re.fullmatch(
        r"\d+ attributes on page 1, total_pages None", rows["catalogue-pages"]["seen"]
    )
    assert _others(rows, "catalogue-pages") == _without(plain, "catalogue-pages")


class CatalogueOfCoreOnlyWithoutClass(Contradicting):
    """A catalogue that, asked without `class`, answers its core attributes (class 1) only:
    those of page 1 (the sandbox lists core attributes first), on one page."""

    reshapes_reads = True

    def picks(self, request):
        return request.path == _ATTRIBUTES and "class" not in request.args

    def answer(self, request, body, headers):
        headers["total_pages"] = "1"
        return 200, [item for item in body if item["class"] == 1]


def test_a_catalogue_without_class_holding_only_core_attributes_differs_naming_one_missing(
    run_through, plain
):
    rows = run_through(CatalogueOfCoreOnlyWithoutClass)
    assert rows["catalogue-every-class"]["verdict"] == "differs"
    assert re.fullmatch(
        r"attribute \d+ \(class [23]\) is on no page of the \d+ read without class",
        rows["catalogue-every-class"]["seen"],
    )
    assert _others(rows, "catalogue-every-class") == _without(plain, "catalogue-every-class")


# Error bodies.


class UnknownSurveyForbidden(Contradicting):
    """Answers the unknown survey as another buyer's: 403, code 1020."""

    def picks(self, request):
        return request.path == f"{_LIST}/{UNKNOWN_SURVEY_ID}"

    def answer(self, request, body, headers):
        return 403, {"ps_api_response_code": 1020, "ps_api_response_message": "not yours"}


def test_an_unknown_survey_answered_403_differs_with_the_status_code_and_message(
    run_through, plain
):
    rows = run_through(UnknownSurveyForbidden)
    assert rows["unknown-survey-404"]["verdict"] == "differs"
    assert rows["unknown-survey-404"]["seen"] == (
        f"GET /surveys/{UNKNOWN_SURVEY_ID} answered 403 (code 1020): not yours"
    )
    assert _others(rows, "unknown-survey-404") == _without(plain, "unknown-survey-404")


class UnknownGroupRefused(Contradicting):
    """Answers the read of a group that does not exist 400, as a service whose GET refuses a
    reference it does not know might."""

    def picks(self, request):
        return request.path == f"/buyers/v2/surveygroups/{UNKNOWN_GROUP_REF}"

    def answer(self, request, body, headers):
        return 400, {"ps_api_response_code": 1050, "ps_api_response_message": "bad reference"}


def test_an_unknown_group_answered_400_differs_with_the_status_code_and_message(run_through, plain):
    rows = run_through(UnknownGroupRefused)
    assert rows["unknown-group-404"]["verdict"] == "differs"
    assert rows["unknown-group-404"]["seen"] == (
        f"GET /surveygroups/{UNKNOWN_GROUP_REF} answered 400 (code 1050): bad reference"
    )
    assert _others(rows, "unknown-group-404") == _without(plain, "unknown-group-404")


class TransactionPagesOfAtMost100(Contradicting):
    """A transactions list whose `limit` is at most 100: a larger one is refused."""

    def picks(self, request):
        return request.path.endswith("/transactions") and int(request.args["limit"]) > 100

    def answer(self, request, body, headers):
        return 400, {"ps_api_response_code": 1051, "ps_api_response_message": "limit above 100"}


def test_a_transactions_list_refusing_pages_of_500_differs_naming_the_refusal(run_through, plain):
    rows = run_through(TransactionPagesOfAtMost100)
    assert rows["transactions-page"]["verdict"] == "differs"
    assert re.fullmatch(
        r"GET /surveys/\d+/transactions answered 400 \(code 1051\): limit above 100",
        rows["transactions-page"]["seen"],
    )
    assert _others(rows, "transactions-page") == _without(plain, "transactions-page")


class InvalidKeyWithoutMessage(Contradicting):
    def picks(self, request):
        return request.headers.get("access-token") == INVALID_KEY

    def answer(self, request, body, headers):
        return 401, {"error": True}


def test_a_401_without_a_readable_message_differs_saying_so(run_through, plain):
    rows = run_through(InvalidKeyWithoutMessage)
    assert rows["invalid-key-401"]["verdict"] == "differs"
    assert rows["invalid-key-401"]["seen"] == (
        "GET /surveys with an invalid key answered 401, without a message the client can read"
    )
    assert _others(rows, "invalid-key-401") == _without(plain, "invalid-key-401")


# Writes.


class QlcRefusedWithAnotherCode(Contradicting):
    """Refuses QLC without quotas, but with the code of an invalid body (1004)."""

    def picks(self, request):
        if request.method != "PUT" or not _SURVEY.match(request.path):
            return False
        return bool((request.get_json(silent=True) or {}).get("qlc", {}).get("enable"))

    def answer(self, request, body, headers):
        return 400, {"ps_api_response_code": 1004, "ps_api_response_message": "invalid body"}


def test_qlc_refused_with_another_code_differs_naming_the_code(run_through, plain):
    rows = run_through(QlcRefusedWithAnotherCode)
    assert rows["qlc-needs-quotas"]["verdict"] == "differs"
    assert rows["qlc-needs-quotas"]["seen"].endswith("answered 400 (code 1004): invalid body")
    assert _others(rows, "qlc-needs-quotas") == _without(plain, "qlc-needs-quotas")


class UnknownLocaleTaken(Contradicting):
    """Takes a survey whose locale the catalogue lacks (answers the sandbox's 400 with 200)."""

    def picks(self, request):
        body = request.get_json(silent=True) if request.method == "PUT" else None
        return isinstance(body, dict) and body.get("survey_localization") == "xx_XX"

    def answer(self, request, body, headers):
        return 200, dict(request.get_json(), ps_survey_id=int(request.path.rsplit("/", 1)[1]))


def test_an_unknown_locale_that_is_taken_differs_with_the_answer(run_through, plain):
    rows = run_through(UnknownLocaleTaken)
    assert rows["unknown-locale"]["verdict"] == "differs"
    assert re.fullmatch(r"PUT /surveys/\d+ answered 200", rows["unknown-locale"]["seen"])
    assert _others(rows, "unknown-locale") == _without(plain, "unknown-locale")


class QbpWithoutQuotasTaken(Contradicting):
    """Answers QBP on without quotas 200 (the sandbox's refusal passed off as taken)."""

    def picks(self, request):
        if request.method != "PUT" or not _SURVEY.match(request.path):
            return False
        body = request.get_json(silent=True) or {}
        return bool((body.get("qbp") or {}).get("enable")) and not body.get("quotas")

    def answer(self, request, body, headers):
        return 200, dict(request.get_json(), ps_survey_id=int(request.path.rsplit("/", 1)[1]))


def test_qbp_without_quotas_taken_differs_with_the_answer(run_through, plain):
    rows = run_through(QbpWithoutQuotasTaken)
    assert rows["qbp-needs-quotas"]["verdict"] == "differs"
    assert re.fullmatch(r"PUT /surveys/\d+ answered 200", rows["qbp-needs-quotas"]["seen"])
    assert _others(rows, "qbp-needs-quotas") == _without(plain, "qbp-needs-quotas")


class QuotaPutWithoutIds(Contradicting):
    """Answers a quota PUT without the quota's ids (only required_count and criteria)."""

    def picks(self, request):
        return request.method == "PUT" and "/quotas/" in request.path

    def answer(self, request, body, headers):
        return 200, {k: v for k, v in body.items() if k in ("required_count", "criteria")}


def test_a_quota_put_answered_without_its_ids_differs_naming_them(run_through, plain):
    rows = run_through(QuotaPutWithoutIds)
    assert rows["quota-put"]["verdict"] == "differs"
    assert re.fullmatch(
        r"PUT /surveys/\d+/quotas/\S+ answered 200, without \['buyer_quota_id', 'ps_quota_id'\]",
        rows["quota-put"]["seen"],
    )
    assert _others(rows, "quota-put") == _without(plain, "quota-put")


class PatchNotAllowed(Contradicting):
    def picks(self, request):
        return request.method == "PATCH" and bool(_SURVEY.match(request.path))

    def answer(self, request, body, headers):
        return 405, {"ps_api_response_message": "Method Not Allowed"}


def test_a_patch_answered_405_differs_with_the_status_and_message(run_through, plain):
    rows = run_through(PatchNotAllowed)
    assert rows["patch"]["verdict"] == "differs"
    assert re.fullmatch(
        r"PATCH /surveys/\d+ answered 405: Method Not Allowed", rows["patch"]["seen"]
    )
    assert _others(rows, "patch") == _without(plain, "patch")


class PutKeepsLeftOutFields(Contradicting):
    """A service whose PUT merges: GET shows the external_project_id a first PUT set even
    after a PUT without it."""

    reshapes_reads = True

    def __init__(self, upstream: str):
        self.kept: dict[str, str] = {}
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "PUT" and _SURVEY.match(request.path):
            sent = (request.get_json(silent=True) or {}).get("external_project_id")
            if sent:
                self.kept[request.path] = sent
        return super().reshape(request, answer, headers)

    def picks(self, request):
        return request.path in self.kept

    def answer(self, request, body, headers):
        return 200, dict(body, external_project_id=self.kept[request.path])


def test_a_put_that_keeps_left_out_fields_differs_naming_them(run_through, plain):
    rows = run_through(PutKeepsLeftOutFields)
    assert rows["put-overwrites"]["verdict"] == "differs"
    assert "'external_project_id': 'conformance-project'" in rows["put-overwrites"]["seen"]
    assert rows["put-overwrites"]["seen"].startswith("fields left out of the second PUT")
    assert _others(rows, "put-overwrites") == _without(plain, "put-overwrites")
