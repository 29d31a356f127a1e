"""Streaming export: `surveyctl transactions list --format csv` of 100,000 transactions.

Starts a sandbox in this process on a temporary database, creates a live survey, sends a few
simulated respondents to get realistic records, then stores N copies (new transaction ids,
cycling suppliers) through the sandbox store in batches. The export runs as a separate
`python -m surveyctl` process; its peak memory (VmHWM) and resident memory over the run are
read from /proc, so they are surveyctl's alone. Prints rows per second, the CPU seconds of the
export process and of the sandbox (the figure a machine without other load would give), and
memory; exits 1 if the memory exceeds the limit or the CSV does not hold every row.

    python benchmarks/transactions_export.py [--transactions 100000] [--page-size 1000]
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.sandbox.server import SandboxOptions, start

MEMORY_LIMIT_MB = 100
BATCH = 10_000  # records stored per write
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
    batch: list[dict] = []
    for n in range(count - len(templates)):
        record = dict(templates[n % len(templates)])
        record["Transaction ID"] = str(uuid.uuid4())
        record["Supplier ID"] = 12 + n % 3
        batch.append(record)
        if len(batch) == BATCH:
            running.store.insert_transactions(survey_id, batch)
            batch.clear()
    running.store.insert_transactions(survey_id, batch)
    return survey_id


def _watch_memory(process: subprocess.Popen) -> tuple[float, list[float]]:
    """The process's own peak resident memory (VmHWM, MB) and its resident memory (VmRSS, MB)
    every 20 ms, read from /proc until it exits.

    Not ru_maxrss: a child started by fork or vfork carries the parent's resident size into
    its ru_maxrss, and this parent holds the sandbox and the records it stored.
    """
    status = Path(f"/proc/{process.pid}/status")
    peak_kib, samples = 0, []
    while process.poll() is None:
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
            peak_kib = max(peak_kib, int(fields["VmHWM"].split()[0]))
            samples.append(int(fields["VmRSS"].split()[0]) / 1024)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    return peak_kib / 1024, samples


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
        server_cpu = time.process_time()  # the sandbox serves from this process
        with open(work / "stderr.txt", "w+", encoding="utf-8") as stderr:
            export = subprocess.Popen(
                command,
                cwd=work,
                env={**os.environ, "BENCH_KEY": KEY},
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
            peak_mb, rss = _watch_memory(export)
            seconds = time.perf_counter() - began
            server_cpu = time.process_time() - server_cpu
            if export.wait() != 0:
                stderr.seek(0)
                print(stderr.read(), file=sys.stderr)
                return 1
        with open(work / "export.csv", newline="", encoding="utf-8") as handle:
            rows = sum(1 for _ in csv.DictReader(handle))
    finally:
        client.close()
        running.stop()
        shutil.rmtree(work, ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_cpu = usage.ru_utime + usage.ru_stime
    if not rss:  # no /proc: ru_maxrss, an upper bound (KiB on Linux, bytes on macOS)
        peak_mb = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    print(f"command: {' '.join(['surveyctl', *command[3:]])}")
    print(f"exported {rows} rows in {seconds:.1f} s: {rows / seconds:,.0f} rows/s")
    print(
        f"CPU: surveyctl process {client_cpu:.2f} s ({rows / client_cpu:,.0f} rows per CPU "
        f"second), sandbox {server_cpu:.2f} s, {os.cpu_count()} cores"
    )
    print(f"peak memory of the surveyctl process: {peak_mb:.1f} MB (limit {MEMORY_LIMIT_MB} MB)")
    if len(rss) >= 10:
        tenths = [rss[len(rss) * n // 10] for n in range(1, 10)]
        print(
            "resident memory at 10 %, 20 %, ... 90 % of the run: "
            + ", ".join(f"{mb:.0f}" for mb in tenths)
            + " MB"
        )
    ok = rows == args.transactions and peak_mb < MEMORY_LIMIT_MB
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
