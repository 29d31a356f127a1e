"""Fixtures of the operations tests: live surveys in a sandbox served --strict and simulated
traffic. Every operations command (transactions, attributes, text-check, adjust, link) is
driven against the strict sandbox, so one that sends a field or a query parameter the API
does not define fails here."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from ..strict_surveys import sandbox  # noqa: F401  (the fixture of this folder)

LIVE = 22

BASE_SURVEY = {
    "survey_title": "Operations test",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1000,
    "expected_ir": 60,
    "expected_loi": 10,
    "offer_price": 2.5,
    "field_time": 14,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
}
GENDER_QUOTAS = [
    {
        "buyer_quota_id": "male",
        "required_count": 500,
        "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
    },
    {
        "buyer_quota_id": "female",
        "required_count": 500,
        "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}],
    },
]


@pytest.fixture
def live_survey(api) -> Callable[..., int]:
    """Creates a survey of buyer 1 from BASE_SURVEY plus overrides, sets it live, returns its id."""

    def make(**overrides) -> int:
        created = api.create_survey({**BASE_SURVEY, **overrides})
        survey_id = created["ps_survey_id"]
        api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def unique_ref() -> Callable[[], str]:
    return lambda: f"ops-{uuid.uuid4().hex[:12]}"
