"""The survey the benchmarks create: one valid body, so that what they measure is the same survey.

`body` is a valid Survey spec of no quotas (category 231, en_US, 100 completes at 40 % IR and
12 minutes); `gender_quotas` the two quotas of 50 that split it by gender (qualification 211).
"""

from __future__ import annotations


def body(title: str) -> dict:
    """A valid Survey spec titled `title`, without qualifications or quotas."""
    return {
        "survey_title": title,
        "survey_category_code": 231,
        "survey_localization": "en_US",
        "completes_required": 100,
        "expected_ir": 40,
        "expected_loi": 12,
        "offer_price": 2.5,
        "field_time": 14,
        "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    }


def gender_quotas() -> list[dict]:
    """Two quotas of 50 completes, male (condition 111) and female (112) of qualification 211."""
    return [
        {
            "buyer_quota_id": gender,
            "required_count": 50,
            "criteria": [{"qualification_code": 211, "condition_codes": [code]}],
        }
        for gender, code in (("male", "111"), ("female", "112"))
    ]
