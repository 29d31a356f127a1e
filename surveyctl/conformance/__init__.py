"""`surveyctl conformance`: checks, on a user's own account, the assumptions surveyctl makes
about the service (docs/api-assumptions.md), with one draft survey that is never launched and
always removed. See docs/conformance.md."""

from surveyctl.conformance.run import Report, check_locale, journal_for, run_conformance

__all__ = ["Report", "check_locale", "journal_for", "run_conformance"]
