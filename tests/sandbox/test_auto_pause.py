"""Auto-pause (spec 1.5, 3): a live survey pauses when its goal or every quota is achieved."""

from __future__ import annotations

import pytest

MALE = [{"qualification_code": 211, "condition_codes": ["111"]}]


def _live_survey(api, make_body, **overrides) -> int:
    survey_id = api.create_survey(make_body(**overrides))["ps_survey_id"]
    api.set_survey_status(survey_id, 22)
    return survey_id


def _small_quotas(male: int, female: int) -> list[dict]:
    return [
        {"buyer_quota_id": "male", "required_count": male, "criteria": MALE},
        {"buyer_quota_id": "female", "required_count": female, "criteria": []},
    ]


def test_reaching_the_survey_goal_pauses_a_live_survey(api, store, make_body):
    survey_id = _live_survey(api, make_body, completes_required=2, quotas=[])
    assert store.record_complete(survey_id, []) == 22
    assert store.record_complete(survey_id, []) == 33
    assert api.get_survey(survey_id)["ps_survey_status"] == 33


def test_filling_every_quota_pauses_a_live_survey(api, store, make_body):
    survey_id = _live_survey(api, make_body, quotas=_small_quotas(1, 1))
    store.record_complete(survey_id, ["male"])
    assert api.get_survey(survey_id)["ps_survey_status"] == 22
    store.record_complete(survey_id, ["female"])
    assert api.get_survey(survey_id)["ps_survey_status"] == 33


def test_a_draft_survey_is_not_paused(api, store, make_body):
    survey_id = api.create_survey(make_body(completes_required=1, quotas=[]))["ps_survey_id"]
    store.record_complete(survey_id, [])
    assert api.get_survey(survey_id)["ps_survey_status"] == 11


def test_closing_the_last_open_quota_by_quota_put_pauses_the_survey(api, store, make_body):
    survey_id = _live_survey(api, make_body, quotas=_small_quotas(1, 5))
    store.record_complete(survey_id, ["male"])
    store.record_complete(survey_id, ["female"])
    api.update_quota(survey_id, "female", {"required_count": 1, "criteria": []})
    assert api.get_survey(survey_id)["ps_survey_status"] == 33


def test_a_complete_counts_in_the_survey_and_in_each_named_quota(api, store, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    store.record_complete(survey_id, ["male", "female"])
    survey = store.survey(survey_id)
    assert survey.completes == 1
    assert [q.completes for q in survey.quotas] == [1, 1]
    assert api.get_survey(survey_id)["project_last_complete_date"] is not None


def test_a_complete_in_a_quota_the_survey_lacks_is_an_error(api, store, make_body):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    with pytest.raises(KeyError):
        store.record_complete(survey_id, ["ghost"])
    assert store.survey(survey_id).completes == 0
