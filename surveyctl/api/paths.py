"""Every path of the marketplace API, in one place.

Each function returns a `Path` (version, path, name); the client joins it to
`{host}/buyers/v2` or `{host}/buyers/v3` and counts requests by method and name. Path
parameters are percent-encoded here, so a buyer_quota_id such as `a/b` cannot escape its
segment; one that is empty, `.` or `..` is refused (`UnaddressableId`), since no encoding keeps
it a segment: `/surveys/5/quotas/..` is sent as `/surveys/5/`, the survey's own path.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import quote

from surveyctl.errors import SurveyctlError
from surveyctl.fields import UNADDRESSABLE

V2 = "v2"
V3 = "v3"
# Sandbox-only routes under {host}/sandbox: not part of the marketplace API.
SANDBOX = "sandbox"


class Path(NamedTuple):
    """A path under one version root, with the name of the operation it serves."""

    version: str
    path: str
    name: str


class UnaddressableId(SurveyctlError):
    """An id that cannot be one segment of a URL path; nothing is sent."""


def _segment(value: object) -> str:
    text = str(value)
    if text in UNADDRESSABLE:
        raise UnaddressableId(
            f"{text!r} cannot be sent as an id in a URL path (it would name the resource "
            "above it); nothing was sent"
        )
    return quote(text, safe="")


def surveys() -> Path:
    """POST create (4.1), GET list of the buyer's surveys with filters (public facts)."""
    return Path(V2, "/surveys", "surveys")


def survey(survey_id: int) -> Path:
    """PUT overwrite (4.2), GET one, PATCH with a JSON Patch list, DELETE (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}", "survey")


def survey_performance(survey_id: int) -> Path:
    """GET a survey's fieldwork performance (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}/performance", "survey_performance")


def survey_status(survey_id: int) -> Path:
    """GET the survey's status, PUT {"ps_survey_status": N} (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}/status", "survey_status")


def quotas(survey_id: int) -> Path:
    """POST add one quota to a survey (spec 4.11), GET the survey's quotas (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}/quotas", "quotas")


def quota(survey_id: int, buyer_quota_id: str) -> Path:
    """GET one quota, PUT it (4.3), PATCH it with a JSON Patch list, DELETE it; the path carries
    the buyer_quota_id (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}/quotas/{_segment(buyer_quota_id)}", "quota")


def quota_performance(survey_id: int) -> Path:
    """GET completes per quota (public facts)."""
    return Path(V2, f"/surveys/{_segment(survey_id)}/quotas/performance", "quota_performance")


def transactions(survey_id: int) -> Path:
    """GET the transactions of a survey, paged (4.4)."""
    return Path(V3, f"/surveys/{_segment(survey_id)}/transactions", "transactions")


def transaction(survey_id: int, transaction_id: str) -> Path:
    """GET one transaction (4.5)."""
    suffix = f"/surveys/{_segment(survey_id)}/transactions/{_segment(transaction_id)}"
    return Path(V3, suffix, "transaction")


def transaction_status(survey_id: int, transaction_id: str) -> Path:
    """POST a transaction's final status, `?st=..&quota_id=..` (public facts)."""
    suffix = f"/surveys/{_segment(survey_id)}/transactions/{_segment(transaction_id)}/status"
    return Path(V2, suffix, "transaction_status")


def attributes() -> Path:
    """GET the attribute catalogue, paged (4.6)."""
    return Path(V3, "/attributes", "attributes")


def text_check() -> Path:
    """POST the open-ended response check (4.7)."""
    return Path(V3, "/transactions/ps_api_fail", "text_check")


def survey_groups() -> Path:
    """POST create exclusion group (4.8)."""
    return Path(V2, "/surveygroups", "survey_groups")


def survey_group(ref: str) -> Path:
    """PUT, GET, DELETE one exclusion group (4.9)."""
    return Path(V2, f"/surveygroups/{_segment(ref)}", "survey_group")


def adjustments() -> Path:
    """POST reconciliation adjustments (4.10)."""
    return Path(V2, "/adjustments", "adjustments")


def survey_adjustments(survey_id: int) -> Path:
    """POST reconciliation adjustments for one survey (public facts)."""
    return Path(V2, f"/adjustments/surveys/{_segment(survey_id)}", "survey_adjustments")


def sandbox_simulate(survey_id: int) -> Path:
    """POST simulated respondent traffic at a survey (sandbox only, outside /buyers)."""
    return Path(SANDBOX, f"/surveys/{_segment(survey_id)}/simulate", "sandbox_simulate")
