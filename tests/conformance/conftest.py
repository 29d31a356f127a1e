"""Helpers of the conformance tests."""

from __future__ import annotations

from surveyctl.api import ApiClient
from surveyctl.conformance.draft import TITLE_PREFIX

KEY = "sandbox-buyer-1"


def drafts_left(url: str) -> list[dict]:
    """The conformance drafts of buyer 1 in the list of every status."""
    with ApiClient(url, KEY, retries=0) as client:
        every = client.list_surveys(targeting=False)
    return [s for s in every if str(s.get("survey_title", "")).startswith(TITLE_PREFIX)]
