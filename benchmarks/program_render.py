"""Rendering the plan of a program of 1,000 members: text, markdown and JSON, CPU per render.

Builds plans in memory, as the planner makes them (no sandbox, no state), of a program of
M markets x W waves (default 10 x 100), and times `text.render`, `markdown.render` and
`json.render` of each:

- update: a template change to every member, one market's own price change on top, and the
  same drift on every tenth member;
- create: every member created (the first plan of the program), 12 quotas each;
- wave: one new wave's creates, one per market, beside 990 unchanged members;
- delete: every member deleted (a program of `prevent_destroy: false` removed, `--destroy`),
  each with the warning of a live survey's delete;
- retire: every member retired (the program's default `prevent_destroy`), each with its note.

It prints the least CPU time of --repeat renders (the figure a busy machine moves least).

    python benchmarks/program_render.py [--markets 10] [--waves 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

from surveyctl.reconcile.plan import FieldChange, Note, Plan, ResourceChange, Spend
from surveyctl.render import json as json_format
from surveyctl.render import markdown, text

LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "en_CA", "en_AU", "it_IT", "nl_NL", "ja_JP"]
LABELS = {
    "211": {"name": "Gender", "answers": {"111": "Male", "112": "Female"}},
    "212": {"name": "Age"},
}


def body(market: int, locale: str, wave: str) -> dict:
    completes = 1000 + 100 * market
    return {
        "survey_title": f"Tracker {locale[3:]} {wave}",
        "survey_category_code": 231,
        "survey_localization": locale,
        "completes_required": completes,
        "expected_ir": 40,
        "expected_loi": 12,
        "offer_price": round(2.5 + 0.1 * market, 2),
        "field_time": 14,
        "live_url": f"https://survey.example.com/s?m={locale}&w={wave}&tid=[%%transaction_id%%]",
        "qualifications": [
            {"qualification_code": 211, "condition_codes": ["111", "112"]},
            {"qualification_code": 212, "range_sets": [{"from": 18, "to": 99, "units": 311}]},
        ],
        "quotas": [
            {
                "buyer_quota_id": f"{gender}-{low}",
                "quota_title": f"{gender} {low}-{low + 9}",
                "required_count": completes // 12 + (market + n) % 3,
                "criteria": [
                    {"qualification_code": 211, "condition_codes": [code]},
                    {
                        "qualification_code": 212,
                        "range_sets": [{"from": low, "to": low + 9, "units": 311}],
                    },
                ],
            }
            for n, (gender, code, low) in enumerate(
                (g, c, age) for g, c in (("m", "111"), ("f", "112")) for age in range(18, 78, 10)
            )
        ],
    }


def waves(count: int) -> list[str]:
    return [f"{2026 + n // 12}-{n % 12 + 1:02d}" for n in range(count)]


def _plan(resources: list[ResourceChange]) -> Plan:
    plan = Plan("staging", "lineage", 1)
    plan.resources = resources
    plan.labels = {locale: LABELS for locale in LOCALES}
    return plan


def update_plan(markets: int, wave_ids: list[str]) -> Plan:
    resources = []
    for m, locale in enumerate(LOCALES[:markets]):
        for w, wave in enumerate(wave_ids):
            changes = [FieldChange("expected_loi", 12, 15)]
            if m == 1:
                changes.append(FieldChange("offer_price", 2.6, 2.9))
            drift = [FieldChange("expected_ir", 40, 30)] if w % 10 == 0 else []
            resources.append(
                ResourceChange(
                    "Survey",
                    f"tracker[{locale},{wave}]",
                    "update",
                    remote_id=10001 + len(resources),
                    changes=changes,
                    drift=drift,
                    spend=Spend(2500.0, 2500.0 + 300 * (m == 1)),
                )
            )
    return _plan(resources)


def create_plan(markets: int, wave_ids: list[str], unchanged: int = 0) -> Plan:
    resources = []
    for m, locale in enumerate(LOCALES[:markets]):
        for w, wave in enumerate(wave_ids):
            name = f"tracker[{locale},{wave}]"
            if w < unchanged:
                resources.append(ResourceChange("Survey", name, "no-op", remote_id=10001 + w))
                continue
            made = body(m, locale, wave)
            spend = Spend(None, made["completes_required"] * made["offer_price"])
            resources.append(ResourceChange("Survey", name, "create", body=made, spend=spend))
    return _plan(resources)


def leave_plan(markets: int, wave_ids: list[str], action: str) -> Plan:
    """Every member leaving: deleted ("delete") or retired and kept ("no-op"), each with the
    note the planner gives it."""
    severity, message = {
        "delete": ("warning", "deleting a live survey stops its fieldwork"),
        "no-op": ("note", "retired from program tracker: kept, never destroyed"),
    }[action]
    resources = [
        ResourceChange(
            "Survey",
            f"tracker[{locale},{wave}]",
            action,
            remote_id=10001 + m * len(wave_ids) + w,
            spend=Spend(2500.0, None if action == "delete" else 2500.0),
        )
        for m, locale in enumerate(LOCALES[:markets])
        for w, wave in enumerate(wave_ids)
    ]
    plan = _plan(resources)
    plan.notes = [Note(severity, r.address, message) for r in resources]
    return plan


def cpu(render, plan: Plan, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        render(plan)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markets", type=int, default=10)
    parser.add_argument("--waves", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    wave_ids = waves(args.waves)
    plans = {
        "update": update_plan(args.markets, wave_ids),
        "create": create_plan(args.markets, wave_ids),
        "wave": create_plan(args.markets, wave_ids, unchanged=args.waves - 1),
        "delete": leave_plan(args.markets, wave_ids, "delete"),
        "retire": leave_plan(args.markets, wave_ids, "no-op"),
    }
    renders = {
        "text": lambda plan: text.render(plan),
        "markdown": markdown.render,
        "json": lambda plan: json_format.render(plan),
    }
    print(f"{args.markets} markets x {args.waves} waves; least CPU of {args.repeat} renders")
    print(f"{'plan':<8}" + "".join(f"{name:>12}" for name in renders) + f"{'text lines':>12}")
    for label, plan in plans.items():
        times = [cpu(render, plan, args.repeat) for render in renders.values()]
        lines = text.render(plan).count("\n")
        print(f"{label:<8}" + "".join(f"{t:>11.3f}s" for t in times) + f"{lines:>12}")


if __name__ == "__main__":
    main()
