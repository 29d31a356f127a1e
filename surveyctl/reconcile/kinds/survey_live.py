"""What surveyctl keeps of a live survey body: the state record made from it (after a create,
an update, an adoption or an import) and the fingerprint a saved plan depends on."""

from __future__ import annotations

from surveyctl.fields import UPDATE_FIELDS
from surveyctl.state import SurveyRecord, fingerprint


def survey_record(live: dict, last_applied: dict | None, prevent_destroy: bool) -> SurveyRecord:
    """What state keeps of a survey from its live body (a create's or update's answer, a GET):
    its id and its quotas' ids (buyer_quota_id -> ps_quota_id, as text)."""
    return SurveyRecord(int(live["ps_survey_id"]), quota_ids(live), last_applied, prevent_destroy)


def quota_ids(live: dict) -> dict[str, str]:
    """buyer_quota_id -> ps_quota_id of a live survey body, as text."""
    return {
        str(q["buyer_quota_id"]): str(q["ps_quota_id"])
        for q in live.get("quotas") or []
        if isinstance(q, dict) and q.get("buyer_quota_id") and q.get("ps_quota_id")
    }


def live_fingerprint(live: dict) -> str:
    """What a saved plan depends on: the live update fields and the survey's status (not
    counters such as completes, which move with traffic and are not part of any write)."""
    fields = {name: live[name] for name in UPDATE_FIELDS if live.get(name) is not None}
    return fingerprint({"status": live.get("ps_survey_status"), "body": fields})
