"""`surveyctl apply` as separate processes against a sandbox served in its own process: two at
once (exactly one refused, naming the other), and one killed with SIGKILL at random points
(the next apply is not blocked, no survey is created twice, and the state converges)."""

from __future__ import annotations

import multiprocessing
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from surveyctl.api import ApiClient
from surveyctl.sandbox.process import served as serve_in_process

from ..reconcile.conftest import Manifests, survey_manifest, survey_title
from .conftest import local_project

LATENCY_MS = 40
SURVEYS = 12
# Per backend; `SURVEYCTL_KILL_TRIALS=30` (or benchmarks/apply_scale.py --kill-trials 30) runs more.
KILL_TRIALS = int(os.environ.get("SURVEYCTL_KILL_TRIALS", "3"))
RACE_TRIALS = 20
RACE_LATENCY_MS = 100


def serve(db: Path, latency_ms: int):
    """`surveyctl sandbox serve` in its own process, with latency, as a marketplace is."""
    with serve_in_process(db, latency_ms=latency_ms) as sandbox:
        yield sandbox.url


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    yield from serve(tmp_path_factory.mktemp("served") / "sandbox.db", LATENCY_MS)


@pytest.fixture(scope="module")
def slow_served(tmp_path_factory):
    """A slower one: each request takes long enough that a second apply always meets the
    first one's lock, however the two processes' start-up differs."""
    yield from serve(tmp_path_factory.mktemp("slow") / "sandbox.db", RACE_LATENCY_MS)


@pytest.fixture
def project(tmp_path: Path, served: str, monkeypatch, state_setting) -> Path:
    return local_project(tmp_path, served, state_setting, monkeypatch)


def start_apply(project: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "surveyctl", "apply", "manifests", "--auto-approve", *extra],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def write_surveys(project: Path, tag: str, count: int) -> list[str]:
    manifests = Manifests(project)
    names = [f"{tag}-{number:02d}" for number in range(count)]
    for name in names:
        manifests.write(survey_manifest(name))
    return names


def live_titles(url: str) -> list[str]:
    client = ApiClient(url, "sandbox-buyer-1", retries=0)
    try:
        return [survey["survey_title"] for survey in client.list_surveys()]
    finally:
        client.close()


def _apply_when_told(project: Path, go, output: Path) -> None:
    """A forked process: surveyctl is imported already, so the two contenders start their
    `apply` within a millisecond of each other when `go` is set."""
    sys.stdout = sys.stderr = open(output, "w", encoding="utf-8", buffering=1)  # noqa: SIM115
    os.chdir(project)
    from surveyctl.cli.main import cli

    go.wait(60)
    # One read at a time: each apply holds the lock for three reads of RACE_LATENCY_MS, long
    # enough that a contender descheduled on a loaded machine still meets it.
    cli.main(["apply", "manifests", "--auto-approve", "--parallelism", "1"], prog_name="surveyctl")


@pytest.mark.parametrize("backend", ["postgres"])
def test_two_applies_at_once_exactly_one_is_refused_naming_the_other(
    run_cli, project, slow_served, state_setting, tmp_path, monkeypatch
):
    local_project(project, slow_served, state_setting, monkeypatch)
    write_surveys(project, "race", 3)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    forked = multiprocessing.get_context("fork")
    outcomes = []
    for trial in range(RACE_TRIALS):
        go = forked.Event()
        outputs = [tmp_path / f"race-{trial}-{n}.txt" for n in (1, 2)]
        contenders = [
            forked.Process(target=_apply_when_told, args=(project, go, out)) for out in outputs
        ]
        for contender in contenders:
            contender.start()
        go.set()
        for contender in contenders:
            contender.join(60)
            assert contender.exitcode is not None, "an apply hung"
        refused = [
            (c, o.read_text()) for c, o in zip(contenders, outputs, strict=True) if c.exitcode != 0
        ]
        passed = [c for c in contenders if c.exitcode == 0]
        outcomes.append((len(refused), len(passed)))
        if len(refused) == 1 and len(passed) == 1:
            (_, message), winner = refused[0], passed[0]
            assert "is locked by" in message and f"(pid {winner.pid})" in message, message
            assert "'apply'" in message
    assert outcomes == [(1, 1)] * RACE_TRIALS


# apply's progress line of a finished create: `apply Survey/x (3/12): create ok created ...`.
OUTCOME = re.compile(r"^apply Survey/\S+ \(\d+/\d+\): create (ok|FAILED)")
# The plan's warning for a create the kill cut off before the sandbox made anything: held back
# for the settle time, which the test does not wait out.
UNRESOLVED = re.compile(
    r"(Survey/[a-z0-9-]+): the create sent at \S+ lost its answer and has made no survey so far"
)


def kill_at_a_random_point(process: subprocess.Popen, rng: random.Random) -> str:
    """Kills `process` after a random number of finished creates (plus a random part of one
    request's latency), or at a random moment before the first; says where."""
    point = rng.randrange(0, SURVEYS)
    seen = 0
    for line in process.stderr:
        if point == 0 and line.startswith("surveyctl: environment"):
            break
        if OUTCOME.match(line):
            seen += 1
            if seen == point:
                break
    delay = rng.uniform(0, 0.5) if point == 0 else rng.uniform(0, LATENCY_MS / 1000)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return f"after {seen} create(s) + {delay * 1000:.0f} ms"


def wait_until_settled(url: str) -> None:
    """Waits until the creates the killed apply had sent are made: the account's surveys are
    the same over several request latencies (on a busy machine a request sent before the kill
    can take far longer than one latency, and a create still in flight is not found yet)."""
    before, deadline = live_titles(url), time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(5 * LATENCY_MS / 1000)
        now = live_titles(url)
        if now == before:
            return
        before = now
    raise AssertionError("the sandbox kept making surveys 30 s after the kill")


def converge(run_cli, url: str) -> int:
    """Applies until the apply succeeds; returns how many unresolved creates needed the manual
    step the plan names (import if the survey exists, `state rm` if it does not)."""
    manual = 0
    for _ in range(5):
        result = run_cli("apply", "manifests", "--auto-approve")
        output = result.stdout + result.stderr
        assert "is locked by" not in output, output  # never blocked by the killed one's lock
        if result.exit_code == 0:
            break
        pending = sorted(set(UNRESOLVED.findall(output)))
        assert pending, output
        client = ApiClient(url, "sandbox-buyer-1", retries=0)
        live = {s["survey_title"]: s["ps_survey_id"] for s in client.list_surveys()}
        client.close()
        for address in pending:
            name = address.split("/", 1)[1]
            manual += 1
            if survey_title(name) in live:
                step = run_cli("import", str(live[survey_title(name)]), "--name", name)
            else:
                step = run_cli("state", "rm", address)
            assert step.exit_code == 0, step.stderr
    replanned = run_cli("plan", "manifests", "--detailed-exitcode")
    assert replanned.exit_code == 0 and "No changes." in replanned.stdout, replanned.stdout
    return manual


def test_an_apply_killed_at_random_points_is_not_blocked_creates_no_duplicate_and_converges(
    run_cli, project, served, backend
):
    seed = int(os.environ.get("SURVEYCTL_KILL_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    manual, points = 0, []
    for trial in range(KILL_TRIALS):
        names = write_surveys(project, f"{backend}-kill{trial}", SURVEYS)
        apply = start_apply(project, "--parallelism", "4")
        points.append(kill_at_a_random_point(apply, rng))
        wait_until_settled(served)  # requests already sent finish in the sandbox
        manual += converge(run_cli, served)
        titles = live_titles(served)
        duplicated = [name for name in names if titles.count(survey_title(name)) != 1]
        assert duplicated == [], (seed, points)
    # A lost create whose survey is found is adopted by the next plan; one not found yet is
    # held back for the settle time (60 s), which the test does not wait out: it takes the
    # step the plan names instead, and counts it.
    print(
        f"\nkill -9 of apply ({backend}, seed {seed}): killed {'; '.join(points)}; "
        f"{manual} unresolved create(s) resolved by hand; no duplicate"
    )
