"""Fixtures of the client tests: surveys of buyer 1 in the session's sandbox served --strict,
so a client method that sends a field or a query parameter the API does not define fails."""

from __future__ import annotations

import pytest

from ..strict_surveys import held, new_survey, sandbox  # noqa: F401  (fixtures of this folder)

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


@pytest.fixture
def survey_body() -> dict:
    """What `new_survey` makes a survey of."""
    return SURVEY
