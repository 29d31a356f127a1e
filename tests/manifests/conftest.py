"""Helpers for manifest tests: write YAML into a temp folder and validate it offline."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from surveyctl.manifests import load_manifests

SURVEY = """\
kind: Survey
name: {name}
spec:
  survey_title: Test survey
  survey_category_code: 231
  survey_localization: {locale}
  completes_required: 100
  expected_ir: 50
  expected_loi: 10
  offer_price: 2.0
  field_time: 7
  live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
"""


def make_survey(extra: str = "", name: str = "test-survey", locale: str = "en_US") -> str:
    """A valid Survey manifest, with `extra` (indented as spec fields) appended to its spec."""
    text = SURVEY.format(name=name, locale=locale)
    return text + textwrap.indent(textwrap.dedent(extra), "  ") if extra else text


def make_program(waves: str = "[w1]", markets: str = "{en_US: {}}") -> str:
    """A valid SurveyProgram manifest named tracker, its template titled "Tracker {wave}", with
    `waves` and `markets` written as YAML after their keys (lines 13 and 12)."""
    return f"""\
kind: SurveyProgram
name: tracker
spec:
  template:
    survey_title: "Tracker {{wave}}"
    survey_category_code: 231
    completes_required: 100
    expected_ir: 40
    expected_loi: 10
    field_time: 7
    live_url: "https://survey.example.com/s?tid=[%%transaction_id%%]"
  markets: {markets}
  waves: {waves}
"""


def run_surveyctl(project: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """`surveyctl ARGS` in a process of its own in `project`, stopped after `timeout` seconds
    (what the tests guard against is a command that hangs or walks without end)."""
    command = [sys.executable, "-m", "surveyctl", *args]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=timeout)


def find_line(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the `occurrence`-th line of `text` containing `needle`."""
    found = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return found[occurrence - 1]


@pytest.fixture
def survey_yaml():
    """survey_yaml(extra, name=, locale=) -> a valid Survey manifest with `extra` spec fields."""
    return make_survey


@pytest.fixture
def line_of():
    """line_of(text, needle, occurrence=1) -> the 1-based line holding `needle`."""
    return find_line


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> the path of a file in a fresh folder."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


@pytest.fixture
def check(write):
    """check(text) -> (state, errors) of one file validated offline; errors are Diagnostics."""

    def _check(text: str, name: str = "m.yaml"):
        path = write(name, text)
        state, diagnostics = load_manifests([path])
        return state, [d for d in diagnostics.sorted() if d.severity == "error"], diagnostics

    return _check
