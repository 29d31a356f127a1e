"""surveyctl at the service's rate limit: does it find the rate instead of hammering it?

Serves the sandbox in its own process with `--rate-limit R` (a token bucket per access-token,
429 with Retry-After past it), then runs, as processes, as the README does:
1. `surveyctl apply` creating N surveys (N creates, each a POST);
2. `surveyctl plan` of the same N surveys, no changes (N reads), with a fresh key (a fresh
   bucket).
For each it prints the wall time, the ideal N / R, their ratio (target <= 1.2 for the plan),
the requests sent and the share answered 429 (target <= 5 %), counted from the command's own
output: `--debug` logs each request, and every retry is announced ("answered 429").

    python benchmarks/rate_limit.py --surveys 1000 --rate-limit 50 --parallelism 10
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import yaml
from processes import command
from survey_bodies import body, gender_quotas

from surveyctl.sandbox.process import served

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"
APPLY_KEY = "bench-apply-token"  # buyer 1, its own bucket
PLAN_KEY = "sandbox-buyer-1"
_REQUEST = re.compile(r"surveyctl\.http > (GET|PUT|POST|PATCH|DELETE) ")
_REFUSED = re.compile(r"retrying \w+ \S+ .*: answered 429$", re.MULTILINE)


def manifest(index: int) -> dict:
    spec = {**body(f"Rate limit survey {index}"), "quotas": gender_quotas()}
    return {"kind": "Survey", "name": f"survey-{index:04d}", "spec": spec}


def timed(root: Path, key: str, *arguments: str) -> tuple[float, subprocess.CompletedProcess]:
    environment = {**os.environ, KEY_VARIABLE: key}
    started = time.perf_counter()
    done = subprocess.run(
        command("--debug", *arguments), cwd=root, env=environment, capture_output=True, text=True
    )
    return time.perf_counter() - started, done


def report(name: str, wall: float, done: subprocess.CompletedProcess, n: int, rate: float):
    requests = len(_REQUEST.findall(done.stderr))
    refused = len(_REFUSED.findall(done.stderr))
    attempts = requests + refused  # every 429 was retried and announced
    ideal = n / rate
    share = refused / attempts if attempts else 0.0
    print(
        f"{name}: {wall:.2f}s for N={n} at R={rate:g}/s; N / R = {ideal:.2f}s; "
        f"ratio {wall / ideal:.2f}; {requests} requests, {refused} answered 429 "
        f"({share:.1%} of {attempts} attempts); exit {done.returncode}"
    )
    return wall / ideal, share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, default=1000)
    parser.add_argument("--rate-limit", type=float, default=50.0)
    parser.add_argument("--parallelism", type=int, default=10)
    args = parser.parse_args()
    n, rate = args.surveys, args.rate_limit
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        extra = ("--rate-limit", str(rate), "--key", f"{APPLY_KEY}=1")
        with served(root / "sandbox.db", extra_args=extra) as sandbox:
            folder = root / "surveys"
            folder.mkdir()
            for index in range(n):
                (folder / f"survey-{index:04d}.yaml").write_text(yaml.safe_dump(manifest(index)))
            config = {
                "manifests": ["surveys/"],
                "environments": {"bench": {"host": sandbox.url, "api_key_env": KEY_VARIABLE}},
                "default_environment": "bench",
            }
            (root / "surveyctl.yaml").write_text(yaml.safe_dump(config))
            parallelism = ("--parallelism", str(args.parallelism))
            wall, applied = timed(root, APPLY_KEY, "apply", "--auto-approve", *parallelism)
            report("apply (creates)", wall, applied, n, rate)
            if applied.returncode != 0:
                raise SystemExit(applied.stderr[-3000:])
            wall, planned = timed(root, PLAN_KEY, "plan", "--detailed-exitcode", *parallelism)
            ratio, share = report("plan (no-op)", wall, planned, n, rate)
            if planned.returncode != 0:
                raise SystemExit(planned.stderr[-3000:])
    verdict = "met" if ratio <= 1.2 and share <= 0.05 else "NOT met"
    print(f"target: plan ratio <= 1.2 with <= 5 % of requests answered 429: {verdict}")
    print(f"load after: {os.getloadavg()[0]:.2f} (1-min average)")


if __name__ == "__main__":
    main()
