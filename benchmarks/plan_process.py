"""The whole `surveyctl plan` as a user waits for it: a process, start to exit.

Serves the sandbox in its own process with latency L, creates N surveys of Q quotas through
one `surveyctl apply`, then times `surveyctl plan` (no changes) as a fresh process --repeat
times, as the README runs it, in two ways:
- "list": as it runs after an apply, which recorded each survey's mod_on: the plan reads the
  survey list and GETs no unchanged survey;
- "read each": the same plan once the state's mod_on values are removed (a state written
  before surveyctl kept them, or a service whose list carries none): one GET per survey.
The manifests come from the cache of files read before (surveyctl.manifests.cache, in a
folder of the benchmark's own, which the apply filled), as on the machine of a user who planned
them before; "list, no cache" is the list plan parsing every manifest (CI, or
SURVEYCTL_CACHE_DIR=off).
For each it prints each run, the median, the latency bound N x L / P and the ratio to it, the
requests one more plan sends (counted from its `--debug` log), by method, and in the median run
when the first and the last survey read were reported (its progress lines on stderr): the time
before the reads, theirs, and the time after them.

    python benchmarks/plan_process.py --surveys 200 1000 --quotas 12 --latency-ms 50 \
        --parallelism 10 --repeat 3

`--plan-args` passes more options to the timed plan (for example `--refresh=false`).
`--against DIR` times the same plans from another tree of surveyctl as well (a worktree of an
older commit: `PYTHONPATH=DIR`), run after one untimed plan of its own (which fills its cache
and compiles it) and then alternately with this tree's, so that a machine whose speed drifts
by the minute weighs on both alike; it prints both, and this tree's median over that one's.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import yaml
from plan_scale import survey  # the same benchmark surveys as the in-process plan benchmark
from processes import command, user_environment

from surveyctl.sandbox.process import served

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"
_REQUEST = re.compile(r"surveyctl\.http > (\w+) \S+?/buyers/v\d/([a-z_-]+)")


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


def run(root: Path, *arguments: str, cache: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        command(*arguments), cwd=root, env=_environment(root, cache), capture_output=True, text=True
    )


def _environment(root: Path, cache: str = "", tree: str = "") -> dict[str, str]:
    """The plan's environment: the key, and the benchmark's own cache folder (`off`: none);
    with `tree`, the surveyctl of that folder instead of this one."""
    folder = cache or str(root / "user-cache")
    extra = {KEY_VARIABLE: "sandbox-buyer-1", "SURVEYCTL_CACHE_DIR": folder}
    if tree:
        extra["PYTHONPATH"] = tree
    return user_environment(**extra)


def measure(n: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with served(root / "sandbox.db", latency_ms=args.latency_ms) as sandbox:
            project(root, sandbox.url, n, args.quotas)
            parallelism = ["--parallelism", str(args.parallelism)]
            created = run(root, "apply", "--auto-approve", *parallelism)
            if created.returncode != 0:
                raise SystemExit(f"apply failed: {created.stderr[-2000:]}")
            timed(root, n, args, "list")
            timed(root, n, args, "list, no cache", cache="off")
            forget_mod_on(root / ".surveyctl" / "state" / "bench.json")
            timed(root, n, args, "read each")


def timed(root: Path, n: int, args: argparse.Namespace, mode: str, cache: str = "") -> None:
    """Times --repeat no-op plans as processes and prints them with the requests of one."""
    plan = ["plan", "--parallelism", str(args.parallelism), *shlex.split(args.plan_args)]
    walls = []
    answers = []
    other: list[float] = []
    if args.against:
        timed_run(root, [*plan, "--detailed-exitcode"], cache, args.against)
    for _ in range(args.repeat):
        wall, first, last = timed_run(root, [*plan, "--detailed-exitcode"], cache)
        walls.append(wall)
        answers.append((first, last))
        if args.against:
            other.append(timed_run(root, [*plan, "--detailed-exitcode"], cache, args.against)[0])
    debug = run(root, "--debug", *plan, cache=cache)
    requests = collections.Counter(
        f"{m.group(1)} {m.group(2)}" for m in _REQUEST.finditer(debug.stderr)
    )
    ideal = n * args.latency_ms / 1000 / args.parallelism
    median = statistics.median(walls)
    runs = ", ".join(f"{wall:.2f}s" for wall in walls)
    print(
        f"N={n} x {args.quotas} quotas, L={args.latency_ms} ms, P={args.parallelism}, {mode}: "
        f"whole `surveyctl plan` {median:.2f}s (median of {runs}); N x L / P = {ideal:.2f}s; "
        f"ratio {median / ideal:.2f}"
    )
    if other:
        theirs = statistics.median(other)
        print(
            f"  {args.against}, alternately: {theirs:.2f}s (median of "
            f"{', '.join(f'{wall:.2f}s' for wall in other)}); ratio {theirs / ideal:.2f}; "
            f"this tree / that one: {median / theirs:.3f}"
        )
    total = sum(requests.values())
    print(f"  requests of one no-op plan: {total} {dict(sorted(requests.items()))}")
    first, last = answers[walls.index(median)] if median in walls else answers[0]
    if first is not None and last is not None:
        # The first read was sent about L before its answer was reported.
        sent = first - args.latency_ms / 1000
        print(
            f"  in the median run: first read sent at about {sent:.2f}s, last answer at "
            f"{last:.2f}s (the reads: {(last - sent) / ideal:.3f} x N x L / P), "
            f"exit at {median:.2f}s"
        )


def timed_run(
    root: Path, arguments: list[str], cache: str = "", tree: str = ""
) -> tuple[float, float | None, float | None]:
    """One plan as a process (of the surveyctl in `tree`, when given): its wall time, and when
    its first and last "read" progress lines (one per survey read, on stderr) arrived, in
    seconds from its start."""
    with tempfile.TemporaryFile("w+") as stdout:  # a file: a pipe left unread could fill
        started = time.perf_counter()
        process = subprocess.Popen(
            command(*arguments),
            cwd=root,
            env=_environment(root, cache, tree),
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = last = None
        tail: collections.deque[str] = collections.deque(maxlen=40)
        assert process.stderr is not None
        for line in process.stderr:  # stderr is line-buffered: each line as it is written
            if line.startswith("read "):
                last = time.perf_counter() - started
                first = last if first is None else first
            tail.append(line)
        code = process.wait()
        wall = time.perf_counter() - started
        stdout.seek(0)
        output = stdout.read()
    if code != 0:
        shown = (output + "".join(tail))[-2000:]
        raise SystemExit(f"the plan was not a no-op (exit {code}): {shown}")
    return wall, first, last


def forget_mod_on(state_file: Path) -> None:
    """Removes the mod_on of every survey from a file state, as a state written before
    surveyctl kept them: each plan then reads every survey."""
    state = json.loads(state_file.read_text())
    for record in state["resources"].values():
        record.pop("mod_on", None)
    state_file.write_text(json.dumps(state))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, nargs="+", default=[200])
    parser.add_argument("--quotas", type=int, default=12)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--parallelism", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plan-args", default="", help="more options for the timed plan")
    parser.add_argument(
        "--against", default="", help="another tree of surveyctl to time alternately with this"
    )
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    for n in args.surveys:
        measure(n, args)


if __name__ == "__main__":
    main()
