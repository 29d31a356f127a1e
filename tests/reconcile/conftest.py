"""Fixtures for plan/apply tests: manifests written into the project folder."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from surveyctl.state import FileStateStore

from .proxies import RefusingProxy


def title_tag() -> str:
    """A short tag of the running test (the same in its setup and its body). Tests share one
    sandbox account, and a plan takes a survey of another test with the same title and locale
    for the one its manifest describes (reconcile/identity.py): titles carry the tag."""
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    return hashlib.sha256(node.encode()).hexdigest()[:6]


def survey_title(name: str) -> str:
    """The title `survey_manifest` gives survey `name` in the running test."""
    return f"Survey {name} {title_tag()}"


def survey_manifest(name: str, **spec_overrides) -> dict:
    """A small valid en_US survey with a gender qualification and two quotas, titled
    `survey_title(name)`."""
    spec = {
        "survey_title": survey_title(name),
        "survey_category_code": 231,
        "survey_localization": "en_US",
        "completes_required": 200,
        "expected_ir": 50,
        "expected_loi": 10,
        "offer_price": 2.5,
        "field_time": 10,
        "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
        "test_url": "https://survey.example.com/t?tid=[%%transaction_id%%]",
        "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
        "quotas": [
            {
                "buyer_quota_id": "male",
                "required_count": 100,
                "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
            },
            {
                "buyer_quota_id": "female",
                "required_count": 100,
                "criteria": [{"qualification_code": 211, "condition_codes": ["112"]}],
            },
        ],
    }
    spec.update(spec_overrides)
    return {"kind": "Survey", "name": name, "spec": spec}


def program_manifest(
    name: str,
    markets: list[str],
    title: str = "Tracker {country} {wave}",
    waves: tuple[str, ...] = ("w1", "w2"),
) -> dict:
    """A small valid SurveyProgram `name` of `markets` x `waves`, its template titled `title`
    and the running test's tag (see `title_tag`)."""
    return {
        "kind": "SurveyProgram",
        "name": name,
        "spec": {
            "template": {
                "survey_title": f"{title} {title_tag()}",
                "survey_category_code": 231,
                "completes_required": 200,
                "expected_ir": 50,
                "expected_loi": 10,
                "offer_price": 2.5,
                "field_time": 10,
                "live_url": "https://survey.example.com/s?w={wave}&tid=[%%transaction_id%%]",
                "qualifications": [{"qualification_code": 211, "condition_codes": ["111"]}],
            },
            "markets": {market: None for market in markets},
            "waves": list(waves),
        },
    }


class Manifests:
    """Writes manifests into `<project>/manifests/`, one file per resource."""

    def __init__(self, root: Path):
        self.folder = root / "manifests"
        self.folder.mkdir(exist_ok=True)

    def write(self, manifest: dict) -> Path:
        path = self.folder / f"{manifest['name']}.yaml"
        path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
        return path

    def remove(self, name: str) -> None:
        (self.folder / f"{name}.yaml").unlink()


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def write_surveys(manifests: Manifests, names: tuple[str, ...], title_suffix: str) -> None:
    """Writes the `survey_manifest` of each of `names`, its title ending in `title_suffix`:
    a new suffix is an update of every one of them."""
    for name in names:
        manifests.write(survey_manifest(name, survey_title=f"{survey_title(name)} {title_suffix}"))


def surveys_applied(
    run_cli, manifests: Manifests, project: Path, names: tuple[str, ...], title_suffix: str
) -> dict[str, int]:
    """`write_surveys` then `apply`: the ids the state records for them."""
    write_surveys(manifests, names, title_suffix)
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    return recorded_ids(project, names)


def recorded_ids(project: Path, names: tuple[str, ...]) -> dict[str, int]:
    """The marketplace ids the project's local state records for the surveys `names`."""
    state = FileStateStore(project / ".surveyctl" / "state" / "local.json").load()
    return {name: state.survey(name).ps_survey_id for name in names}


@pytest.fixture
def refusing_proxy(sandbox, project):
    """A `RefusingProxy` in front of the session's sandbox, the project pointed at it."""
    with pointed_at(project, RefusingProxy(sandbox.url)) as running:
        yield running


@pytest.fixture
def unique() -> str:
    """A suffix for names that are global in the marketplace (exclusion group refs)."""
    return uuid.uuid4().hex[:8]


def point_project_at(project: Path, url: str, env_var: str = "SURVEYCTL_LOCAL_KEY") -> None:
    """Makes the project's `local` environment the marketplace at `url`, key in `env_var`."""
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  local: {{host: '{url}', api_key_env: {env_var}}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )


@contextmanager
def pointed_at(project: Path, server) -> Iterator:
    """The project's `local` environment aimed at `server` (a proxy or a stand-in for the
    marketplace) for the block, and `server` stopped after it."""
    try:
        point_project_at(project, server.url)
        yield server
    finally:
        server.stop()


def group_manifest(ref: str, *surveys: str, name: str = "trackers") -> dict:
    """An ExclusionGroup manifest of `surveys` (Survey manifest names), 30 days apart."""
    return {
        "kind": "ExclusionGroup",
        "name": name,
        "spec": {
            "buyer_surveygroup_ref": ref,
            "name": "Trackers",
            "exclusion_period": 30,
            "surveys": list(surveys),
        },
    }


@pytest.fixture
def own_market(project, start_sandbox):
    """A marketplace of the test's own, pointed at by the project: the account holds only the
    surveys the test makes."""
    from surveyctl.api import ApiClient

    sandbox = start_sandbox()
    point_project_at(project, sandbox.url)
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    yield client
    client.close()
