"""Which managed surveys changed since surveyctl last saw them, from the account's survey list.

The service's survey list answers a hundred surveys per request, and its items carry `mod_on`
(epoch milliseconds of the survey's last change; public facts). State keeps each survey's
`mod_on` as a write left it (or as a read found it, unchanged from what was last applied), so a
plan GETs only the surveys whose listed `mod_on` moved, or whose manifest changed: a no-op plan
of a thousand surveys costs a dozen list requests instead of a thousand reads. When the list
carries no `mod_on`, every survey is read, as before, and `--debug` says so once.
"""

from __future__ import annotations

import logging
from typing import Any

from surveyctl.api.account_surveys import account_surveys
from surveyctl.errors import SurveyctlError
from surveyctl.reconcile.marketplace import Marketplace
from surveyctl.state import SurveyRecord
from surveyctl.statuses import SURVEY_STATUSES

log = logging.getLogger("surveyctl.plan")

# Below this many surveys that the list could spare a read, reading them costs no more than
# listing every status (one request each, at least).
MIN_LISTED = 2 * len(SURVEY_STATUSES)


def version(body: Any) -> int | None:
    """A survey body's `mod_on` as an integer; None when it has none."""
    if not isinstance(body, dict):
        return None
    value = body.get("mod_on")
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def listed_versions(
    client: Marketplace, records: dict[str, SurveyRecord]
) -> dict[str, int | None] | None:
    """address -> the `mod_on` the survey list shows for each of `records` that keeps one
    (None for a survey the list does not show); None when the list cannot spare a read: too few
    such records, no list to read, a list that fails, or items without `mod_on`."""
    kept = {a: r for a, r in records.items() if r.mod_on is not None}
    if len(kept) < MIN_LISTED or not hasattr(client, "get_surveys_page"):
        return None
    try:
        # The one reader of the whole list, the identity check's: every status, pages side by side.
        items, _pages = account_surveys(client)
    except SurveyctlError as exc:
        log.debug("the survey list could not be read (%s); reading each survey", exc)
        return None
    listed: dict[int, int] = {}
    for item in items:
        survey_id, mod_on = item.get("ps_survey_id"), version(item)
        if mod_on is None:
            log.debug("the survey list carries no mod_on; reading each survey (one GET each)")
            return None
        if isinstance(survey_id, int):
            listed[survey_id] = mod_on
    return {address: listed.get(record.ps_survey_id) for address, record in kept.items()}
