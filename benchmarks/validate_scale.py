"""How long `surveyctl validate` takes on 1,000 surveys of 24 quotas each.

Writes the surveys (one file each, gender x age x US region quotas written out in full) to a
temporary folder, then times: loading and checking offline; the same against the attribute
catalogue of a local sandbox, first with an empty cache (fetching en_US) and then with a warm
one; and the `surveyctl validate --offline` command end to end in a fresh process.

    python benchmarks/validate_scale.py [--surveys 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.config import SANDBOX_KEY
from surveyctl.manifests import load_manifests
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


def timed(label: str, action):
    start, cpu = time.perf_counter(), time.process_time()
    result = action()
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    # CPU time of this process (not of a child process) shows the cost on a busy machine.
    print(f"{label:<48} {elapsed:7.2f} s wall {used:7.2f} s cpu")
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

        def check(catalog=None):
            state, diagnostics = load_manifests([folder], catalog)
            assert not diagnostics.has_errors, diagnostics.sorted()[:3]
            assert len(state.surveys) == count
            return state

        timed("load + schema + rules, offline", check)
        sandbox = start(SandboxOptions(db_path=Path(temp) / "sandbox.db"))
        client = ApiClient(sandbox.url, SANDBOX_KEY)
        try:
            cache = Path(temp) / "cache"
            timed(
                "with catalogue, cold cache (fetches en_US)",
                lambda: check(Catalog(lambda: client, "local", cache)),
            )
            timed(
                "with catalogue, warm cache",
                lambda: check(Catalog(lambda: client, "local", cache)),
            )
        finally:
            client.close()
            sandbox.stop()
        command = [sys.executable, "-m", "surveyctl", "validate", "--offline", str(folder)]
        timed(
            "`surveyctl validate --offline` (new process)",
            lambda: subprocess.run(command, check=True, capture_output=True),
        )


if __name__ == "__main__":
    main()
