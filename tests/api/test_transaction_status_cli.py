"""`surveyctl transactions set-status`: a final status, asked for like every write that costs."""

from __future__ import annotations

import json

import pytest
from werkzeug.wrappers import Request

from ..reconcile.conftest import pointed_at
from ..reconcile.proxies import Proxy
from .conftest import QLC, SURVEY


def test_without_a_terminal_the_status_needs_yes(run_cli, api, new_survey, held):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id, "--status", "21")
    assert result.exit_code == 1
    assert "--yes" in result.stderr
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16


def test_with_yes_the_status_is_recorded(run_cli, api, new_survey, held):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "complete", "--yes")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "status 21 (complete)" in result.stdout
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 21


def test_the_answer_on_a_terminal_decides(run_cli, api, new_survey, held, monkeypatch):
    survey_id = new_survey(live=True)
    first, second = held(survey_id)[:2]
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)
    declined = run_cli("transactions", "set-status", str(survey_id), first, "--status", "18",
                       input="n\n")  # fmt: skip
    accepted = run_cli("transactions", "set-status", str(survey_id), second, "--status", "18",
                       input="y\n")  # fmt: skip
    assert (declined.exit_code, accepted.exit_code) == (1, 0)  # declined: nothing done, exit 1
    assert "nothing sent" in declined.stderr
    assert api.get_transaction(survey_id, first)["Respondent Status Code"] == 16
    assert api.get_transaction(survey_id, second)["Respondent Status Code"] == 18


def test_a_status_that_is_not_final_is_refused_before_any_request(run_cli):
    result = run_cli("transactions", "set-status", "10001", "T1", "--status", "16", "--yes")
    assert result.exit_code == 1
    assert "--status '16' is not a final status" in result.stderr
    # The environment is announced when the client opens: it never was.
    assert "surveyctl: environment" not in result.stderr


def test_qlc_quota_ids_are_sent_with_the_complete(run_cli, api, new_survey, held):
    survey_id = new_survey(live=True, qlc=QLC)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--quota-id", "male", "--yes")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    fielded = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert fielded["male"] == 1


def test_a_refusal_of_the_service_is_one_sentence(run_cli, new_survey):
    survey_id = new_survey(live=True)
    result = run_cli("transactions", "set-status", str(survey_id), "no-such", "--status", "21",
                     "--yes")  # fmt: skip
    assert result.exit_code == 1
    # The transaction is read first, so the service's 400 for it is the one sentence.
    assert result.stderr.splitlines()[-1].startswith("Error: GET ")
    assert "Invalid transaction: 'no-such' is not a transaction of survey" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_ended_session_is_refused_with_the_ones_it_can_move_before_asking(
    run_cli, api, new_survey, held
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    api.set_transaction_status(survey_id, transaction_id, 18)
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: transaction {transaction_id} of survey {survey_id} already has the final status "
        "18 (buyer termination); only a session still in your survey (16) or dropped (19) can "
        f"be given one: `surveyctl transactions list {survey_id} --status 16,19`"
    )
    assert "will get status" not in result.stdout


class _LosingProxy(Proxy):
    """Forwards everything; the answer of a status call that was made is replaced by a 502,
    as a gateway that lost the service's answer gives it. `sent` counts the status calls."""

    sent = 0
    # Also lose the answers of every read after the status call: the record cannot be read back.
    lose_reads_after = False

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        lost = request.method == "POST" and request.path.endswith("/status")
        self.sent += lost
        if lost or (self.lose_reads_after and self.sent and request.method == "GET"):
            answer.status_code = 502
            headers["Content-Type"] = "text/plain"
            return b"bad gateway"
        return answer.content


def _set_status_answer_lost(
    run_cli, sandbox, project, survey_id, transaction_id, status, lose_reads_after=False
):
    """`transactions set-status` through a proxy that loses the status call's answer; the
    result and the (stopped) proxy, which counted the calls."""
    proxy = _LosingProxy(sandbox.url)
    proxy.lose_reads_after = lose_reads_after
    with pointed_at(project, proxy):
        result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                         "--status", status, "--yes")  # fmt: skip
    return result, proxy


def test_a_lost_answer_whose_status_reads_back_is_reported_recorded(
    run_cli, api, new_survey, held, sandbox, project
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    result, _ = _set_status_answer_lost(run_cli, sandbox, project, survey_id, transaction_id, "21")
    assert result.exit_code == 0, result.stderr
    assert f"Recorded: transaction {transaction_id} has status 21." in result.stdout
    assert "the answer of the status call was lost" in result.stderr
    assert "the transaction, read back, has status 21" in result.stderr
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 21


def test_a_lost_answer_is_never_sent_again(run_cli, new_survey, held, sandbox, project):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    result, proxy = _set_status_answer_lost(
        run_cli, sandbox, project, survey_id, transaction_id, "18"
    )
    assert result.exit_code == 0, result.stderr
    assert proxy.sent == 1
    assert "retrying" not in result.stderr


def test_a_quota_list_with_an_empty_item_is_refused_before_any_request(
    run_cli, api, new_survey, held
):
    survey_id = new_survey(live=True, qlc=QLC)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--quota-id", "male,,female", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: --quota-id 'male,,female' has an empty buyer_quota_id"
    )
    assert "surveyctl: environment" not in result.stderr  # the client never opened
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16


def test_sqlc_without_quota_ids_is_refused_before_any_request(run_cli, api, new_survey, held):
    survey_id = new_survey(live=True, qlc=QLC)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--sqlc", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "Error: --sqlc needs --quota-id"
    assert "surveyctl: environment" not in result.stderr  # the client never opened
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16


class _TextCodesProxy(Proxy):
    """Forwards everything; a transaction read answers its status code as text ("18"), as the
    service sends some numeric fields of a record. `sent` counts the status calls."""

    sent = 0

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        if request.method == "POST" and request.path.endswith("/status"):
            self.sent += 1
        if request.method != "GET" or "/transactions/" not in request.path:
            return answer.content
        record = answer.json()
        record["Respondent Status Code"] = str(record["Respondent Status Code"])
        return json.dumps(record).encode()


def test_an_ended_session_whose_code_is_text_is_refused_before_asking(
    run_cli, api, new_survey, held, sandbox, project
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    api.set_transaction_status(survey_id, transaction_id, 18)
    proxy = _TextCodesProxy(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                         "--status", "21", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert "already has the final status 18 (buyer termination)" in result.stderr
    assert "will get status" not in result.stdout
    assert proxy.sent == 0


NO_QLC = (
    "Error: --quota-id: survey {id} has no QLC (qlc.enable is false), so a complete counts in "
    "the quotas the respondent screened into, not in those named; leave --quota-id out"
)
NO_SUCH_QUOTA = (
    "Error: --quota-id mael: no quota of survey {id} has that id (its buyer_quota_ids: female, "
    "male)"
)


@pytest.mark.parametrize(
    ("qlc", "quota_ids", "refusal"),
    [(None, "male", NO_QLC), (QLC, "male,mael", NO_SUCH_QUOTA)],
    ids=["survey without QLC", "id of no quota"],
)
def test_quota_ids_the_complete_would_not_count_in_are_refused_before_asking(
    run_cli, api, new_survey, held, qlc, quota_ids, refusal
):
    survey_id = new_survey(live=True, **({"qlc": qlc} if qlc else {}))
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--quota-id", quota_ids, "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == refusal.format(id=survey_id)
    assert "will get status" not in result.stdout
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16


class _StatusShapeProxy(Proxy):
    """Forwards everything; a transaction read answers `shown` as its status code (a service
    that leaves it out, or sends text that is no number); the answer of the status call is
    replaced by a 400 with `refusal` when one is set (what the client reads is what counts
    here, not what the sandbox did). `sent` counts status calls."""

    shown: object = None
    refusal: dict | None = None
    sent = 0

    def reshape(self, request: Request, answer, headers: dict) -> bytes:
        if request.method == "POST" and request.path.endswith("/status"):
            self.sent += 1
            if self.refusal is not None:
                answer.status_code = 400
                return json.dumps(self.refusal).encode()
            return answer.content
        if request.method != "GET" or "/transactions/" not in request.path:
            return answer.content
        record = answer.json()
        record["Respondent Status Code"] = self.shown
        return json.dumps(record).encode()


@pytest.fixture
def reshaped(sandbox, project):
    proxy = _StatusShapeProxy(sandbox.url)
    with pointed_at(project, proxy):
        yield proxy


@pytest.mark.parametrize("shown", [None, "n/a"], ids=["left out", "not a number"])
def test_a_record_whose_status_cannot_be_read_is_left_for_the_service_to_judge(
    run_cli, api, new_survey, held, reshaped, shown
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    reshaped.shown = shown
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "18", "--yes")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert reshaped.sent == 1
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 18


def test_an_ended_session_of_a_status_without_a_name_is_refused_by_its_code(
    run_cli, new_survey, held, reshaped
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    reshaped.shown = 99
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        f"Error: transaction {transaction_id} of survey {survey_id} already has the final status "
        "99; only a session still in your survey (16)"
    )
    assert reshaped.sent == 0


def test_a_status_call_the_service_refuses_is_said_as_refused_not_as_maybe_recorded(
    run_cli, new_survey, held, reshaped
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    reshaped.shown = 16
    reshaped.refusal = {"ps_api_response_code": 1005, "ps_api_response_message": "not now"}
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert "answered 400" in result.stderr and "not now" in result.stderr
    assert "may have been recorded" not in result.stderr
    assert reshaped.sent == 1


def test_a_lost_answer_not_read_back_says_in_full_how_to_see_whether_it_was_recorded(
    run_cli, new_survey, held, sandbox, project
):
    survey_id = new_survey(live=True)
    transaction_id = held(survey_id)[0]
    result, _ = _set_status_answer_lost(
        run_cli, sandbox, project, survey_id, transaction_id, "21", lose_reads_after=True
    )
    assert result.exit_code == 1
    assert "Recorded:" not in result.stdout
    assert f"status 21 of transaction {transaction_id} may have been recorded" in result.stderr
    assert result.stderr.splitlines()[-1].endswith(
        f"`surveyctl transactions get {survey_id} {transaction_id}` shows its status, and "
        "set-status refuses a session that has one"
    )


def test_a_status_that_is_no_final_one_is_refused_naming_every_final_status(run_cli):
    result = run_cli("transactions", "set-status", "10001", "T1", "--status", "paid", "--yes")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: --status 'paid' is not a final status: use one of 17 overquota, 18 term, "
        "20 quality, 21 complete, 30 security"
    )


SUPPLIER_QUOTAS = [
    {**quota, "buyer_quota_supplier_id": f"s-{quota['buyer_quota_id']}"}
    for quota in SURVEY["quotas"]
]


@pytest.mark.parametrize("quota_id", ["s-male", "male"], ids=["supplier id", "buyer id"])
def test_sqlc_counts_the_complete_in_a_quota_named_by_either_of_its_ids(
    run_cli, api, new_survey, held, quota_id
):
    survey_id = new_survey(live=True, qlc=QLC, quotas=SUPPLIER_QUOTAS)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--quota-id", quota_id, "--sqlc", "--yes")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 21


def test_without_sqlc_a_supplier_quota_id_is_refused_before_asking(run_cli, api, new_survey, held):
    survey_id = new_survey(live=True, qlc=QLC, quotas=SUPPLIER_QUOTAS)
    transaction_id = held(survey_id)[0]
    result = run_cli("transactions", "set-status", str(survey_id), transaction_id,
                     "--status", "21", "--quota-id", "s-male,s-female", "--yes")  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: --quota-id s-male, s-female: no quota of survey {survey_id} has that id (its "
        "buyer_quota_ids: female, male)"
    )
    assert api.get_transaction(survey_id, transaction_id)["Respondent Status Code"] == 16
