"""Requests per second of the sandbox: GET /surveys/{id} from several threads on loopback.

Starts a sandbox (no latency, no faults, response checking off) on a temporary database,
creates one survey with 12 quotas, then sends a fixed number of GETs from a pool of threads,
each with its own keep-alive session, stopping early after a time limit. Prints requests per
second and latency percentiles.

    python benchmarks/sandbox_rps.py [--threads 8] [--requests 4000] [--max-seconds 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import requests

from surveyctl.sandbox.server import SandboxOptions, start

HEADERS = {"access-token": "sandbox-buyer-1"}
SURVEY = {
    "survey_title": "Benchmark",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1200,
    "expected_ir": 40,
    "expected_loi": 12,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "field_time": 14,
    "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
    "quotas": [
        {
            "buyer_quota_id": f"cell-{n}",
            "required_count": 100,
            "criteria": [{"qualification_code": 211, "condition_codes": [str(111 + n % 2)]}],
        }
        for n in range(12)
    ],
}


def _worker(url: str, count: int, deadline: float, latencies: list[float], errors: list[int]):
    session = requests.Session()
    session.headers.update(HEADERS)
    for _ in range(count):
        if time.perf_counter() > deadline:
            return
        started = time.perf_counter()
        response = session.get(url, timeout=30)
        latencies.append(time.perf_counter() - started)
        if response.status_code != 200:
            errors.append(response.status_code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000, help="total GETs to send")
    parser.add_argument("--max-seconds", type=float, default=30.0, help="stop after this long")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        sandbox = start(SandboxOptions(db_path=Path(folder) / "bench.db"))
        try:
            created = requests.post(
                sandbox.url + "/buyers/v2/surveys", json=SURVEY, headers=HEADERS, timeout=30
            )
            created.raise_for_status()
            url = f"{sandbox.url}/buyers/v2/surveys/{created.json()['ps_survey_id']}"
            latencies: list[float] = []
            errors: list[int] = []
            per_thread = args.requests // args.threads
            started = time.perf_counter()
            deadline = started + args.max_seconds
            threads = [
                threading.Thread(
                    target=_worker, args=(url, per_thread, deadline, latencies, errors)
                )
                for _ in range(args.threads)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
        finally:
            sandbox.stop()

    done = len(latencies)
    cuts = statistics.quantiles(latencies, n=100)
    print(f"GET /surveys/{{id}} (12 quotas), {args.threads} threads, loopback")
    print(f"requests: {done} in {elapsed:.2f} s, errors: {len(errors)}")
    print(f"requests per second: {done / elapsed:.0f}")
    print(f"latency p50 {cuts[49] * 1000:.1f} ms, p95 {cuts[94] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
