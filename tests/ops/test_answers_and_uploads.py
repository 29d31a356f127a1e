"""Reading answer files for the text check and id files for adjustments: content and errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from surveyctl.ops.adjust import (
    AdjustmentInputError,
    ReadBack,
    check_survey_path,
    load_upload,
    read_back,
)
from surveyctl.ops.textcheck import Answer, AnswersError, batches, load_answers


def _answers_refusal(path: Path) -> str:
    """What load_answers says when it refuses the file at `path`."""
    with pytest.raises(AnswersError) as refused:
        load_answers(path)
    return str(refused.value)


def _upload_refusal(path: Path) -> str:
    """What load_upload says when it refuses the file at `path`."""
    with pytest.raises(AdjustmentInputError) as refused:
        load_upload(path)
    return str(refused.value)


def test_answers_are_read_from_a_json_list(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"question_id": "q1", "text": "Hello"},\n {"question_id": 2, "text": "x"}]')
    assert [(a.question_id, a.text) for a in load_answers(path)] == [("q1", "Hello"), ("2", "x")]


def test_answers_are_read_from_a_csv_with_question_id_and_text(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text('question_id,text\nq1,"I like it, a lot"\nq2,No\n')
    answers = load_answers(path)
    assert [(a.question_id, a.text, a.line) for a in answers] == [
        ("q1", "I like it, a lot", 2),
        ("q2", "No", 3),
    ]


def test_answers_are_read_from_the_request_body_of_the_api_with_their_lines(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(
        '{"transaction_id": "T1", "questions": [\n'
        '  {"question_id": "q1", "text": "Hello"},\n'
        '  {"question_id": "q2", "text": "Bye"}\n'
        "]}"
    )
    answers = load_answers(path)
    assert [(a.question_id, a.text, a.line) for a in answers] == [
        ("q1", "Hello", 2),
        ("q2", "Bye", 3),
    ]


def test_a_json_answer_file_that_is_neither_a_list_nor_a_request_body_is_refused_at_line_1(
    tmp_path,
):
    path = tmp_path / "a.json"
    path.write_text('{"answers": []}')
    assert _answers_refusal(path) == (
        f"{path}:1: the JSON must be a list (or an object with a 'questions' list)"
    )


@pytest.mark.parametrize(("name", "text"), [("a.json", "[]"), ("a.csv", ""), ("b.csv", "\n")])
def test_an_answer_file_without_answers_is_refused(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert _answers_refusal(path) == f"{path}: the file holds no answers"


def test_a_json_answer_that_is_no_object_names_its_line(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[\n  {"question_id": "q1", "text": "ok"},\n  "just text"\n]')
    with pytest.raises(AnswersError, match=r"a\.json:3: answer 2 is not a \{question_id, text\}"):
        load_answers(path)


def test_a_json_answer_without_text_names_file_and_line(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[\n  {"question_id": "q1", "text": "ok"},\n  {"question_id": "q2"}\n]')
    assert _answers_refusal(path) == f"{path}:3: text of question 'q2' is missing or not a string"


def test_an_answer_holding_half_of_a_character_is_refused_before_anything_is_sent(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[\n  {"question_id": "q1", "text": "ok \\ud83d\\ude00"},\n'
                    '  {"question_id": "q2", "text": "cut \\ud83d"}\n]')  # fmt: skip
    assert _answers_refusal(path) == (
        f"{path}:3: a string holds half of a character (a lone \\uD800-\\uDFFF escape): write "
        "the whole character or leave it out"
    )


def test_an_id_file_holding_half_of_a_character_is_refused(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('["ok", "cut \\udc00"]')
    with pytest.raises(AdjustmentInputError, match=r"ids\.json:1: a string holds half of a"):
        load_upload(path)


def test_a_csv_without_the_text_column_is_refused_at_line_1(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("question_id,answer\nq1,x\n")
    with pytest.raises(AnswersError, match=r"a\.csv:1: .*missing: text"):
        load_answers(path)


def test_answers_in_a_tab_separated_file_say_that_only_a_csv_name_is_read_as_csv(tmp_path):
    path = tmp_path / "answers.tsv"
    path.write_text("question_id\ttext\nq1\tfine\n", encoding="utf-8")
    refusal = _answers_refusal(path)
    assert refusal.startswith(f"{path}:1: not valid JSON")
    assert "only a name ending in .csv is read as CSV" in refusal


def test_a_json_file_that_is_not_json_is_not_told_about_csv(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text("[{", encoding="utf-8")
    refusal = _answers_refusal(path)
    assert "not valid JSON" in refusal and "CSV" not in refusal


def test_an_answer_file_nested_too_deeply_is_refused_at_line_1(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _answers_refusal(path) == f"{path}:1: the JSON is nested too deeply to read"


def test_an_answer_file_with_a_number_of_more_than_4300_digits_is_refused_at_line_1(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"question_id": 1' + "0" * 5000 + ', "text": "x"}]')
    assert _answers_refusal(path) == f"{path}:1: the JSON holds a number of more than 4,300 digits"


def test_a_question_id_given_twice_is_refused(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("question_id,text\nq1,a\nq1,b\n")
    with pytest.raises(AnswersError, match=r":3: question_id 'q1' appears twice"):
        load_answers(path)


def test_25_answers_make_a_batch_of_20_and_one_of_5():
    answers = [Answer(f"q{n}", "t") for n in range(25)]
    assert [len(b) for b in batches(answers)] == [20, 5]


def test_upload_reads_an_export_with_transaction_and_survey_columns(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("Transaction ID,Survey ID,Respondent Status Code\nt1,7,21\nt2,7,21\nt3,8,18\n")
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2", "t3"]
    assert upload.per_survey == {7: 2, 8: 1}


def test_upload_reads_one_id_per_line_without_header(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("t1\nt2\n\nt1\n")
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2"]
    assert upload.duplicates == 1
    assert upload.per_survey == {None: 2}


@pytest.mark.parametrize(
    "text", ['[{"transaction_id": "t1"}, {"transaction_id": "t2"}]\n', '[\n  "t1",\n  "t2"\n]\n']
)
def test_upload_of_json_in_a_file_not_named_json_is_refused_not_sent_as_an_id(tmp_path, text):
    path = tmp_path / "accepted.txt"
    path.write_text(text)
    assert _upload_refusal(path) == (
        f"{path}:1: the file holds JSON, and a name not ending in .json is read as CSV: name it "
        "accepted.json (nothing was submitted)"
    )


def test_upload_reads_the_api_shape_from_json(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('[{"transaction_id": "t1"}, "t2", {"transaction_id": "t3", "survey_id": 4}]')
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2", "t3"]
    assert upload.per_survey == {None: 2, 4: 1}


def test_upload_of_a_json_object_instead_of_a_list_is_refused_at_line_1(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('{"transaction_id": "t1"}')
    assert _upload_refusal(path) == f"{path}:1: the JSON must be a list"


def test_upload_of_a_file_that_cannot_be_read_says_why(tmp_path):
    folder = tmp_path / "ids.csv"
    folder.mkdir()
    assert _upload_refusal(folder) == f"{folder}: cannot read the file: Is a directory"


def test_upload_with_an_empty_id_names_the_line(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("transaction_id,survey_id\nt1,1\n,1\n")
    with pytest.raises(AdjustmentInputError, match=r"ids\.csv:3: transaction_id is missing"):
        load_upload(path)


def test_upload_with_a_non_integer_survey_id_names_the_line(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("transaction_id,survey_id\nt1,abc\n")
    with pytest.raises(AdjustmentInputError, match=r"ids\.csv:2: survey_id 'abc' is not a survey"):
        load_upload(path)


@pytest.mark.parametrize("heading", ["transaction_id", "Transaction ID", "transaction id", "id"])
def test_upload_of_one_column_takes_its_heading_for_a_heading_not_an_id(tmp_path, heading):
    path = tmp_path / "ids.csv"
    path.write_text(f"{heading}\nt1\nt2\n")
    assert load_upload(path).transaction_ids == ["t1", "t2"]


@pytest.mark.parametrize(
    ("header", "refused"),
    [
        (
            "transaction_id,Transaction ID,survey_id",
            "the CSV header has 2 transaction_id columns, 'transaction_id' and 'Transaction ID'",
        ),
        ("transaction_id,survey_id,SurveyId", "2 survey_id columns, 'survey_id' and 'SurveyId'"),
    ],
    ids=["transaction-id", "survey-id"],
)
def test_upload_with_two_columns_for_one_field_is_refused_at_the_header(tmp_path, header, refused):
    path = tmp_path / "ids.csv"
    path.write_text(f"{header}\nt1,t2,7\n")
    with pytest.raises(AdjustmentInputError, match=r"ids\.csv:1: .*" + re.escape(refused)):
        load_upload(path)


def test_upload_of_an_item_with_two_keys_for_one_field_is_refused_at_its_line(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text(
        '[\n{"transaction_id": "t1"},\n{"transaction_id": "t2", "transactionId": "t3"}\n]'
    )
    with pytest.raises(
        AdjustmentInputError,
        match=r"ids\.json:3: the item has 2 transaction_id keys, 'transaction_id' and "
        r"'transactionId'; keep one \(nothing was submitted\)",
    ):
        load_upload(path)


def test_upload_finds_the_id_and_survey_columns_however_their_headings_are_written(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("TRANSACTION-ID,surveyId,note\nt1,7,x\nt2,8,y\n")
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2"]
    assert upload.per_survey == {7: 1, 8: 1}


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_refused_after_a_bounded_read_not_read_until_memory_runs_out():
    # /dev/zero never ends: read whole, it took every byte of memory the system had.
    with pytest.raises(AdjustmentInputError, match=r"/dev/zero: larger than 64 MiB"):
        load_upload(Path("/dev/zero"))
    with pytest.raises(AnswersError, match=r"/dev/zero: larger than 64 MiB"):
        load_answers(Path("/dev/zero"))


def test_upload_of_several_columns_without_an_id_column_is_refused_at_the_header(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("id_of_session,survey\nt1,4\n")
    assert _upload_refusal(path) == (
        f"{path}:1: the CSV header needs a transaction_id (or 'Transaction ID') column"
    )


def test_upload_with_two_survey_columns_is_refused_naming_the_csv_header(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("transaction_id,survey_id,Survey ID\nt1,4,4\n")
    assert _upload_refusal(path).startswith(f"{path}:1: the CSV header has 2 survey_id columns")


@pytest.mark.parametrize("line", ["  ", "\t"], ids=["spaces", "tab"])
def test_upload_of_an_id_of_blanks_is_refused_at_its_line(tmp_path, line):
    path = tmp_path / "ids.json"
    path.write_text(f'["t1",\n"{line}"]'.replace("\t", "\\t"))
    assert _upload_refusal(path) == f"{path}:2: transaction_id is missing or empty"


def test_upload_of_a_json_item_that_is_no_id_nor_object_is_refused_at_its_line(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('["t1",\n["t2"]]')
    assert _upload_refusal(path) == (
        f"{path}:2: the item is neither a transaction id nor a {{transaction_id}} object"
    )


def test_upload_of_a_json_object_with_a_bad_survey_names_its_line(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('["t1",\n{"transaction_id": "t2", "survey_id": "x"}]')
    assert (
        _upload_refusal(path) == f"{path}:2: survey_id 'x' is not a survey id (a positive integer)"
    )


def test_upload_of_a_json_object_with_two_survey_keys_names_its_line(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('["t1",\n{"transaction_id": "t2", "survey_id": 4, "surveyId": 4}]')
    assert _upload_refusal(path).startswith(f"{path}:2: the item has 2 survey_id keys")


def test_a_repeated_id_keeps_every_id_after_it(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("t1\nt2\nt1\nt3\nt4\n")
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2", "t3", "t4"]
    assert upload.duplicates == 1


def test_an_id_listed_without_a_survey_and_again_with_one_is_one_transaction(tmp_path):
    path = tmp_path / "ids.json"
    path.write_text('["t1", {"transaction_id": "t1", "survey_id": 4}]')
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1"]
    assert upload.duplicates == 1


def test_a_row_shorter_than_the_header_reads_its_survey_as_not_given(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("transaction_id,survey_id\nt1,4\nt2\n")
    upload = load_upload(path)
    assert upload.transaction_ids == ["t1", "t2"]
    assert upload.per_survey == {4: 1, None: 1}


def test_survey_option_naming_a_survey_the_file_does_not_names_the_files_surveys(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("transaction_id,survey_id\nt1,4\nt2,5\nt3,6\n")
    with pytest.raises(AdjustmentInputError) as refused:
        check_survey_path(load_upload(path), 4, path)
    assert str(refused.value) == (
        f"--survey 4 differs from the surveys 5, 6 that {path} names for 2 transaction(s); "
        "nothing submitted: leave out --survey, or submit only the transactions of survey 4"
    )


def test_upload_of_one_column_skips_a_line_of_blanks_as_a_blank_line(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("t1\n   \nt2\n")
    assert load_upload(path).transaction_ids == ["t1", "t2"]


@pytest.mark.parametrize(
    ("record", "reconciled"),
    [
        ({"Reconciliation Status": 0}, False),
        ({"Reconciliation Status": 1}, True),
        ({"Reconciliation Status": "2"}, True),  # numbers the service sends as text
        ({"Reconciliation Status": "n/a"}, False),  # text that is no number: not shown
        ({"Reconciliation Status": None, "Reconciliation Date": "2026-11-29 10:00:00"}, True),
        ({}, False),
    ],
    ids=["0", "1", "text 2", "no number", "a date alone", "neither"],
)
def test_a_transaction_read_back_shows_a_reconciliation_by_its_status_or_date(record, reconciled):
    assert read_back(lambda survey, transaction: record, [("t1", 4)], None).reconciled == int(
        reconciled
    )


def test_a_read_back_kept_in_the_journal_is_read_as_it_was_written():
    written = ReadBack(checked=3, reconciled=2, unknown=1, error="GET answered 503")
    assert ReadBack.from_json(written.to_json()) == written
    assert ReadBack.from_json({}) is None and ReadBack.from_json(None) is None
    assert ReadBack.from_json({"checked": 2}) == ReadBack(2, 0, 0, "")
    assert ReadBack.from_json({"unknown": 2}) == ReadBack(0, 0, 2, "")


def test_an_answer_of_several_lines_in_a_quoted_cell_is_read_whole(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b'question_id,text\r\nq1,"First line.\r\nSecond line."\r\nq2,"x\ny"\nq3,z\n')
    answers = load_answers(path)
    assert [(a.question_id, a.text, a.line) for a in answers] == [
        ("q1", "First line.\r\nSecond line.", 2),
        ("q2", "x\ny", 4),
        ("q3", "z", 6),
    ]


def test_a_line_separator_inside_a_cell_does_not_split_its_row(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("question_id,text\nq1,I liked it\u2028and would buy again\nq2,fine\n")
    answers = load_answers(path)
    assert [(a.question_id, a.text, a.line) for a in answers] == [
        ("q1", "I liked it\u2028and would buy again", 2),
        ("q2", "fine", 3),
    ]
