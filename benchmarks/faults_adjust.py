"""The adjust section of `benchmarks/faults.py`: adjustments killed at random times.

Against `surveyctl sandbox serve` in its own process, answering every request after
--adjust-latency-ms (and refusing --fail-rate of them with 503/429 before they touch any data),
each trial submits three fresh completes of one survey with `surveyctl adjust FILE --yes
--output FILE` and kills it (SIGKILL) at a random time after the submission was journalled:
uniformly within the median time an undisturbed adjust takes from its journal line to its end
(three are measured first). The kill so lands while the request is in flight or just after
the answer, whatever the machine's load makes of the start-up time; a kill before the journal
line is a kill before anything was sent (the tests cover it). Then the next run, `surveyctl
adjust FILE --yes` of the same file, is made as a person would make it after a crash.

Counted per trial, from the marketplace's own store and the local journal:
- where the kill landed: before the submission was journalled, in flight (journalled, no
  answer), or after the answer;
- whether the adjustment reached the service (its transactions show as reconciled);
- whether a local record exists of every adjustment that reached the service;
- what the next run reported, and whether that matches the service;
- adjustments sent twice: any adjustment whose summary counts an already reconciled
  transaction (every trial's transactions are fresh, so only a second send makes one).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.sandbox.process import served

TOKEN = "faults-adjust"
BUYER = 2000
KEY_VARIABLE = "SURVEYCTL_FAULTS_KEY"
IDS_PER_TRIAL = 3
CALIBRATION_RUNS = 3  # undisturbed adjusts; the kills land within their median time in flight
SURVEY = {
    "survey_title": "Adjust faults",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 5000,
    "expected_ir": 90,
    "expected_loi": 10,
    "offer_price": 2.5,
    "field_time": 14,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
}


def adjust_trials(args, root: Path) -> dict:
    """Runs `args.adjust_kills` trials; returns their counts (see the module's docstring)."""
    rng = random.Random(args.seed)
    db = root / "adjust.db"
    keys = ("--key", f"{TOKEN}={BUYER}")
    with served(db, extra_args=keys) as fast:
        survey_id, completes = _completes(
            fast.url, IDS_PER_TRIAL * (args.adjust_kills + CALIBRATION_RUNS)
        )
    project = root / "adjust-project"
    project.mkdir()
    with served(
        db,
        latency_ms=args.adjust_latency_ms,
        fail_rate=args.fail_rate,
        seed=args.seed,
        extra_args=keys,
    ) as slow:
        _configure(project, slow.url)
        undisturbed = statistics.median(
            _undisturbed(project, survey_id, completes[IDS_PER_TRIAL * k : IDS_PER_TRIAL * (k + 1)])
            for k in range(CALIBRATION_RUNS)
        )
        trials = []
        for index in range(args.adjust_kills):
            first = IDS_PER_TRIAL * (index + CALIBRATION_RUNS)
            chunk = completes[first : first + IDS_PER_TRIAL]
            name = _write_ids(project, f"trial-{index:02d}", survey_id, chunk)
            delay = rng.uniform(0.0, undisturbed)
            trials.append(_trial(project, name, delay, slow.url, survey_id, chunk))
            print(json.dumps(trials[-1]), flush=True)
    twice = _sent_twice(db)
    landed = Counter(t["landed"] for t in trials)
    return {
        "trials": len(trials),
        "in_flight_seconds": round(undisturbed, 2),
        "kill_landed": dict(landed),
        "reached_service": sum(t["reached"] for t in trials),
        "reached_without_record": sum(t["reached"] and not t["recorded"] for t in trials),
        "next_run_reports": dict(Counter(t["reported"] for t in trials)),
        "next_run_wrong": sum(not t["report_matches"] for t in trials),
        "next_run_sent": sum(t["next_run_sent"] for t in trials),
        "sent_twice": twice,
    }


def _undisturbed(project: Path, survey_id: int, ids) -> float:
    """How long one undisturbed adjust takes from its journal line to its end."""
    name = _write_ids(project, f"calibration-{ids[0][:8]}", survey_id, ids)
    process = _start(project, name)
    journalled = _journalled(project, process, len(_journal_lines(project)))
    if process.wait() != 0:
        raise SystemExit("the undisturbed adjust failed")
    return time.monotonic() - journalled


def _start(project: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        _command("adjust", name, "--yes", "--output", f"{name}.answer.json"),
        cwd=project,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _journalled(project: Path, process: subprocess.Popen, lines_before: int) -> float:
    """Waits for the submission's journal line; the monotonic time it was seen."""
    while len(_journal_lines(project)) == lines_before:
        if process.poll() is not None:
            raise SystemExit("the adjust ended without journalling its submission")
        time.sleep(0.01)
    return time.monotonic()


def _trial(project: Path, name: str, delay: float, url: str, survey_id: int, ids) -> dict:
    before = _journal_lines(project)
    process = _start(project, name)
    _journalled(project, process, len(before))
    time.sleep(delay)
    finished = process.poll() is not None
    process.send_signal(signal.SIGKILL)
    process.wait()
    events = _journal_lines(project)[len(before) :]
    kinds = [event.get("event") for event in events]
    if finished or "answered" in kinds:
        landed = "after the answer"
    elif "sending" in kinds:
        landed = "in flight"
    else:
        landed = "before the journal"
    time.sleep(1.5)  # a request in flight is finished by the marketplace anyway
    reached = _reconciled(url, survey_id, ids) == len(ids)
    count_before = _adjustments(project)
    next_run = _run(project, "adjust", name, "--yes")
    reported = _reported(next_run, landed)
    return {
        "file": name,
        "delay": round(delay, 2),
        "landed": landed,
        "reached": reached,
        "recorded": "sending" in kinds,
        "reported": reported,
        "report_matches": _matches(reported, reached),
        "next_run_sent": _adjustments(project) - count_before,
    }


def _reported(result: subprocess.CompletedProcess, landed: str) -> str:
    """What the next run said of the killed one."""
    out = result.stdout
    if "was answered: adjustment" in out:
        return "answered"
    if "most likely reached it" in out:
        return "likely made"
    if "most likely did not reach" in out:
        return "likely not made"
    if "outcome is unclear" in out:
        return "unclear"
    if "outcome is unknown" in out:
        return "unknown"
    if result.returncode == 0:
        return "nothing pending: submitted" if landed != "after the answer" else "answered"
    return f"exit {result.returncode}"


def _matches(reported: str, reached: bool) -> bool:
    if reported == "likely made":
        return reached
    if reported in ("likely not made", "nothing pending: submitted"):
        return not reached
    return reported == "answered" and reached


def _completes(url: str, count: int) -> tuple[int, list[str]]:
    api = ApiClient(url, TOKEN)
    survey_id = api.create_survey(SURVEY)["ps_survey_id"]
    api.set_survey_status(survey_id, 22)
    ids: list[str] = []
    seed = 1
    while len(ids) < count:
        api.simulate_traffic(survey_id, {"respondents": count, "seed": seed, "bad_hash_share": 0})
        seed += 1
        ids = [
            item["Transaction ID"]
            for items in api.iter_pages(api.get_transactions_page, survey_id=survey_id, status=[21])
            for item in items
        ]
    return survey_id, ids[:count]


def _reconciled(url: str, survey_id: int, ids) -> int:
    api = ApiClient(url, TOKEN, retries=10, backoff=0.2)
    return sum(api.get_transaction(survey_id, t)["Reconciliation Status"] != 0 for t in ids)


def _adjustments(project: Path) -> int:
    with sqlite3.connect(project.parent / "adjust.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM adjustments").fetchone()[0]


def _sent_twice(db: Path) -> int:
    """Adjustments that counted an already reconciled transaction: a second send."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT summary FROM adjustments").fetchall()
    return sum(json.loads(summary).get("alreadyReconciled", 0) > 0 for (summary,) in rows)


def _journal_lines(project: Path) -> list[dict]:
    """The events of the project's adjustment journal: one file per buyer account
    (`.surveyctl/adjustments/buyer-<account>.jsonl`), a single one here."""
    lines = []
    for path in sorted((project / ".surveyctl" / "adjustments").glob("*.jsonl")):
        try:
            lines += path.read_text().splitlines()
        except OSError:
            continue
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            events.append({})
    return events


def _write_ids(project: Path, name: str, survey_id: int, ids) -> str:
    path = project / f"{name}.csv"
    path.write_text("transaction_id,survey_id\n" + "".join(f"{t},{survey_id}\n" for t in ids))
    return path.name


def _configure(project: Path, url: str) -> None:
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  bench: {{host: '{url}', api_key_env: {KEY_VARIABLE}}}\n"
        "default_environment: bench\n"
    )


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "surveyctl", *args]


def _env() -> dict[str, str]:
    return {**os.environ, KEY_VARIABLE: TOKEN, "NO_COLOR": "1"}


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(_command(*args), cwd=project, env=_env(), capture_output=True, text=True)


def summary(row: dict) -> None:
    """The section's figures, for people."""
    print(
        f"== adjust kills: {row['trials']} trial(s), undisturbed adjust from journal to end "
        f"{row['in_flight_seconds']} s"
    )
    print(f"   kill landed:                 {row['kill_landed']}")
    print(f"   adjustments that reached the service: {row['reached_service']}")
    print(f"   reached with no local record: {row['reached_without_record']}")
    print(f"   next run reported:           {row['next_run_reports']}")
    print(f"   next run wrong about it:     {row['next_run_wrong']}")
    print(f"   next run sent:               {row['next_run_sent']}")
    print(f"   adjustments sent twice:      {row['sent_twice']}")
