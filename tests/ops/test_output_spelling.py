"""A bad output path is reported under the option's name as the user typed it."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("option", ["--out", "--output"])
def test_transactions_list_names_the_output_option_as_typed(run_cli, project, option):
    (project / "a-file").write_text("not a folder\n")
    result = run_cli("transactions", "list", "10001", option, "a-file/t.csv")
    assert result.exit_code == 1
    assert f"cannot write {option} a-file/t.csv" in result.stderr


@pytest.mark.parametrize("option", ["--out", "--output"])
def test_adjust_names_the_output_option_as_typed(run_cli, project, option):
    (project / "a-file").write_text("not a folder\n")
    (project / "ids.csv").write_text("transaction_id,survey_id\nT1,10001\n")
    result = run_cli("adjust", "ids.csv", "--yes", f"{option}=a-file/answer.json")
    assert result.exit_code == 1
    assert f"cannot write {option} a-file/answer.json" in result.stderr
