"""A program of M markets x W waves against the same M x W surveys written one file each.

Writes a SurveyProgram (a template with a 12-cell gender x age generator, each market its own
completes, price and shares) and, beside it, the separate Survey manifests a team would write
without programs: one file per market and wave with the same fields and the same generator.
For each form it times, in this process: validation against a warm attribute catalogue, and a
no-op plan (manifests read, state, live reads, planning) after the surveys were applied to a
local sandbox in its own process; it prints the CPU per survey (the figure that holds on a
busy machine) and the HTTP requests of the plan by kind, which must be the same.

The sandbox knows 6 locales, so the default is 6 markets x 60 waves (360 surveys); against a
service with more, `--markets 15 --waves 24` is the same count.

    python benchmarks/programs_scale.py [--markets 6] [--waves 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import yaml
from plan_scale import serve_sandbox

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.config import Config, Environment
from surveyctl.manifests import load_manifests
from surveyctl.reconcile.apply_run import apply_run
from surveyctl.reconcile.plan_run import plan_run
from surveyctl.reconcile.run import ApplyHooks, RunOptions, Workspace
from surveyctl.state import FileStateStore

KEY_VARIABLE = "SURVEYCTL_BENCH_KEY"
LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "en_CA"]
AGES = [(18, 24), (25, 34), (35, 44), (45, 54), (55, 64), (65, 99)]


def template() -> dict:
    return {
        "survey_title": "Tracker {country} {wave}",
        "survey_category_code": 231,
        "completes_required": 1200,
        "expected_ir": 40,
        "expected_loi": 12,
        "offer_price": 2.5,
        "field_time": 14,
        "live_url": "https://survey.example.com/s?m={locale}&w={wave}&tid=[%%transaction_id%%]",
        "qualifications": [
            {"qualification_code": 211, "condition_codes": ["111", "112"]},
            {"qualification_code": 212, "range_sets": [{"from": 18, "to": 99, "units": 311}]},
        ],
    }


def market(index: int) -> dict:
    """What differs per market: completes, price and the generator's shares."""
    male = 0.46 + 0.01 * index
    ages = {
        f"{low}-{high}": {
            "range_sets": [{"from": low, "to": high, "units": 311}],
            "share": round((1 + ((index + n) % 3)) / 12, 4),
        }
        for n, (low, high) in enumerate(AGES)
    }
    return {
        "completes_required": 1000 + 100 * index,
        "offer_price": round(2.5 + 0.1 * index, 2),
        "quotas": [
            {
                "generate": {
                    "id": "{gender}-{age}",
                    "interlock": {
                        "gender": {
                            "qualification_code": 211,
                            "cells": {
                                "m": {"condition_codes": ["111"], "share": round(male, 2)},
                                "f": {"condition_codes": ["112"], "share": round(1 - male, 2)},
                            },
                        },
                        "age": {"qualification_code": 212, "cells": ages},
                    },
                }
            }
        ],
    }


def waves(count: int) -> list[str]:
    return [f"{2026 + n // 12}-{n % 12 + 1:02d}" for n in range(count)]


def program(markets: list[str], wave_ids: list[str]) -> dict:
    return {
        "kind": "SurveyProgram",
        "name": "tracker",
        "spec": {
            "template": template(),
            "markets": {locale: {"spec": market(i)} for i, locale in enumerate(markets)},
            "waves": wave_ids,
        },
    }


def separate(markets: list[str], wave_ids: list[str]) -> list[dict]:
    """The same surveys as separate Survey manifests, as written without programs."""
    out = []
    for index, locale in enumerate(markets):
        for wave in wave_ids:
            spec = {**template(), **market(index), "survey_localization": locale}
            values = {"country": locale[3:], "wave": wave, "locale": locale}
            spec["survey_title"] = spec["survey_title"].format(**values)
            spec["live_url"] = (
                f"https://survey.example.com/s?m={locale}&w={wave}&tid=[%%transaction_id%%]"
            )
            name = f"tracker-{locale.lower().replace('_', '-')}-{wave}"
            out.append({"kind": "Survey", "name": name, "spec": spec})
    return out


def measure(label: str, folder: Path, url: str, count: int, repeat: int) -> dict:
    """Validation and no-op plan figures of the manifests in `folder` (applied first)."""
    root = folder.parent
    os.environ[KEY_VARIABLE] = "sandbox-buyer-1"
    config = Config(root=root)
    environment = Environment(name="bench", host=url, api_key_env=KEY_VARIABLE)
    store = FileStateStore(root / f"{label}-state.json", environment.name)
    options = RunOptions(targets=(folder,), parallelism=10, auto_approve=True)

    def workspace(client: ApiClient) -> Workspace:
        catalog = Catalog(lambda: client, environment.name, root / "cache")
        return Workspace(config, environment, store, lambda: client, catalog)

    client = ApiClient(url, "sandbox-buyer-1", pool_size=10)
    catalog = Catalog(lambda: client, environment.name, root / "cache")
    load_manifests([folder], catalog)  # warms the catalogue cache
    validations = []
    for _ in range(repeat):
        cpu = time.process_time()
        state, diagnostics = load_manifests([folder], catalog)
        validations.append(time.process_time() - cpu)
        assert not diagnostics.has_errors, [str(d) for d in diagnostics if d.severity == "error"]
        assert len(state.surveys) == count
    applied = apply_run(
        workspace(ApiClient(url, "sandbox-buyer-1", pool_size=10)), options, ApplyHooks()
    )
    assert applied.result is not None and not applied.result.failed
    plans, requests = [], {}
    for _ in range(repeat):
        bench = ApiClient(url, "sandbox-buyer-1", pool_size=10)
        cpu = time.process_time()
        plan = plan_run(workspace(bench), options)
        plans.append(time.process_time() - cpu)
        assert plan.settled, "the no-op plan found changes"
        requests = dict(sorted(bench.request_counts.items()))
    figures = {
        "validate": statistics.median(validations) / count * 1000,
        "plan": statistics.median(plans) / count * 1000,
        "requests": requests,
    }
    print(
        f"{label}: validate {figures['validate']:.2f} ms CPU per survey; no-op plan (manifests "
        f"read, live reads, planning) {figures['plan']:.2f} ms CPU per survey; requests of the "
        f"plan {requests} (median of {repeat})"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markets", type=int, default=6)
    parser.add_argument("--waves", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    markets, wave_ids = LOCALES[: args.markets], waves(args.waves)
    count = len(markets) * len(wave_ids)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # A sandbox per form: each holds only its own surveys, as two accounts would.
        server, url = serve_sandbox(root / "program.db", 0)
        other, other_url = serve_sandbox(root / "separate.db", 0)
        try:
            one = root / "program" / "manifests"
            one.mkdir(parents=True)
            (one / "tracker.yaml").write_text(yaml.safe_dump(program(markets, wave_ids)))
            many = root / "separate" / "manifests"
            many.mkdir(parents=True)
            for manifest in separate(markets, wave_ids):
                (many / f"{manifest['name']}.yaml").write_text(yaml.safe_dump(manifest))
            print(
                f"{len(markets)} markets x {len(wave_ids)} waves = {count} surveys of 12 "
                "quotas: one program file against one file per survey"
            )
            programmed = measure("program", one, url, count, args.repeat)
            written = measure("separate", many, other_url, count, args.repeat)
            same = programmed["requests"] == written["requests"]
            print(
                f"requests the same: {same}; CPU per survey program / separate: validate "
                f"{programmed['validate'] / written['validate']:.2f}, no-op plan "
                f"{programmed['plan'] / written['plan']:.2f}"
            )
        finally:
            server.kill()
            other.kill()


if __name__ == "__main__":
    main()
