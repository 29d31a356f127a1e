"""Fixtures of the review tests: manifests in a project folder, and names from the catalogue.

Answer codes other than gender's (211: 111 male, 112 female) are taken from the catalogue the
sandbox serves, through the client, so the tests do not depend on how it numbers them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from surveyctl.catalog import Attribute, Catalog

EMPLOYMENT = 215


def survey_manifest(name: str, **spec_overrides) -> dict:
    """A small valid en_US survey with a gender qualification and two gender quotas."""
    spec = {
        "survey_title": f"Survey {name}",
        "survey_category_code": 231,
        "survey_localization": "en_US",
        "completes_required": 200,
        "expected_ir": 50,
        "expected_loi": 10,
        "offer_price": 2.5,
        "field_time": 10,
        "live_url": "https://survey.example.com/s?tid=[%%transaction_id%%]",
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


class Manifests:
    """Writes manifests into `<project>/manifests/`, one file per resource."""

    def __init__(self, root: Path):
        self.folder = root / "manifests"
        self.folder.mkdir(exist_ok=True)

    def write(self, manifest: dict) -> Path:
        path = self.folder / f"{manifest['name']}.yaml"
        path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
        return path


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


@pytest.fixture
def attribute(api):
    """`attribute(code, locale="en_US")`: the catalogue's entry, as the sandbox serves it."""
    catalog = Catalog(lambda: api, "review-tests", None)

    def lookup(code: int, locale: str = "en_US") -> Attribute:
        return catalog.locale(locale).by_code[code]

    return lookup


@pytest.fixture
def unique() -> str:
    """A suffix for names that are global in the marketplace (exclusion group refs)."""
    import uuid

    return uuid.uuid4().hex[:8]
