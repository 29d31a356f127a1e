"""Fault injection: latency, and refusals (503, or 429 with Retry-After) decided before data."""

from __future__ import annotations

import time

import requests

HEADERS = {"access-token": "sandbox-buyer-1"}


def test_every_request_is_refused_at_fail_rate_one(start_sandbox, make_body):
    sandbox = start_sandbox(fail_rate=1.0, seed=1, retry_after=7)
    statuses = set()
    for _ in range(12):
        response = requests.post(
            sandbox.url + "/buyers/v2/surveys", json=make_body(), headers=HEADERS, timeout=10
        )
        statuses.add(response.status_code)
        if response.status_code == 429:
            assert response.headers["Retry-After"] == "7"
        assert response.json()["ps_api_response_code"] in (1019, 1027)
    assert statuses == {429, 503}
    with sandbox.store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM surveys").fetchone()[0] == 0


def test_refusals_are_the_same_for_the_same_seed(start_sandbox):
    def draws(sandbox) -> list[int]:
        return [
            requests.get(
                sandbox.url + "/buyers/v2/surveys", headers=HEADERS, timeout=10
            ).status_code
            for _ in range(20)
        ]

    first = draws(start_sandbox(fail_rate=0.5, seed=42))
    second = draws(start_sandbox(fail_rate=0.5, seed=42))
    assert first == second
    assert {200} < set(first)


def test_sandbox_only_routes_are_never_refused(start_sandbox):
    sandbox = start_sandbox(fail_rate=1.0, seed=3)
    response = requests.get(sandbox.url + "/sandbox/surveys/1/quotas", headers=HEADERS, timeout=10)
    assert response.status_code == 404
    assert response.json()["ps_api_response_code"] == 1006


def test_latency_delays_every_response(start_sandbox):
    sandbox = start_sandbox(latency_ms=150)
    started = time.perf_counter()
    requests.get(sandbox.url + "/buyers/v2/surveys", headers=HEADERS, timeout=10)
    assert time.perf_counter() - started >= 0.15
