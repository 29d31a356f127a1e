"""Fixtures of the command-line tests: the session's sandbox served --strict, surveys of
buyer 1 in it, and a terminal to ask on (a person who answers through `input=`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

LIVE, IN_BUYER_SURVEY = 22, 16

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
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `api` and `project`): the session's strict one."""
    return strict_sandbox


@pytest.fixture
def on_a_terminal(monkeypatch):
    """Standard input is a terminal: a write asks, and `input=` is what the person types."""
    monkeypatch.setattr("surveyctl.cli.confirm.terminal", lambda: True)


@pytest.fixture
def new_survey(api) -> Callable[..., int]:
    """`new_survey(live=False, **overrides)`: a survey of buyer 1 from SURVEY; its id."""

    def make(live: bool = False, **overrides) -> int:
        survey_id = api.create_survey({**SURVEY, **overrides})["ps_survey_id"]
        if live:
            api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def held(api) -> Callable[[int], list[str]]:
    """`held(survey_id)`: ids of respondents the sandbox left in the buyer's survey (16)."""

    def make(survey_id: int) -> list[str]:
        api.simulate_traffic(survey_id, {"respondents": 5, "seed": 2, "hold": True})
        page, _ = api.get_transactions_page(survey_id, status=[IN_BUYER_SURVEY], limit=1000)
        return [row["Transaction ID"] for row in page]

    return make
