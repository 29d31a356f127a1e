"""How plan and apply scale: N surveys of Q quotas against a sandbox with latency L.

Prints the wall time of a no-op plan (parallel, the median of --repeat runs, and unless
--no-baseline sequential), the ideal N x L / parallelism, the client's CPU per survey, the
HTTP requests by kind, and an apply that changes 10 % of the surveys (half a title edit -> one
full PUT, half a quota count -> one quota PUT). The timed plans are `plan_run` of manifests
loaded and validated beforehand: state, live reads and planning, not the reading of YAML
(benchmarks/validate_scale.py measures that). The sandbox runs in its own process, so the CPU
figures are the client's alone; "planning alone" replays the live bodies from memory, a figure
the load of a shared machine and the sandbox's speed hardly move.

    python benchmarks/plan_scale.py --surveys 1000 --quotas 12 --latency-ms 50 --parallelism 10
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import yaml

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.config import Config, Environment
from surveyctl.reconcile.apply_run import apply_run
from surveyctl.reconcile.live import fetch_all
from surveyctl.reconcile.plan_run import desired_state, plan_run
from surveyctl.reconcile.run import ApplyHooks, RunOptions, Workspace
from surveyctl.state import FileStateStore

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"

AGES = [(18, 24), (25, 34), (35, 44), (45, 54), (55, 64), (65, 99), (16, 17), (18, 99)]
GENDERS = [("m", "111"), ("f", "112")]


def survey(index: int, quotas: int, title_suffix: str = "", count_bump: int = 0) -> dict:
    cells = list(itertools.product(GENDERS, AGES))[:quotas]
    quota_list = []
    for number, ((gender, code), (low, high)) in enumerate(cells):
        quota_list.append(
            {
                "buyer_quota_id": f"{gender}-{low}-{high}",
                "required_count": 50 + (count_bump if number == 0 else 0),
                "criteria": [
                    {"qualification_code": 211, "condition_codes": [code]},
                    {
                        "qualification_code": 212,
                        "range_sets": [{"from": low, "to": high, "units": 311}],
                    },
                ],
            }
        )
    return {
        "kind": "Survey",
        "name": f"survey-{index:04d}",
        "spec": {
            "survey_title": f"Benchmark survey {index}{title_suffix}",
            "survey_category_code": 231,
            "survey_localization": "en_US",
            "completes_required": 50 * len(quota_list),
            "expected_ir": 40,
            "expected_loi": 12,
            "offer_price": 2.5,
            "field_time": 14,
            "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
            "quotas": quota_list,
        },
    }


class Replay:
    """Live survey bodies read once and served again without the network; each read parses
    the body afresh, as the client does, so the planner's own CPU can be measured alone."""

    def __init__(self, bodies: dict[int, str]):
        self.bodies = bodies

    def get_survey(self, survey_id: int) -> dict:
        return json.loads(self.bodies[survey_id])

    def get_surveys_page(self, **query) -> tuple[list[dict], int]:
        """The survey list, empty: no survey is listed as unchanged, so each one is read (from
        memory) and planned, which is what this figure measures."""
        return [], 1


def write(folder: Path, manifests: list[dict]) -> None:
    for manifest in manifests:
        (folder / f"{manifest['name']}.yaml").write_text(yaml.safe_dump(manifest))


def serve_sandbox(db: Path, latency_ms: int) -> tuple[subprocess.Popen, str]:
    """`surveyctl sandbox serve` in its own process, as a marketplace is: the planner's
    threads then do not share an interpreter lock with the server's."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "surveyctl",
            "sandbox",
            "serve",
            "--port",
            str(port),
            "--db",
            str(db),
            "--latency-ms",
            str(latency_ms),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, url
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the sandbox did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, default=500)
    parser.add_argument("--quotas", type=int, default=12)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="no-op plans to take the median of")
    parser.add_argument("--no-baseline", action="store_true", help="skip the sequential plan")
    args = parser.parse_args()
    n, latency = args.surveys, args.latency_ms / 1000

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, url = serve_sandbox(root / "sandbox.db", args.latency_ms)
        folder = root / "manifests"
        folder.mkdir()
        write(folder, [survey(i, args.quotas) for i in range(n)])
        os.environ[KEY_VARIABLE] = "sandbox-buyer-1"
        config = Config(root=root)
        environment = Environment(name="bench", host=url, api_key_env=KEY_VARIABLE)
        store = FileStateStore(root / "state.json", environment.name)
        options = RunOptions(targets=(folder,), parallelism=args.parallelism, auto_approve=True)

        def workspace(client: ApiClient) -> Workspace:
            catalog = Catalog(lambda: client, environment.name, root / "cache")
            return Workspace(config, environment, store, lambda: client, catalog)

        def client() -> ApiClient:
            return ApiClient(url, "sandbox-buyer-1", pool_size=args.parallelism)

        started = time.perf_counter()
        desired = desired_state(workspace(client()), options)
        print(
            f"manifests: {n} surveys x {args.quotas} quotas loaded and validated in "
            f"{time.perf_counter() - started:.2f}s (catalogue fetched once)"
        )

        created = apply_run(workspace(client()), options, ApplyHooks())
        assert created.result is not None and not created.result.failed

        ideal = n * latency / args.parallelism
        runs = []
        for _ in range(args.repeat):
            bench = client()  # a fresh client per plan, as each `surveyctl plan` has
            started, cpu = time.perf_counter(), time.process_time()
            plan = plan_run(workspace(bench), options, desired)
            runs.append((time.perf_counter() - started, time.process_time() - cpu))
            changes = sum(1 for r in plan.resources if r.is_change)
            print(
                f"no-op plan of the loaded manifests: {runs[-1][0]:.2f}s with parallelism "
                f"{args.parallelism}, ratio {runs[-1][0] / ideal:.2f}, client CPU "
                f"{runs[-1][1] / n * 1000:.2f} ms per survey; changes found: {changes}"
            )
        elapsed = statistics.median(wall for wall, _cpu in runs)
        cpu = statistics.median(cpu for _wall, cpu in runs)
        print(
            f"median of {len(runs)}: {elapsed:.2f}s; ideal N x L / parallelism = {ideal:.2f}s; "
            f"ratio {elapsed / ideal:.2f}; client CPU {cpu / n * 1000:.2f} ms per survey "
            f"(L / parallelism leaves {latency / args.parallelism * 1000:.2f} ms)"
        )
        print(
            f"  requests: {dict(sorted(bench.request_counts.items()))} "
            f"(GETs per managed resource: {bench.request_counts.get('GET survey', 0) / n:.2f})"
        )
        state = store.load()
        fetcher = client()
        started, cpu = time.perf_counter(), time.process_time()
        live = fetch_all(
            fetcher,
            ((a, lambda c, i=r.ps_survey_id: c.get_survey(i)) for a, r in state.resources.items()),
            args.parallelism,
        )
        fetched, cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"  the same {n} GETs alone, no planning: {fetched:.2f}s, ratio "
            f"{fetched / ideal:.2f}, client CPU {cpu / n * 1000:.2f} ms per survey (the "
            "sandbox's and the HTTP stack's own cost)"
        )
        replay = Replay(
            {r.ps_survey_id: json.dumps(live[a].body) for a, r in state.resources.items()}
        )
        cpus, loads = [], []
        for _ in range(args.repeat):
            cpu = time.process_time()
            plan_run(workspace(replay), options, desired)
            cpus.append(time.process_time() - cpu)
            cpu = time.process_time()
            store.load()
            loads.append(time.process_time() - cpu)
        print(
            f"  planning alone (the live bodies replayed from memory, no network): "
            f"{statistics.median(cpus) / n * 1000:.2f} ms CPU per survey, median of {len(cpus)}; "
            f"reading the state file, which comes first, takes "
            f"{statistics.median(loads) / n * 1000:.2f} ms of it"
        )
        if not args.no_baseline:
            sequential = replace(options, parallelism=1)
            started = time.perf_counter()
            plan_run(workspace(client()), sequential, desired)
            baseline = time.perf_counter() - started
            print(
                f"sequential baseline (parallelism 1): {baseline:.2f}s; the parallel plan "
                f"(median) is {baseline / elapsed:.1f} x faster"
            )

        changed = max(1, n // 10)
        edits = [
            survey(i, args.quotas, title_suffix=" (edited)")
            if i % 2 == 0
            else survey(i, args.quotas, count_bump=10)
            for i in range(changed)
        ]
        write(folder, edits)
        writer = client()
        started = time.perf_counter()
        run = apply_run(workspace(writer), options, ApplyHooks())
        elapsed = time.perf_counter() - started
        kinds = {}
        for resource in run.plan.resources:
            kinds[resource.action] = kinds.get(resource.action, 0) + 1
        writes = {k: v for k, v in writer.request_counts.items() if not k.startswith("GET")}
        failed = len(run.result.failed) if run.result else 0
        print(
            f"apply (plan included) of {changed} changed surveys ({kinds.get('update', 0)} full "
            f"updates, {kinds.get('quota-update', 0)} quota updates): {elapsed:.2f}s, "
            f"failed {failed}"
        )
        print(
            f"  writes: {dict(sorted(writes.items()))} (expected: PUT survey "
            f"{kinds.get('update', 0)}, PUT quota {kinds.get('quota-update', 0)})"
        )
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
