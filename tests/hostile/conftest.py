"""Fixtures for hostile-input tests: manifests in the project folder and a project pointed at a
sandbox of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..reconcile.conftest import (  # noqa: F401  (re-exported)
    Manifests,
    group_manifest,
    own_market,
    point_project_at,
    pointed_at,
    recorded_ids,
    refusing_proxy,
    survey_manifest,
    survey_title,
    surveys_applied,
    unique,
    write_surveys,
)


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def quotas_of(counts: dict[str, int]) -> list[dict]:
    """The quotas of `survey_manifest` (male and female, by gender) with these required
    counts, in this order."""
    codes = {"male": "111", "female": "112"}
    return [
        {
            "buyer_quota_id": quota,
            "required_count": count,
            "criteria": [{"qualification_code": 211, "condition_codes": [codes[quota]]}],
        }
        for quota, count in counts.items()
    ]
