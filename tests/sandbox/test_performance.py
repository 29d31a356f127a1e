"""Survey performance: `GET /surveys/{id}/performance` (public facts: path and errors)."""

from __future__ import annotations

from collections import Counter


def _statuses(raw, survey_id: int) -> Counter:
    rows = raw.v3("GET", f"/surveys/{survey_id}/transactions?limit=1000").json()
    return Counter(row["Respondent Status Code"] for row in rows)


def test_performance_counts_the_sessions_by_outcome(raw, live_survey):
    survey_id = live_survey(completes_required=500)
    simulated = raw("POST", f"/sandbox/surveys/{survey_id}/simulate",
                    json={"respondents": 80, "seed": 12})  # fmt: skip
    assert simulated.status_code == 200
    counts = _statuses(raw, survey_id)
    report = raw.v2("GET", f"/surveys/{survey_id}/performance").json()
    assert report["completes"] == report["completes_fielded"] == counts[21]
    assert (report["terminates"], report["over_quota"]) == (counts[18], counts[17])
    assert report["entrants"] == sum(counts[s] for s in (16, 17, 18, 19, 20, 21, 30))
    assert report["remaining"] == 500 - counts[21]
    assert [q["buyer_quota_id"] for q in report["quotas"]] == ["male", "female"]


def test_the_incidence_rate_follows_the_documented_formula(raw, live_survey):
    survey_id = live_survey(completes_required=500)
    raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json={"respondents": 60, "seed": 3})
    counts = _statuses(raw, survey_id)
    counted = counts[21] + counts[18] + counts[19] + counts[17]
    report = raw.v2("GET", f"/surveys/{survey_id}/performance").json()
    assert report["incidence_rate"] == round(100 * counts[21] / counted, 2)
    assert report["median_loi"] is not None


def test_a_survey_without_traffic_has_no_rate_yet(raw):
    report = raw.v2("GET", f"/surveys/{raw.create()['ps_survey_id']}/performance").json()
    assert (report["entrants"], report["incidence_rate"], report["median_loi"]) == (0, None, None)
    assert report["ps_survey_status"] == 11


def test_an_unknown_survey_answers_the_documented_404(raw):
    response = raw.v2("GET", "/surveys/999999999/performance")
    assert response.status_code == 404
    assert response.json() == {
        "ps_api_response_code": 1006,
        "ps_api_response_message": "Survey not found",
    }


def test_another_buyers_survey_answers_the_documented_403(raw, raw2):
    response = raw2.v2("GET", f"/surveys/{raw.create()['ps_survey_id']}/performance")
    assert response.status_code == 403
    assert response.json() == {
        "ps_api_response_code": 1020,
        "ps_api_response_message": "You don't have permission for this survey",
    }
