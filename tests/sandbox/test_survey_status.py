"""PUT /surveys/{id}/status: only draft->live, live->paused, paused->live, paused->closed."""

from __future__ import annotations

import pytest


def _move(raw, survey_id: int, status: int):
    return raw.v2("PUT", f"/surveys/{survey_id}/status", json={"ps_survey_status": status})


def test_a_survey_goes_live_pauses_resumes_and_closes(raw):
    survey_id = raw.create()["ps_survey_id"]
    for status in (22, 33, 22, 33, 44):
        response = _move(raw, survey_id, status)
        assert response.status_code == 200, response.text
        assert response.json()["ps_survey_status"] == status
    assert raw.v2("GET", f"/surveys/{survey_id}").json()["ps_survey_status"] == 44


@pytest.mark.parametrize(
    "path, refused",
    [((), 33), ((), 44), ((), 11), ((22,), 44), ((22,), 11), ((22, 33, 44), 22), ((22, 33), 11)],
)
def test_any_other_move_is_refused_with_400(raw, path, refused):
    survey_id = raw.create()["ps_survey_id"]
    for status in path:
        assert _move(raw, survey_id, status).status_code == 200
    response = _move(raw, survey_id, refused)
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1026


def test_an_unknown_status_code_is_refused(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = _move(raw, survey_id, 99)
    assert response.status_code == 400
    assert "ps_survey_status" in response.json()["ps_api_response_message"]
