"""Fixtures of the folders whose tests run against the session's sandbox served --strict:
surveys of buyer 1 made from the folder's own `survey_body`, and respondents the sandbox holds
in the buyer's survey. A folder's conftest imports them and defines `survey_body`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

LIVE, IN_BUYER_SURVEY = 22, 16


@pytest.fixture
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `api` and `project`): the session's strict one."""
    return strict_sandbox


@pytest.fixture
def new_survey(api, survey_body) -> Callable[..., int]:
    """`new_survey(live=False, **overrides)`: a survey of buyer 1 from `survey_body`; its id."""

    def make(live: bool = False, **overrides) -> int:
        survey_id = api.create_survey({**survey_body, **overrides})["ps_survey_id"]
        if live:
            api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def held(api) -> Callable[..., list[str]]:
    """`held(survey_id, respondents=5)`: ids of respondents the sandbox left in the buyer's
    survey (16)."""

    def make(survey_id: int, respondents: int = 5) -> list[str]:
        api.simulate_traffic(survey_id, {"respondents": respondents, "seed": 2, "hold": True})
        page, _ = api.get_transactions_page(survey_id, status=[IN_BUYER_SURVEY], limit=1000)
        return [row["Transaction ID"] for row in page]

    return make
