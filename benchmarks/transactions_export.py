"""Streaming export: `surveyctl transactions list --format csv` of 100,000 transactions.

Starts a sandbox in this process on a temporary database, creates a live survey, sends a few
simulated respondents to get realistic records, then stores N copies (new transaction ids,
cycling statuses and suppliers) through the sandbox store. The export runs as a separate
`python -m surveyctl` process, so its peak memory (ru_maxrss of the child) is surveyctl's
alone. Prints rows per second and peak memory; exits 1 if the memory exceeds the limit or the
CSV does not hold every row.

    python benchmarks/transactions_export.py [--transactions 100000] [--page-size 1000]
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.sandbox.server import SandboxOptions, start

MEMORY_LIMIT_MB = 150
KEY = "sandbox-buyer-1"
SURVEY = {
    "survey_title": "Export benchmark",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 1_000_000,
    "expected_ir": 60,
    "expected_loi": 12,
    "offer_price": 2.5,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
    "field_time": 14,
}


def _fill(running, client: ApiClient, count: int) -> int:
    survey_id = client.create_survey(SURVEY)["ps_survey_id"]
    client.set_survey_status(survey_id, 22)
    client.simulate_traffic(survey_id, {"respondents": 50, "seed": 1})
    templates, _ = client.get_transactions_page(survey_id, limit=50)
    for n in range(count - len(templates)):
        record = dict(templates[n % len(templates)])
        record["Transaction ID"] = str(uuid.uuid4())
        record["Supplier ID"] = 12 + n % 3
        record.pop("Survey ID", None)
        running.store.insert_transaction(survey_id, record)
    return survey_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="surveyctl-export-"))
    running = start(SandboxOptions(db_path=work / "sandbox.db"))
    client = ApiClient(running.url, KEY, retries=0)
    try:
        began = time.perf_counter()
        survey_id = _fill(running, client, args.transactions)
        print(f"stored {args.transactions} transactions in {time.perf_counter() - began:.1f} s")
        (work / "surveyctl.yaml").write_text(
            f"environments:\n  bench: {{host: '{running.url}', api_key_env: BENCH_KEY}}\n"
            "default_environment: bench\n"
        )
        command = [
            sys.executable, "-m", "surveyctl", "transactions", "list", str(survey_id),
            "--format", "csv", "--output", "export.csv", "--page-size", str(args.page_size),
        ]  # fmt: skip
        began = time.perf_counter()
        done = subprocess.run(
            command,
            cwd=work,
            env={**os.environ, "BENCH_KEY": KEY},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seconds = time.perf_counter() - began
    finally:
        client.close()
        running.stop()
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return 1
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    with open(work / "export.csv", newline="", encoding="utf-8") as handle:
        rows = sum(1 for _ in csv.DictReader(handle))
    print(f"exported {rows} rows in {seconds:.1f} s: {rows / seconds:,.0f} rows/s")
    print(f"peak memory of the surveyctl process: {peak_mb:.1f} MB (limit {MEMORY_LIMIT_MB} MB)")
    ok = rows == args.transactions and peak_mb < MEMORY_LIMIT_MB
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
