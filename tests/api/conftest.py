"""Fixtures of the client tests: surveys of buyer 1 in the session's sandbox served --strict,
so a client method that sends a field or a query parameter the API does not define fails."""

from __future__ import annotations

import pytest

SURVEY = {
    "survey_title": "Client operations",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 100,
    "expected_ir": 50,
    "expected_loi": 10,
    "field_time": 7,
    "live_url": "https://survey.example.com/s?tid=[%%ps_transaction_id%%]",
    "quotas": [
        {"buyer_quota_id": "male", "required_count": 50,
         "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}]},
        {"buyer_quota_id": "female", "required_count": 50,
         "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}]},
    ],
}  # fmt: skip
QLC = {"enable": True, "multiple_quotas": {"enable": True}}
LIVE, IN_BUYER_SURVEY = 22, 16


@pytest.fixture
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `api` and `project`): the session's strict one."""
    return strict_sandbox


@pytest.fixture
def new_survey(api):
    """`new_survey(live=False, **overrides)`: a survey of buyer 1; its id."""

    def make(live: bool = False, **overrides) -> int:
        survey_id = api.create_survey({**SURVEY, **overrides})["ps_survey_id"]
        if live:
            api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def held(api):
    """`held(survey_id, respondents)`: ids of respondents stopped in the buyer's survey."""

    def make(survey_id: int, respondents: int = 5) -> list[str]:
        api.simulate_traffic(survey_id, {"respondents": respondents, "seed": 2, "hold": True})
        page, _ = api.get_transactions_page(survey_id, status=[IN_BUYER_SURVEY], limit=1000)
        return [row["Transaction ID"] for row in page]

    return make
