"""What the identity check costs: a plan with C creates in an account of N surveys, at latency L.

Before a plan creates anything it reads the account's survey list (every status, every page;
surveyctl.api.account_surveys). This prints, per account size, the requests and the wall
time of that check alone (`find_twins`) and of the whole plan of the C creates, and for a no-op
plan of the same manifests once applied, the requests it makes with the check in place (it must
make none for the check). The account is seeded through the sandbox app in-process (not
timed); the timed runs talk HTTP to `surveyctl sandbox serve` in its own process.

    python benchmarks/identity_cost.py --accounts 1000 10000 --creates 10 --latency-ms 50
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from plan_scale import KEY_VARIABLE, serve_sandbox, write
from survey_bodies import body

from surveyctl.api import ApiClient
from surveyctl.api.account_surveys import account_surveys
from surveyctl.config import Config, Environment
from surveyctl.reconcile import identity
from surveyctl.reconcile.apply_run import apply_run
from surveyctl.reconcile.plan_run import desired_state, plan_run
from surveyctl.reconcile.run import ApplyHooks, RunOptions, Workspace
from surveyctl.reconcile.twins import find_twins
from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.store import Store
from surveyctl.state import FileStateStore

KEY = "sandbox-buyer-1"


def manifest(index: int) -> dict:
    return {"kind": "Survey", "name": f"new-{index:02d}", "spec": body(f"New survey {index}")}


def seed(db: Path, count: int) -> None:
    """`count` surveys of other titles in the account, through the app (no socket)."""
    store = Store(db)
    client = create_app(store).test_client()
    headers = {"access-token": KEY}

    def one(index: int) -> None:
        answer = client.post(
            "/buyers/v2/surveys", json=body(f"Existing survey {index}"), headers=headers
        )
        if answer.status_code not in (200, 201):
            raise SystemExit(f"seeding failed: {answer.status_code} {answer.get_data()[:200]}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(count)))
    store.close()


def measure(size: int, creates: int, latency_ms: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        seed(root / "sandbox.db", size)
        print(f"account of {size} surveys (seeded in {time.perf_counter() - started:.1f}s)")
        server, url = serve_sandbox(root / "sandbox.db", latency_ms)
        try:
            folder = root / "manifests"
            folder.mkdir()
            write(folder, [manifest(i) for i in range(creates)])
            os.environ[KEY_VARIABLE] = KEY
            environment = Environment(name="bench", host=url, api_key_env=KEY_VARIABLE)
            store = FileStateStore(root / "state.json", environment.name)
            options = RunOptions(targets=(folder,), auto_approve=True)

            def workspace(client: ApiClient) -> Workspace:
                return Workspace(Config(root=root), environment, store, lambda: client)

            checks, plans, counts = [], [], {}
            for _ in range(repeat):
                client = ApiClient(url, KEY)
                desired = desired_state(workspace(client), options)
                started = time.perf_counter()
                found = find_twins(client, desired, store.load(), identity.Rule.of(environment))
                checks.append(time.perf_counter() - started)
                client.request_counts.clear()
                started = time.perf_counter()
                plan = plan_run(workspace(client), options)
                plans.append(time.perf_counter() - started)
                counts = dict(client.request_counts)
                client.close()
            assert plan.counts()["add"] == creates and not found.twins
            client = ApiClient(url, KEY)
            listed, pages = account_surveys(client)
            assert len(listed) == size, f"the list gave {len(listed)} of {size} surveys"
            started = time.perf_counter()
            account_surveys(client, parallelism=1)
            print(
                f"  the same {pages} pages with the announced ones read one at a time: "
                f"{time.perf_counter() - started:.2f}s"
            )
            client.close()
            pages = counts.get("GET surveys", 0)
            print(
                f"  identity check alone: {statistics.median(checks):.2f}s "
                f"(median of {repeat}), {found.requests} list pages read"
            )
            print(
                f"  plan of {creates} creates: {statistics.median(plans):.2f}s, requests "
                f"{dict(sorted(counts.items()))} ({pages} survey-list pages)"
            )
            client = ApiClient(url, KEY)
            apply_run(workspace(client), options, ApplyHooks())
            client.request_counts.clear()
            started = time.perf_counter()
            noop = plan_run(workspace(client), options)
            elapsed = time.perf_counter() - started
            print(
                f"  no-op plan of the {creates} once applied: {elapsed:.2f}s, requests "
                f"{dict(sorted(client.request_counts.items()))} "
                f"(survey-list pages: {client.request_counts.get('GET surveys', 0)}), "
                f"settled: {noop.settled}"
            )
            client.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--creates", type=int, default=10)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"latency {args.latency_ms} ms, load {os.getloadavg()[0]:.2f} (1-minute average)")
    for size in args.accounts:
        measure(size, args.creates, args.latency_ms, args.repeat)


if __name__ == "__main__":
    main()
