"""Checking an output path before anything is sent: what is there is left as it was, and a
folder where no file can be made is refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.safety import OutputPathError, check_output_path


def test_checking_an_existing_output_file_leaves_it_as_it_was(tmp_path):
    answer = tmp_path / "answer.json"
    answer.write_text('{"adjustment_id": 7}', encoding="utf-8")
    check_output_path(answer, "--output")
    assert answer.read_text(encoding="utf-8") == '{"adjustment_id": 7}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answer.json"]


def test_checking_a_new_output_file_creates_nothing(tmp_path):
    check_output_path(tmp_path / "answer.json", "--output")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_where_no_file_can_be_made_is_refused_with_the_reason():
    with pytest.raises(OutputPathError) as refused:
        check_output_path(Path("/proc/p.plan"), "--out")
    assert str(refused.value) == (
        "cannot write --out /proc/p.plan: a file cannot be written in /proc "
        "(no such file or directory)"
    )
