"""`sandbox serve --rate-limit R`: a token bucket per access-token, 429 with Retry-After past it."""

from __future__ import annotations

import time

import pytest
import requests

from surveyctl.sandbox.errors import ApiProblem
from surveyctl.sandbox.ratelimit import RateLimit

BUYER_1 = {"access-token": "sandbox-buyer-1"}
BUYER_2 = {"access-token": "sandbox-buyer-2"}


def _statuses(url: str, headers: dict, count: int) -> list[int]:
    with requests.Session() as session:
        return [
            session.get(url + "/buyers/v2/surveys", headers=headers, timeout=10).status_code
            for _ in range(count)
        ]


def test_requests_past_the_burst_are_answered_429_with_retry_after(start_sandbox):
    sandbox = start_sandbox(rate_limit=2)
    statuses = _statuses(sandbox.url, BUYER_1, 6)
    assert statuses[:2] == [200] * 2
    assert 429 in statuses[2:]
    refused = requests.get(sandbox.url + "/buyers/v2/surveys", headers=BUYER_1, timeout=10)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert refused.json()["ps_api_response_code"] == 1027


def test_each_access_token_has_its_own_bucket(start_sandbox):
    sandbox = start_sandbox(rate_limit=2)
    assert 429 in _statuses(sandbox.url, BUYER_1, 6)
    assert _statuses(sandbox.url, BUYER_2, 2) == [200] * 2


def test_the_bucket_refills_at_the_rate(start_sandbox):
    sandbox = start_sandbox(rate_limit=2)
    assert 429 in _statuses(sandbox.url, BUYER_1, 6)
    time.sleep(1.1)  # two tokens, a full bucket
    assert _statuses(sandbox.url, BUYER_1, 2) == [200, 200]


def test_retry_after_is_the_whole_seconds_until_a_token():
    now = [0.0]
    limit = RateLimit(0.25, burst=1, clock=lambda: now[0])
    limit.take("key")
    with pytest.raises(ApiProblem) as refused:
        limit.take("key")
    assert refused.value.status == 429
    assert refused.value.headers == {"Retry-After": "4"}


def test_without_a_rate_limit_nothing_is_refused(start_sandbox):
    sandbox = start_sandbox()
    assert set(_statuses(sandbox.url, BUYER_1, 40)) == {200}


def test_sandbox_serve_takes_the_rate_limit(tmp_path):
    from surveyctl.sandbox.process import served

    with served(tmp_path / "s.db", extra_args=("--rate-limit", "2")) as sandbox:
        assert 429 in _statuses(sandbox.url, BUYER_1, 6)
