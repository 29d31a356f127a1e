"""Fixtures of the command-line tests: the session's sandbox served --strict, surveys of
buyer 1 in it, and a terminal to ask on (a person who answers through `input=`)."""

from __future__ import annotations

import pytest

from ..strict_surveys import held, new_survey, sandbox  # noqa: F401  (fixtures of this folder)

SURVEY = {
    "survey_title": "Questions test",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 200,
    "expected_ir": 50,
    "expected_loi": 10,
    "offer_price": 2.5,
    "field_time": 7,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
}


@pytest.fixture
def on_a_terminal(monkeypatch):
    """Standard input is a terminal: a write asks, and `input=` is what the person types."""
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)


@pytest.fixture
def survey_body() -> dict:
    """What `new_survey` makes a survey of."""
    return SURVEY
