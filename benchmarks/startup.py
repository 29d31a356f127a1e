"""How long the command line takes to start: `surveyctl --version` and `surveyctl --help`.

Runs each command in a fresh process several times and prints the median wall time, then the
import time of one more run under `python -X importtime` by package (the heaviest first),
and which of the known heavy packages the command imported at all.

    python benchmarks/startup.py --runs 9
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from processes import command, user_environment

COMMANDS = (("--version",), ("--help",), ("plan", "--help"), ("apply", "--help"))
# Packages a start-up has no use for: each costs tens of milliseconds to import.
HEAVY = (
    "requests",
    "urllib3",
    "jsonschema",
    "deepdiff",
    "rich",
    "flask",
    "werkzeug",
    "yaml",
    "surveyctl.state",
    "surveyctl.api",
    "surveyctl.reconcile",
    "surveyctl.manifests",
    "surveyctl.sandbox",
)


def wall_times(arguments: tuple[str, ...], runs: int) -> list[float]:
    """Wall times of `runs` starts, after one that leaves Python's compiled modules behind as
    on a user's machine (a session that sets PYTHONDONTWRITEBYTECODE would compile surveyctl's
    modules again in every run)."""
    environment = user_environment()
    line = command(*arguments)
    subprocess.run(line, check=True, stdout=subprocess.DEVNULL, env=environment)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(line, check=True, stdout=subprocess.DEVNULL, env=environment)
        times.append(time.perf_counter() - started)
    return times


def imports(arguments: tuple[str, ...]) -> list[tuple[str, int]]:
    """(module, own microseconds) of every import, from -X importtime."""
    code = "import sys; from surveyctl.cli.main import main; sys.argv[0] = 'surveyctl'; main()"
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *arguments],
        capture_output=True,
        text=True,
    )
    found = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, _cumulative, name = line.removeprefix("import time:").split("|")
        found.append((name.strip(), int(own)))
    return found


def package(module: str) -> str:
    """The package an import is charged to: surveyctl's by sub-package, others by top name."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "surveyctl" else parts[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--top", type=int, default=8, help="heaviest imports to list")
    args = parser.parse_args()
    floor = statistics.median(_python_floor() for _ in range(args.runs))
    print(f"python -c pass: median {floor:.3f}s (the interpreter's own start-up)")
    for arguments in COMMANDS:
        times = wall_times(arguments, args.runs)
        label = " ".join(arguments)
        print(
            f"surveyctl {label}: median {statistics.median(times):.3f}s over {args.runs} runs "
            f"(min {min(times):.3f}s, max {max(times):.3f}s)"
        )
        found = imports(arguments)
        by_package: dict[str, int] = {}
        for name, own in found:
            by_package[package(name)] = by_package.get(package(name), 0) + own
        total = sum(by_package.values())
        print(
            f"  imports (one run under -X importtime): {len(found)} modules, "
            f"{total / 1000:.0f} ms; heaviest packages:"
        )
        for name, own in sorted(by_package.items(), key=lambda item: -item[1])[: args.top]:
            print(f"    {own / 1000:6.1f} ms  {name}")
        names = {name for name, _own in found}
        heavy = [h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in names)]
        print(f"  heavy packages imported: {', '.join(heavy) if heavy else 'none'}")


def _python_floor() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
