"""A scalar its explicit YAML tag cannot read (`!!int abc`) is one sentence with file:line,
wherever it is: a manifest, `fmt --check` (another YAML library) or surveyctl.yaml."""

from __future__ import annotations

import pytest

BAD_TAGS = ["!!int abc", '!!float ""', "!!timestamp soon", "!!bool maybe"]


def _manifest(value: str) -> str:
    return f"kind: Survey\nname: {value}\nspec:\n  survey_title: Tags\n"


@pytest.mark.parametrize("value", BAD_TAGS)
def test_a_badly_tagged_value_in_a_manifest_is_one_error_with_its_line(run_cli, project, value):
    (project / "m.yaml").write_text(_manifest(value), encoding="utf-8")
    result = run_cli("validate", "m.yaml", "--offline")
    assert result.exit_code == 1
    assert "m.yaml:2:7: error: The value" in result.stdout
    assert f"cannot be read as {value.split()[0]}" in result.stdout
    assert "a bug in surveyctl" not in result.output


@pytest.mark.parametrize("value", BAD_TAGS)
def test_fmt_check_names_the_line_of_a_badly_tagged_value(run_cli, project, value):
    (project / "m.yaml").write_text(_manifest(value), encoding="utf-8")
    result = run_cli("fmt", "--check", "m.yaml")
    assert result.exit_code == 1
    assert "m.yaml:2:7: The value" in result.stderr
    assert f"cannot be read as {value.split()[0]}" in result.stderr
    assert "a bug in surveyctl" not in result.output


@pytest.mark.parametrize("value", BAD_TAGS)
def test_a_badly_tagged_value_in_the_configuration_names_its_line(run_cli, project, value):
    text = (project / "surveyctl.yaml").read_text(encoding="utf-8")
    (project / "surveyctl.yaml").write_text(text + f"x-note: {value}\n", encoding="utf-8")
    result = run_cli("validate", "--offline", "m.yaml")
    assert result.exit_code == 1
    assert "surveyctl.yaml:4:" in result.stderr
    assert f"cannot be read as {value.split()[0]}" in result.stderr
    assert "a bug in surveyctl" not in result.output
