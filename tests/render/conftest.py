"""Fixtures of the render tests: manifests in a project folder, and plans made by hand."""

from __future__ import annotations

from ..reconcile.conftest import Manifests, manifests, survey_manifest  # noqa: F401
