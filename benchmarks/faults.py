"""Recovery under faults: duplicates, lost updates and manual steps after kill -9 and heavy faults.

Two scenarios, each against `surveyctl sandbox serve` in its own process with injected faults
(a share of requests answered 503 or 429 with Retry-After before they touch any data):

1. Kill trials: N surveys at --fail-rate faults. Each trial (its own buyer, project and state)
   creates the surveys with `surveyctl apply` and kills that process with SIGKILL at a random
   state write; then runs `apply` again until `plan` says "No changes." Then it changes every
   survey (offer_price, and a quota count of every other one) and does the same again. A
   person's step is counted whenever the output asks for one (force-unlock of the killed
   apply's lock, an import to pick among candidates, a refresh); the step is then taken, as a
   person would, so the trial can go on.
2. Heavy faults: M surveys at --heavy-fail-rate, no kill: applies until "No changes", for the
   creates and for the changes.
3. Adjust kills (`benchmarks/faults_adjust.py`): --adjust-kills adjustments, each killed with
   SIGKILL at a random time against a marketplace answering after --adjust-latency-ms; the
   next run of each must report its outcome, and no adjustment may be sent twice.

After each scenario the marketplace is checked against the manifests: duplicates (surveys of
one title beyond the first), missing surveys, and lost updates (a survey whose live body lacks
a field value of its manifest). Every command is the real CLI (`python -m surveyctl`).

    python benchmarks/faults.py                       # small: 40 surveys, 3 trials, 40 at 50 %
    python benchmarks/faults.py --full                # 500 x 20 trials at 20 %, 200 at 50 %
    python benchmarks/faults.py --skip-kill --skip-heavy   # the adjust section alone

The settle time of lost creates is set to --settle seconds (the sandbox answers in
milliseconds, so a create that shows no survey after that made none).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from faults_adjust import adjust_trials
from faults_adjust import summary as adjust_summary

from surveyctl.api import ApiClient
from surveyctl.reconcile.normalise import normalise_survey

ALL_STATUSES = [11, 22, 33, 44]
KEY_VARIABLE = "SURVEYCTL_FAULTS_KEY"
NO_CHANGES = "No changes."
_NOTHING_TO_SEND = "Plan: 0 to add, 0 to change, 0 to destroy."
_SERIAL = re.compile(rb'"serial":\s*(\d+)')
_LOCK_ID = re.compile(r"force-unlock ([0-9a-fA-F-]{8,})")
_PICK = re.compile(r"`surveyctl import ID --name ([a-z0-9-]+)`")
_CANDIDATE = re.compile(r"(\d+) '[^']*' \(created")


def survey(prefix: str, index: int, price: float = 2.5, bump: int = 0) -> dict:
    """A survey manifest with two quotas; `bump` raises the first quota's count."""
    return {
        "kind": "Survey",
        "name": f"survey-{index:04d}",
        "spec": {
            "survey_title": f"{prefix} survey {index}",
            "survey_category_code": 231,
            "survey_localization": "en_US",
            "completes_required": 200,
            "expected_ir": 40,
            "expected_loi": 12,
            "offer_price": price,
            "field_time": 14,
            "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
            "quotas": [
                {
                    "buyer_quota_id": "male",
                    "required_count": 100 + bump,
                    "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
                },
                {
                    "buyer_quota_id": "female",
                    "required_count": 100,
                    "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}],
                },
            ],
        },
    }


def serve(db: Path, fail_rate: float, seed: int, keys: list[str]) -> tuple[subprocess.Popen, str]:
    """`surveyctl sandbox serve` in its own process; its URL once it accepts connections."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "surveyctl", "sandbox", "serve", "--port", str(port)]
    command += ["--db", str(db), "--fail-rate", str(fail_rate), "--seed", str(seed)]
    for key in keys:
        command += ["--key", key]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the sandbox did not start")


@dataclass
class Project:
    """A surveyctl project folder for one buyer of the sandbox."""

    root: Path
    url: str
    token: str
    settle: float
    parallelism: int

    def __post_init__(self) -> None:
        (self.root / "manifests").mkdir(parents=True, exist_ok=True)
        (self.root / "surveyctl.yaml").write_text(
            "environments:\n"
            f"  bench: {{host: '{self.url}', api_key_env: {KEY_VARIABLE}}}\n"
            "default_environment: bench\n"
        )

    @property
    def state_file(self) -> Path:
        return self.root / ".surveyctl" / "state" / "bench.json"

    def write(self, manifests: list[dict]) -> None:
        for manifest in manifests:
            path = self.root / "manifests" / f"{manifest['name']}.yaml"
            path.write_text(yaml.safe_dump(manifest))

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "surveyctl", *args]

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            KEY_VARIABLE: self.token,
            "SURVEYCTL_CREATE_SETTLE_SECONDS": str(self.settle),
            "NO_COLOR": "1",
        }

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(*args), cwd=self.root, env=self.env(), capture_output=True, text=True
        )

    def apply(self) -> subprocess.CompletedProcess:
        return self.run(
            "apply", "manifests", "--auto-approve", "--parallelism", str(self.parallelism)
        )

    def serial(self) -> int:
        """The state's serial: the last whole line of the change log a running command
        appends to, else the state file's (the file backend folds the log in at the end)."""
        log = self.state_file.with_name(f"{self.state_file.stem}.changes.jsonl")
        try:
            data = log.read_bytes()
        except OSError:
            data = b""
        lines = data[: data.rfind(b"\n") + 1].splitlines()
        if lines:
            found = _SERIAL.search(lines[-1])
            if found:
                return int(found.group(1))
        try:
            with open(self.state_file, "rb") as handle:
                found = _SERIAL.search(handle.read(256))
        except OSError:
            return 0
        return int(found.group(1)) if found else 0

    def client(self) -> ApiClient:
        return ApiClient(self.url, self.token, retries=10, backoff=0.2)


@dataclass
class Convergence:
    """How one run to "No changes" went."""

    applies: int = 0
    converged: bool = False
    manual: Counter = field(default_factory=Counter)
    resolved: Counter = field(default_factory=Counter)  # lost creates, by how they were resolved
    killed_at: int | None = None  # the state serial at which the first apply was killed


def killed_apply(project: Project, writes: int, rng: random.Random) -> int | None:
    """Starts an apply and kills it (SIGKILL) once the state has taken a random number of
    writes, up to `writes`; the serial it was killed at, or None if it finished first."""
    start = project.serial()
    target = start + rng.randint(1, max(1, writes))
    process = subprocess.Popen(
        project.command(
            "apply", "manifests", "--auto-approve", "--parallelism", str(project.parallelism)
        ),
        cwd=project.root,
        env=project.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while process.poll() is None:
        if project.serial() >= target:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return project.serial()
        time.sleep(0.002)
    return None


def converge(project: Project, limit: int, result: Convergence) -> Convergence:
    """Applies until the plan says "No changes.", taking (and counting) any step a person
    would have to take."""
    while result.applies < limit:
        applied = project.apply()
        output = applied.stdout + applied.stderr
        if _person_needed(project, output, result):
            continue
        result.applies += 1
        result.resolved["adopted"] += output.count("lost its answer but made")
        result.resolved["created again"] += output.count("; it is planned again")
        if "may still be processing" in output:
            time.sleep(project.settle)
        plan = project.run("plan", "manifests")
        plan_output = plan.stdout + plan.stderr
        if _person_needed(project, plan_output, result):
            continue
        if NO_CHANGES in plan.stdout:
            result.converged = True
            return result
    return result


def _person_needed(project: Project, output: str, result: Convergence) -> bool:
    """Whether the output asks a person to act; if so the step is counted and taken."""
    lock = _LOCK_ID.search(output)
    if lock and "is locked by" in output:
        result.manual["force-unlock"] += 1
        project.run("force-unlock", lock.group(1))
        return True
    if "surveyctl import ID --name" in output and "lost its answer" in output:
        result.manual["import (pick a candidate)"] += 1
        for line in output.splitlines():
            name, ids = _PICK.search(line), _CANDIDATE.findall(line)
            if name and ids:
                project.run("import", min(ids, key=int), "--name", name.group(1))
        return True
    if "! drift" in output and _NOTHING_TO_SEND in output:
        # Drift that no apply would clear: only `apply --refresh-only` records it.
        result.manual["apply --refresh-only"] += 1
        project.run("apply", "--refresh-only", "--auto-approve")
        return True
    return False


@dataclass
class Check:
    """The marketplace against the manifests."""

    duplicates: int = 0
    missing: int = 0
    lost_updates: int = 0


def check(project: Project, manifests: list[dict]) -> Check:
    client = project.client()
    try:
        # The sandbox lists full survey bodies, the same as a GET of each.
        listed = client.list_surveys(status=ALL_STATUSES)
        titles = Counter(s["survey_title"] for s in listed)
        by_title = {s["survey_title"]: s for s in listed}
        found = Check(duplicates=sum(n - 1 for n in titles.values() if n > 1))
        for manifest in manifests:
            spec = manifest["spec"]
            if spec["survey_title"] not in by_title:
                found.missing += 1
                continue
            live = normalise_survey(by_title[spec["survey_title"]])
            want = normalise_survey(spec)
            if any(live.get(name) != value for name, value in want.items()):
                found.lost_updates += 1
    finally:
        client.close()
    return found


def kill_trials(args, root: Path) -> list[dict]:
    tokens = [f"faults-trial-{k}" for k in range(args.trials)]
    keys = [f"{token}={1000 + k}" for k, token in enumerate(tokens)]
    server, url = serve(root / "kill.db", args.fail_rate, args.seed, keys)
    rng = random.Random(args.seed)
    rows = []
    try:
        for trial, token in enumerate(tokens):
            project = Project(root / f"trial-{trial}", url, token, args.settle, args.parallelism)
            prefix = f"T{trial}"
            row: dict = {"trial": trial}
            created = [survey(prefix, i) for i in range(args.surveys)]
            project.write(created)
            started = time.perf_counter()
            first = Convergence(killed_at=killed_apply(project, 2 * args.surveys, rng))
            converge(project, args.max_applies, first)
            changed = [
                survey(prefix, i, price=3.0, bump=5 if i % 2 else 0) for i in range(args.surveys)
            ]
            project.write(changed)
            second = Convergence(killed_at=killed_apply(project, args.surveys, rng))
            converge(project, args.max_applies, second)
            found = check(project, changed)
            row.update(
                seconds=round(time.perf_counter() - started, 1),
                create_killed_at=first.killed_at,
                create_applies=first.applies,
                update_killed_at=second.killed_at,
                update_applies=second.applies,
                converged=first.converged and second.converged,
                manual=dict(first.manual + second.manual),
                lost_creates=dict(first.resolved + second.resolved),
                **vars(found),
            )
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        server.terminate()
        server.wait()
    return rows


def heavy(args, root: Path) -> dict:
    token = "faults-heavy"
    server, url = serve(root / "heavy.db", args.heavy_fail_rate, args.seed, [f"{token}=2000"])
    try:
        project = Project(root / "heavy", url, token, args.settle, args.parallelism)
        created = [survey("H", i) for i in range(args.heavy_surveys)]
        project.write(created)
        started = time.perf_counter()
        first = converge(project, args.max_applies, Convergence())
        changed = [survey("H", i, price=3.0, bump=5 if i % 2 else 0) for i in range(len(created))]
        project.write(changed)
        second = converge(project, args.max_applies, Convergence())
        found = check(project, changed)
    finally:
        server.terminate()
        server.wait()
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "create_applies": first.applies,
        "update_applies": second.applies,
        "converged": first.converged and second.converged,
        "manual": dict(first.manual + second.manual),
        "lost_creates": dict(first.resolved + second.resolved),
        **vars(found),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="500 x 20 trials, and 200 at 50 %%")
    parser.add_argument("--surveys", type=int, default=40)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--fail-rate", type=float, default=0.2)
    parser.add_argument("--heavy-surveys", type=int, default=40)
    parser.add_argument("--heavy-fail-rate", type=float, default=0.5)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--max-applies", type=int, default=20)
    parser.add_argument("--settle", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-kill", action="store_true")
    parser.add_argument("--skip-heavy", action="store_true")
    parser.add_argument("--adjust-kills", type=int, default=20)
    parser.add_argument("--adjust-latency-ms", type=int, default=1000)
    parser.add_argument("--skip-adjust", action="store_true")
    args = parser.parse_args()
    if args.full:
        args.surveys, args.trials, args.heavy_surveys = 500, 20, 200
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not args.skip_kill:
            print(
                f"kill trials: {args.trials} x {args.surveys} surveys at {args.fail_rate:.0%} "
                "faults, kill -9 at a random state write of the creating and of the changing "
                "apply",
                flush=True,
            )
            rows = kill_trials(args, root)
            _summary("kill trials", rows)
        if not args.skip_heavy:
            print(
                f"heavy faults: {args.heavy_surveys} surveys at {args.heavy_fail_rate:.0%} "
                "faults, no kill",
                flush=True,
            )
            row = heavy(args, root)
            print(json.dumps(row), flush=True)
            _summary("heavy faults", [row])
        if not args.skip_adjust:
            print(
                f"adjust kills: {args.adjust_kills} adjustments at {args.fail_rate:.0%} faults "
                f"and {args.adjust_latency_ms} ms latency, kill -9 at a random time",
                flush=True,
            )
            adjust_row = adjust_trials(args, root)
            print(json.dumps(adjust_row), flush=True)
            adjust_summary(adjust_row)


def _summary(title: str, rows: list[dict]) -> None:
    manual = sum((Counter(r["manual"]) for r in rows), Counter())
    applies = [r["create_applies"] for r in rows] + [r["update_applies"] for r in rows]
    print(f"== {title}: {len(rows)} run(s)")
    print(f"   duplicates:          {sum(r['duplicates'] for r in rows)}")
    print(f"   missing surveys:     {sum(r['missing'] for r in rows)}")
    print(f"   lost updates:        {sum(r['lost_updates'] for r in rows)}")
    print(f"   manual steps needed: {sum(manual.values())} {dict(manual) or ''}".rstrip())
    print(f"   converged:           {sum(r['converged'] for r in rows)} of {len(rows)}")
    resolved = sum((Counter(r["lost_creates"]) for r in rows), Counter())
    print(f"   lost creates:        {dict(resolved) or 0} (resolved by the plan, no person)")
    print(
        "   applies until convergence (creates / changes): "
        f"median {statistics.median(r['create_applies'] for r in rows)} / "
        f"{statistics.median(r['update_applies'] for r in rows)}, max {max(applies)}"
    )


if __name__ == "__main__":
    main()
