"""The whole `surveyctl plan` as a user waits for it: a process, start to exit.

Serves the sandbox in its own process with latency L, creates N surveys of Q quotas through
one `surveyctl apply`, then times `surveyctl plan` (no changes) as a fresh process --repeat
times, as the README runs it. Prints each run, the median, the latency bound N x L / P and the
ratio, and the requests one more plan sends (counted from its `--debug` log), by method.

    python benchmarks/plan_process.py --surveys 200 1000 --quotas 12 --latency-ms 50 \
        --parallelism 10 --repeat 3

`--plan-args` passes more options to the timed plan (for example `--refresh=false`).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from surveyctl.sandbox.process import served

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"
AGES = [(18, 24), (25, 34), (35, 44), (45, 54), (55, 64), (65, 99), (16, 17), (18, 99)]
GENDERS = [("m", "111"), ("f", "112")]
_REQUEST = re.compile(r"surveyctl\.http > (\w+) \S+?/buyers/v\d/([a-z_-]+)")


def survey(index: int, quotas: int) -> dict:
    """One benchmark survey: Q interlocked gender x age quotas written as API criteria."""
    cells = list(itertools.product(GENDERS, AGES))[:quotas]
    quota_list = [
        {
            "buyer_quota_id": f"{gender}-{low}-{high}",
            "required_count": 50,
            "criteria": [
                {"qualification_code": 211, "condition_codes": [code]},
                {
                    "qualification_code": 212,
                    "range_sets": [{"from": low, "to": high, "units": 311}],
                },
            ],
        }
        for (gender, code), (low, high) in cells
    ]
    return {
        "kind": "Survey",
        "name": f"survey-{index:04d}",
        "spec": {
            "survey_title": f"Benchmark survey {index}",
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


def command(*arguments: str) -> list[str]:
    """The installed console script next to this Python (the README's way), else -m."""
    script = Path(sys.executable).parent / "surveyctl"
    if script.exists():
        return [str(script), *arguments]
    return [sys.executable, "-m", "surveyctl", *arguments]


def project(root: Path, url: str, n: int, quotas: int) -> None:
    """A project folder whose `bench` environment targets the served sandbox."""
    folder = root / "surveys"
    folder.mkdir()
    for index in range(n):
        manifest = survey(index, quotas)
        (folder / f"{manifest['name']}.yaml").write_text(yaml.safe_dump(manifest))
    config = {
        "manifests": ["surveys/"],
        "environments": {"bench": {"host": url, "api_key_env": KEY_VARIABLE}},
        "default_environment": "bench",
    }
    (root / "surveyctl.yaml").write_text(yaml.safe_dump(config))


def run(root: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, KEY_VARIABLE: "sandbox-buyer-1"}
    return subprocess.run(
        command(*arguments), cwd=root, env=environment, capture_output=True, text=True
    )


def measure(n: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with served(root / "sandbox.db", latency_ms=args.latency_ms) as sandbox:
            project(root, sandbox.url, n, args.quotas)
            parallelism = ["--parallelism", str(args.parallelism)]
            created = run(root, "apply", "--auto-approve", *parallelism)
            if created.returncode != 0:
                raise SystemExit(f"apply failed: {created.stderr[-2000:]}")
            extra = shlex.split(args.plan_args)
            walls = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                planned = run(root, "plan", "--detailed-exitcode", *parallelism, *extra)
                walls.append(time.perf_counter() - started)
                if planned.returncode != 0:
                    raise SystemExit(
                        f"the plan was not a no-op (exit {planned.returncode}): "
                        f"{(planned.stdout + planned.stderr)[-2000:]}"
                    )
            debug = run(root, "--debug", "plan", *parallelism, *extra)
            requests = collections.Counter(
                f"{m.group(1)} {m.group(2)}" for m in _REQUEST.finditer(debug.stderr)
            )
    ideal = n * args.latency_ms / 1000 / args.parallelism
    median = statistics.median(walls)
    runs = ", ".join(f"{wall:.2f}s" for wall in walls)
    print(
        f"N={n} x {args.quotas} quotas, L={args.latency_ms} ms, P={args.parallelism}: "
        f"whole `surveyctl plan` {median:.2f}s (median of {runs}); N x L / P = {ideal:.2f}s; "
        f"ratio {median / ideal:.2f}"
    )
    total = sum(requests.values())
    print(f"  requests of one no-op plan: {total} {dict(sorted(requests.items()))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, nargs="+", default=[200])
    parser.add_argument("--quotas", type=int, default=12)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plan-args", default="", help="more options for the timed plan")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    for n in args.surveys:
        measure(n, args)


if __name__ == "__main__":
    main()
