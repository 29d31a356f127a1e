"""The open-ended check: the sandbox's rules and limits, and `surveyctl text-check` over HTTP."""

from __future__ import annotations

import json

import pytest
import requests

from surveyctl.errors import ApiError

from ..reconcile.conftest import pointed_at
from ..reconcile.proxies import Proxy

CLEAN = "I really like the taste of this coffee and the price is fair for me."


@pytest.fixture
def transaction_id(api, live_survey) -> str:
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 3, "seed": 1})
    items, _ = api.get_transactions_page(survey_id)
    return items[0]["Transaction ID"]


def _flags(api, transaction_id, *texts):
    questions = [{"question_id": f"q{n}", "text": t} for n, t in enumerate(texts)]
    return api.text_check(transaction_id, questions)["data"]


def test_a_clean_answer_raises_no_flag(api, transaction_id):
    (item,) = _flags(api, transaction_id, CLEAN)
    assert item == {
        "question_id": "q0",
        "coretext_api_fail": 0,
        "ai_generated_response": 0,
        "incoherent_response": 0,
        "duplicate_response": 0,
        "language_mismatch": 0,
    }


def test_the_same_text_again_in_the_survey_is_a_duplicate(api, transaction_id):
    first = _flags(api, transaction_id, "The packaging was too hard to open for my mother.")
    again = _flags(api, transaction_id, "the packaging was too hard to open for my MOTHER")
    assert first[0]["duplicate_response"] == 0
    assert again[0]["duplicate_response"] == 1


def test_an_answer_in_another_language_than_the_survey_is_a_mismatch(api, transaction_id):
    (item,) = _flags(api, transaction_id, "Je pense que le produit est très bon pour nous")
    assert item["language_mismatch"] == 1


def test_gibberish_and_curse_words_are_incoherent(api, transaction_id):
    items = _flags(api, transaction_id, "asdfgh asdfgh", "this survey is shit", "xzkq wrtp bbbbbbb")
    assert [i["incoherent_response"] for i in items] == [1, 1, 1]


def test_an_assistants_phrasing_is_machine_generated(api, transaction_id):
    (item,) = _flags(api, transaction_id, "As an AI language model, I do not drink coffee.")
    assert item["ai_generated_response"] == 1


def test_21_answers_in_one_call_are_a_parameter_error(api, transaction_id):
    questions = [{"question_id": f"q{n}", "text": CLEAN} for n in range(21)]
    with pytest.raises(ApiError) as refused:
        api.text_check(transaction_id, questions)
    assert refused.value.status == 422


def test_a_malformed_body_is_a_bad_request(sandbox, transaction_id):
    response = requests.post(
        f"{sandbox.url}/buyers/v3/transactions/ps_api_fail",
        json={"transaction_id": transaction_id, "questions": [{"question_id": "q1"}]},
        headers={"access-token": "sandbox-buyer-1"},
        timeout=10,
    )
    assert response.status_code == 400
    assert "text" in response.json()["ps_api_response_message"]


def test_an_unknown_transaction_is_refused_with_the_documented_message(api):
    with pytest.raises(ApiError) as refused:
        api.text_check("no-such-transaction", [{"question_id": "q1", "text": CLEAN}])
    assert refused.value.status == 400
    assert str(refused.value).endswith("answered 400 (code 1023): Invalid transaction")


def test_another_buyers_transaction_is_refused(other_buyer_api, transaction_id):
    with pytest.raises(ApiError) as refused:
        other_buyer_api.text_check(transaction_id, [{"question_id": "q1", "text": CLEAN}])
    assert refused.value.status == 400


def test_cli_sends_25_answers_in_two_calls_and_prints_a_row_per_answer(
    api, transaction_id, run_cli, project, monkeypatch
):
    from surveyctl.api import client as client_module

    calls = []
    original = client_module.ApiClient.text_check

    def counting(self, tid, questions):
        calls.append(len(questions))
        return original(self, tid, questions)

    monkeypatch.setattr(client_module.ApiClient, "text_check", counting)
    answers = [
        {"question_id": f"q{n:02d}", "text": f"Answer number {n} is fine"} for n in range(25)
    ]
    (project / "answers.json").write_text(json.dumps(answers))
    result = run_cli("text-check", transaction_id, "--answers", "answers.json", "--format", "json")
    assert result.exit_code == 0, result.output
    assert calls == [20, 5]
    data = json.loads(result.stdout)["data"]
    assert [d["question_id"] for d in data] == [a["question_id"] for a in answers]


def test_cli_table_marks_the_raised_flags(transaction_id, run_cli, project):
    (project / "answers.csv").write_text(
        'question_id,text\nq1,"I like the coffee and the price is fair"\nq2,asdf asdf asdf\n'
    )
    result = run_cli("text-check", transaction_id, "--answers", "answers.csv")
    assert result.exit_code == 0, result.output
    q2 = next(line for line in result.stdout.splitlines() if line.startswith("q2"))
    assert "yes" in q2
    q1 = next(line for line in result.stdout.splitlines() if line.startswith("q1"))
    assert "yes" not in q1
    assert "2 answer(s) checked, 1 flagged" in result.stderr


def test_cli_names_the_line_of_a_bad_answers_file(transaction_id, run_cli, project):
    (project / "answers.csv").write_text("question_id,text\nq1,ok\n,missing id\n")
    result = run_cli("text-check", transaction_id, "--answers", "answers.csv")
    assert result.exit_code == 1
    assert "answers.csv:3: question_id is missing or empty" in result.stderr


def test_cli_table_piped_shows_each_answer_whole(transaction_id, run_cli, project):
    answer = "I like the coffee, the price is fair and the shop is close to where I work"
    (project / "answers.csv").write_text(f'question_id,text\nq1,"{answer}"\n')
    result = run_cli("text-check", transaction_id, "--answers", "answers.csv")
    assert result.exit_code == 0, result.output
    assert answer in result.stdout


def test_cli_sends_the_letters_of_a_windows_1252_csv_as_they_were_typed(
    transaction_id, run_cli, project
):
    answers = "question_id,text\r\nq1,Très bon café\r\n"
    (project / "answers.csv").write_bytes(answers.encode("cp1252"))
    result = run_cli("text-check", transaction_id, "--answers", "answers.csv", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["data"][0]["text"] == "Très bon café"


def test_cli_shows_the_verdicts_given_before_a_batch_failed_and_names_the_answers_left(
    sandbox, transaction_id, run_cli, project
):
    from surveyctl.sandbox.server import SandboxOptions, start

    # One call in two seconds on the same data: the second batch is answered 429 with a
    # Retry-After longer than --timeout allows to wait, so it fails after the first was checked.
    limited = start(
        SandboxOptions(
            db_path=sandbox.server.options.db_path,
            rate_limit=0.5,
            keys=dict(sandbox.accounts.keys),  # the buyers this test acts for (own_accounts)
        )
    )
    try:
        (project / "surveyctl.yaml").write_text(
            "environments:\n"
            f"  local: {{host: '{limited.url}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
            "default_environment: local\n"
        )
        answers = [{"question_id": f"q{n:02d}", "text": f"Answer {n} is fine"} for n in range(25)]
        (project / "answers.json").write_text(json.dumps(answers, indent=0))
        result = run_cli("--timeout", "1.5", "text-check", transaction_id,
                         "--answers", "answers.json", "--format", "json")  # fmt: skip
    finally:
        limited.stop()
    shown = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [d["question_id"] for d in shown["data"]] == [f"q{n:02d}" for n in range(20)]
    assert shown["not_checked"] == [f"q{n:02d}" for n in range(20, 25)]
    assert "the check stopped after 20 of 25 answer(s)" in result.stderr
    assert "the 5 answer(s) left (from line 82 on) were not checked" in result.stderr


def test_cli_refuses_a_utf8_csv_with_a_stray_byte_instead_of_garbling_its_letters(
    transaction_id, run_cli, project
):
    answers = "question_id,text\nq1,Très bon café\nq2,ok \xff\n".encode("utf-8")
    (project / "answers.csv").write_bytes(answers.replace(b"\xc3\xbf", b"\xff"))
    result = run_cli("text-check", transaction_id, "--answers", "answers.csv")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: answers.csv:3: the file is not UTF-8 text (byte ")
    assert "Ã" not in result.stdout


class _ForgettingProxy(Proxy):
    """Forwards everything; from the check's answer it leaves out the verdict on `forgotten`,
    as a service that skipped one answer would."""

    forgotten = "q2"

    def reshape(self, request, answer, headers) -> bytes:
        if request.method != "POST" or not request.path.endswith("/ps_api_fail"):
            return answer.content
        body = answer.json()
        body["data"] = [item for item in body["data"] if item["question_id"] != self.forgotten]
        return json.dumps(body).encode()


def test_cli_shows_an_answer_the_service_left_out_as_check_failed_not_clean(
    sandbox, transaction_id, run_cli, project
):
    answers = [{"question_id": q, "text": f"{CLEAN} ({q})"} for q in ("q1", "q2", "q3")]
    (project / "answers.json").write_text(json.dumps(answers))
    proxy = _ForgettingProxy(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("text-check", transaction_id, "--answers", "answers.json",
                         "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    verdicts = {d["question_id"]: d["coretext_api_fail"] for d in json.loads(result.stdout)["data"]}
    assert verdicts == {"q1": 0, "q2": 1, "q3": 0}


class _TextFlagsProxy(Proxy):
    """Forwards everything; writes the check's flags as text ("0", "1"), as the service
    writes other numbers (public facts: `"Respondent Buyer CPI": "1.30"`)."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method != "POST" or not request.path.endswith("/ps_api_fail"):
            return answer.content
        body = answer.json()
        body["data"] = [
            {key: str(value) if isinstance(value, int) else value for key, value in item.items()}
            for item in body["data"]
        ]
        return json.dumps(body).encode()


def test_cli_reads_flags_written_as_text_zero_as_not_raised(
    sandbox, transaction_id, run_cli, project
):
    (project / "answers.csv").write_text(f'question_id,text\nq1,"{CLEAN}"\nq2,asdf asdf asdf\n')
    proxy = _TextFlagsProxy(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("text-check", transaction_id, "--answers", "answers.csv")
    assert result.exit_code == 0, result.output
    q1 = next(line for line in result.stdout.splitlines() if line.startswith("q1"))
    assert "yes" not in q1
    q2 = next(line for line in result.stdout.splitlines() if line.startswith("q2"))
    assert "yes" in q2
    assert "2 answer(s) checked, 1 flagged" in result.stderr
