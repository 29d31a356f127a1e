"""Fixtures of the safety tests: surveys in the sandbox, and projects pointed at a target."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from surveyctl.api import ApiClient
from surveyctl.ops.adjust_journal import account_id
from surveyctl.sandbox.process import served

from ..conftest import BUYER_1_KEY
from ..reconcile.conftest import title_tag

LIVE = 22

SURVEY_SPEC = {
    "survey_title": "Safety test",
    "survey_category_code": 231,
    "survey_localization": "en_US",
    "completes_required": 200,
    "expected_ir": 90,
    "expected_loi": 10,
    "offer_price": 2.5,
    "field_time": 10,
    "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
}


def survey_title(name: str) -> str:
    """The title `survey_manifest` gives survey `name` in the running test."""
    return f"Safety test {name} {title_tag()}"


def survey_manifest(name: str, **spec_overrides) -> dict:
    """A small valid en_US survey manifest, titled after its name and the test (the sandbox
    account is shared, and a survey of the same title and locale is a twin to adopt)."""
    title = {"survey_title": survey_title(name)}
    return {"kind": "Survey", "name": name, "spec": {**SURVEY_SPEC, **title, **spec_overrides}}


def write_manifest(project: Path, manifest: dict) -> Path:
    folder = project / "manifests"
    folder.mkdir(exist_ok=True)
    path = folder / f"{manifest['name']}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path


def configure(project: Path, url: str, name: str = "local", **settings) -> None:
    """Points the project's only environment, `name`, at `url` with extra settings
    (protected, guards); the key variable is the one the `project` fixture sets."""
    environment = {"host": url, "api_key_env": "SURVEYCTL_LOCAL_KEY", **settings}
    config = {"environments": {name: environment}, "default_environment": name}
    (project / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.fixture
def prod(project, sandbox):
    """The project's only environment is `prod`, protected, on the test sandbox."""
    configure(project, sandbox.url, name="prod", protected=True)
    return project


@pytest.fixture
def guarded(project, sandbox):
    """`guarded(**limits)` sets the guards of the project's `local` environment."""

    def set_guards(**limits):
        configure(project, sandbox.url, guards=limits)

    return set_guards


@pytest.fixture
def live_survey(api):
    """Creates a survey of buyer 1, sets it live, returns its id."""

    def make(**overrides) -> int:
        survey_id = api.create_survey({**SURVEY_SPEC, **overrides})["ps_survey_id"]
        api.set_survey_status(survey_id, LIVE)
        return survey_id

    return make


@pytest.fixture
def completes(api, live_survey, project):
    """A live survey with simulated traffic and a CSV file naming three of its completes."""
    survey_id = live_survey()
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 12, "bad_hash_share": 0})
    items, _ = api.get_transactions_page(survey_id, status=[21])
    ids = [item["Transaction ID"] for item in items[:3]]
    lines = ["transaction_id,survey_id"] + [f"{t},{survey_id}" for t in ids]
    (project / "ids.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return survey_id, ids


# The adjustment journal of the buyer the tests act for (`sandbox-buyer-1`), in the project.
JOURNAL_FOLDER = (".surveyctl", "adjustments")
JOURNAL = (*JOURNAL_FOLDER, f"{account_id(BUYER_1_KEY)}.jsonl")


def journal_events(project: Path) -> list[dict]:
    """The events of the project's adjustment journal, in the order they were written."""
    return [json.loads(line) for line in project.joinpath(*JOURNAL).read_text().splitlines()]


def adjustment_count(sandbox) -> int:
    """How many adjustments the sandbox has accepted, read from its own store."""
    with sandbox.store.read() as conn:
        return conn.execute("SELECT COUNT(*) FROM adjustments").fetchone()[0]


@pytest.fixture
def served_sandbox(tmp_path):
    """`served_sandbox(latency_ms)`: `surveyctl sandbox serve` in a process of its own (as a
    marketplace is), on a free port; returns its URL. Stopped after the test."""
    with ExitStack() as stack:
        count = iter(range(1_000))

        def serve(latency_ms: int = 0) -> str:
            db = tmp_path / f"served-{next(count)}.db"
            return stack.enter_context(served(db, latency_ms=latency_ms)).url

        yield serve


@dataclass
class SlowMarket:
    """A marketplace in a process of its own whose every answer takes SLOW_MS, with a live
    survey of this test whose three completes are named in `ids.csv` (with their survey) and
    in `bare.csv` (ids only), and the same data served at once by `fast` for reading back."""

    slow: str
    fast: str
    survey_id: int
    ids: list[str]
    db: Path

    def adjustments(self) -> int:
        """How many adjustments of this test's survey the marketplace has accepted, read from
        its own store."""
        with sqlite3.connect(self.db) as conn:
            rows = conn.execute("SELECT summary FROM adjustments").fetchall()
        return sum(
            any(
                item["surveyId"] == self.survey_id
                for item in json.loads(summary)["summaryPerSurvey"]
            )
            for (summary,) in rows
        )


SLOW_MS = 1000


@pytest.fixture(scope="module")
def slow_servers(tmp_path_factory):
    """One marketplace database served twice, each in a process of its own: at once, and
    answering after SLOW_MS; (fast URL, slow URL, database)."""
    db = tmp_path_factory.mktemp("slow-market") / "market.db"
    with served(db) as fast, served(db, latency_ms=SLOW_MS) as slow:
        yield fast.url, slow.url, db


@pytest.fixture
def slow_market(slow_servers, project) -> SlowMarket:
    """The project's only environment, `local`, aimed at a SlowMarket."""
    fast, slow, db = slow_servers
    api = ApiClient(fast, "sandbox-buyer-1")
    survey_id = api.create_survey(SURVEY_SPEC)["ps_survey_id"]
    api.set_survey_status(survey_id, LIVE)
    api.simulate_traffic(survey_id, {"respondents": 30, "seed": 12, "bad_hash_share": 0})
    items, _ = api.get_transactions_page(survey_id, status=[21])
    ids = [item["Transaction ID"] for item in items[:3]]
    lines = ["transaction_id,survey_id"] + [f"{t},{survey_id}" for t in ids]
    (project / "ids.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (project / "bare.csv").write_text("".join(f"{t}\n" for t in ids), encoding="utf-8")
    configure(project, slow)
    return SlowMarket(slow, fast, survey_id, ids, db)


@pytest.fixture
def small_mount(tmp_path):
    """A 256 KB tmpfs mounted for the test (needs the right to mount: root in CI's container)."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a small file system needs root")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def fill_file_system(folder: Path) -> None:
    """Writes into `folder` until its file system is full."""
    descriptor = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(descriptor)
