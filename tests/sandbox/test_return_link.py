"""The respondent return link of the sandbox marketplace (spec 4.12; public facts: the hash).

`GET /sandbox/return?st=..&transaction_id=..&quota_id=..&ps_hash=..`, where ps_hash is the hex
SHA-1 of the URL as sent without ps_hash, followed by the buyer's secret.
"""

from __future__ import annotations

import hashlib

QLC = {"enable": True, "multiple_quotas": {"enable": True}}
SECRET = "sandbox-secret-1"  # the secret of the buyer of `raw` (tests/conftest.py)


def _signed(url: str, secret: str = SECRET) -> str:
    return f"{url}&ps_hash={hashlib.sha1((url + secret).encode()).hexdigest()}"


def _fielded(raw, survey_id: int) -> dict[str, int]:
    listed = raw.v2("GET", f"/surveys/{survey_id}/quotas/performance").json()
    return {q["buyer_quota_id"]: q["completes_fielded"] for q in listed}


def test_a_qlc_quota_id_with_a_percent_encoded_comma_counts_in_each_named_quota(
    raw, live_survey, held_sessions
):
    survey_id = live_survey(qlc=QLC)
    transaction_id = held_sessions(survey_id, 3)[0]
    url = f"{raw.url}/sandbox/return?st=21&transaction_id={transaction_id}"
    returned = raw.session.get(_signed(url + "&quota_id=male%2Cfemale"), timeout=10)
    assert returned.status_code == 200, returned.text
    assert returned.json()["quotas"] == ["male", "female"]
    assert _fielded(raw, survey_id) == {"male": 1, "female": 1}


def test_the_hash_covers_the_quota_id_as_sent_not_as_decoded(raw, live_survey, held_sessions):
    survey_id = live_survey(qlc=QLC)
    transaction_id = held_sessions(survey_id, 3)[0]
    url = f"{raw.url}/sandbox/return?st=21&transaction_id={transaction_id}"
    signed_decoded = _signed(url + "&quota_id=male,female")
    sent_encoded = signed_decoded.replace("quota_id=male,female", "quota_id=male%2Cfemale")
    returned = raw.session.get(sent_encoded, timeout=10)
    assert returned.json()["Respondent Status Code"] == 31  # tampered, never a complete
    assert _fielded(raw, survey_id) == {"male": 0, "female": 0}
