"""Fixtures of the review tests: manifests in a project folder, and names from the catalogue.

Answer codes other than gender's (211: 111 male, 112 female) are taken from the catalogue the
sandbox serves, through the client, so the tests do not depend on how it numbers them.
"""

from __future__ import annotations

import pytest

from surveyctl.catalog import Attribute, Catalog

from ..reconcile.conftest import Manifests, manifests, survey_manifest, survey_title  # noqa: F401

EMPLOYMENT = 215


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
