"""`surveyctl conformance`: checks, on a user's own account, the assumptions surveyctl makes
about the service (docs/api-assumptions.md), with one draft survey that is never launched and
always removed. See docs/conformance.md."""

from surveyctl.conformance.draft import ConformanceBusy, NotTheDraft, left_behind
from surveyctl.conformance.run import (
    LeftoverStuck,
    Report,
    check_locale,
    draft_left_error,
    journal_for,
    run_conformance,
)

__all__ = [
    "ConformanceBusy",
    "LeftoverStuck",
    "NotTheDraft",
    "Report",
    "check_locale",
    "draft_left_error",
    "journal_for",
    "left_behind",
    "run_conformance",
]
