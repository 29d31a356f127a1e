"""How long `surveyctl validate` takes on 1,000 surveys of 24 quotas each.

Writes the surveys (one file each, gender x age x US region quotas written out in full) to a
temporary folder, then times: loading and checking offline; the same against the attribute
catalogue of a local sandbox, first with an empty cache (fetching en_US) and then with a warm
one; the same offline through the cache of files read before (surveyctl.manifests.cache),
empty and then filled; and the `surveyctl validate --offline` command end to end in a fresh
process, without the cache, with an empty one (it fills it) and with a filled one. Each line
shows wall time, CPU time and CPU time per survey (the figure to compare on a busy machine).
Last, the time and peak memory of refusing hostile YAML: a manifest and a surveyctl.yaml of
nested merge keys (`<<: [*m, *m]`, 30 levels) that PyYAML alone would expand to a billion
values.

    python benchmarks/validate_scale.py [--surveys 1000]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.config import load_config
from surveyctl.environments import SANDBOX_KEY
from surveyctl.errors import ConfigError
from surveyctl.manifests import load_manifests
from surveyctl.manifests.cache import ParsedCache
from surveyctl.sandbox.server import SandboxOptions, start

GENDERS = {"m": "111", "f": "112"}
AGES = {"18-34": (18, 34), "35-54": (35, 54), "55-99": (55, 99)}
REGIONS = {"ne": "111", "mw": "112", "s": "113", "w": "114"}


def survey_text(index: int) -> str:
    lines = [
        "kind: Survey",
        f"name: tracker-{index:04d}",
        "spec:",
        f"  survey_title: Tracker {index}",
        "  survey_category_code: 231",
        "  survey_localization: en_US",
        "  completes_required: 2400",
        "  expected_ir: 40",
        "  expected_loi: 12",
        "  offer_price: 2.5",
        "  field_time: 14",
        f"  live_url: https://survey.example.com/s/{index}?tid=[%%transaction_id%%]",
        "  qualifications:",
        '    - {qualification_code: 211, condition_codes: ["111", "112"]}',
        "    - {qualification_code: 212, range_sets: [{from: 18, to: 99, units: 311}]}",
        "  quotas:",
    ]
    for gender, g_code in GENDERS.items():
        for age, (low, high) in AGES.items():
            for region, r_code in REGIONS.items():
                lines += [
                    f"    - buyer_quota_id: {gender}-{age}-{region}",
                    "      required_count: 100",
                    "      criteria:",
                    f'        - {{qualification_code: 211, condition_codes: ["{g_code}"]}}',
                    f"        - {{qualification_code: 212, range_sets: [{{from: {low}, "
                    f"to: {high}, units: 311}}]}}",
                    f'        - {{qualification_code: 226, condition_codes: ["{r_code}"]}}',
                ]
    return "\n".join(lines) + "\n"


def merge_bomb(prefix: str, levels: int = 30) -> str:
    """2**levels copies of one mapping, merged into `spec:` (or the top level) in < 1 KB."""
    lines = [prefix, "x-m0: &m0 {a: 1, b: 2}"] if prefix else ["x-m0: &m0 {a: 1, b: 2}"]
    lines += [f"x-m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, levels)]
    lines.append(f"spec: {{<<: [*m{levels - 1}, *m{levels - 1}]}}")
    return "\n".join(lines) + "\n"


def refused(label: str, action) -> None:
    """Times `action` (which must refuse its input) and the peak memory it allocates."""
    tracemalloc.start()
    start = time.perf_counter()
    message = action()
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    print(f"{label:<48} {elapsed * 1000:7.1f} ms wall {peak:7.1f} MB peak   {message}")


def hostile(folder: Path) -> None:
    manifest = folder / "bomb.yaml"
    manifest.write_text(merge_bomb("kind: Survey\nname: bomb"))
    config = folder / "surveyctl.yaml"
    config.write_text(merge_bomb("").replace("spec:", "environments:"))

    def validate() -> str:
        _, diagnostics = load_manifests([manifest])
        assert diagnostics.has_errors
        return str(diagnostics.sorted()[0])[:60] + "..."

    def configure() -> str:
        try:
            load_config(config)
        except ConfigError as exc:
            return str(exc)[:60] + "..."
        raise AssertionError("the bomb was accepted")

    refused(f"merge-key bomb manifest ({manifest.stat().st_size} bytes)", validate)
    refused(f"merge-key bomb surveyctl.yaml ({config.stat().st_size} bytes)", configure)


def timed(label: str, action, count: int):
    """Runs `action` and prints wall time, CPU time (of this process and of the children it
    waited for) and CPU per survey: on a busy machine, CPU time is the steadier figure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, cpu = time.perf_counter(), time.process_time()
    result = action()
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"{label:<48} {elapsed:7.2f} s wall {used:7.2f} s cpu "
        f"{used / count * 1000:7.2f} ms cpu per survey"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surveys", type=int, default=1000)
    count = parser.parse_args().surveys
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "manifests"
        folder.mkdir()
        for index in range(count):
            (folder / f"tracker-{index:04d}.yaml").write_text(survey_text(index))
        size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        print(f"{count} surveys x 24 quotas in {count} files ({size:.1f} MB)")

        def check(catalog=None, cache=None):
            state, diagnostics = load_manifests([folder], catalog, cache)
            assert not diagnostics.has_errors, diagnostics.sorted()[:3]
            assert len(state.surveys) == count
            return state

        timed("load + schema + rules, offline", check, count)
        parsed = ParsedCache.at(Path(temp) / "parsed")
        timed("offline, through an empty cache (fills it)", lambda: check(cache=parsed), count)
        timed("offline, through the filled cache", lambda: check(cache=parsed), count)
        sandbox = start(SandboxOptions(db_path=Path(temp) / "sandbox.db"))
        client = ApiClient(sandbox.url, SANDBOX_KEY)
        try:
            cache = Path(temp) / "cache"
            timed(
                "with catalogue, cold cache (fetches en_US)",
                lambda: check(Catalog(lambda: client, "local", cache)),
                count,
            )
            timed(
                "with catalogue, warm cache",
                lambda: check(Catalog(lambda: client, "local", cache)),
                count,
            )
        finally:
            client.close()
            sandbox.stop()
        command = [sys.executable, "-m", "surveyctl", "validate", "--offline", str(folder)]
        for label, cache_folder in [
            ("no cache", "off"),
            ("empty cache", str(Path(temp) / "user-cache")),
            ("filled cache", str(Path(temp) / "user-cache")),
        ]:
            environment = {**os.environ, "SURVEYCTL_CACHE_DIR": cache_folder}

            def validate(environment=environment):
                subprocess.run(command, check=True, capture_output=True, env=environment)

            timed(f"`surveyctl validate --offline` ({label})", validate, count)
        hostile(Path(temp))


if __name__ == "__main__":
    main()
