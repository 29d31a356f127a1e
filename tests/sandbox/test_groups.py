"""Exclusion groups (2.9, 4.8, 4.9) and survey membership through buyer_surveygroup_ref(s)."""

from __future__ import annotations

import pytest

from surveyctl.errors import ApiError


def _group(ref: str, surveys: list[int], name: str = "Trackers", period: int = 30) -> dict:
    return {
        "buyer_surveygroup_ref": ref,
        "name": name,
        "surveys_in_group": surveys,
        "exclusion_period": period,
    }


def test_creating_a_group_answers_201_repeating_the_four_fields(raw, fresh_ref):
    survey_id = raw.create()["ps_survey_id"]
    body = _group(fresh_ref(), [survey_id])
    response = raw.v2("POST", "/surveygroups", json=body)
    assert response.status_code == 201
    assert response.json() == body


def test_a_group_reads_back_and_is_overwritten_by_put(api, make_body, fresh_ref):
    first = api.create_survey(make_body())["ps_survey_id"]
    second = api.create_survey(make_body())["ps_survey_id"]
    ref = fresh_ref()
    api.create_group(_group(ref, [first]))
    updated = api.update_group(ref, _group(ref, [second], name="Renamed", period=60))
    assert updated == _group(ref, [second], name="Renamed", period=60)
    assert api.get_group(ref) == updated


def test_a_deleted_group_is_gone(raw, fresh_ref):
    ref = fresh_ref()
    raw.v2("POST", "/surveygroups", json=_group(ref, []))
    assert raw.v2("DELETE", f"/surveygroups/{ref}").status_code == 204
    assert raw.v2("GET", f"/surveygroups/{ref}").status_code == 404


def test_a_group_ref_taken_by_any_buyer_answers_400_as_the_spec_lists(
    api, other_buyer_api, fresh_ref
):
    # Spec 4.8 and 7 list 400 and 404 for the create; a taken ref is a bad request, not a 409.
    ref = fresh_ref()
    api.create_group(_group(ref, []))
    with pytest.raises(ApiError) as refused:
        other_buyer_api.create_group(_group(ref, []))
    assert refused.value.status == 400
    assert refused.value.code == 1011


def test_a_group_naming_a_missing_survey_answers_404(raw, fresh_ref):
    response = raw.v2("POST", "/surveygroups", json=_group(fresh_ref(), [999999999]))
    assert response.status_code == 404


def test_a_group_create_needs_its_ref(raw):
    body = _group("x", [])
    del body["buyer_surveygroup_ref"]
    response = raw.v2("POST", "/surveygroups", json=body)
    assert response.status_code == 400
    assert "buyer_surveygroup_ref" in response.json()["ps_api_response_message"]


def test_a_recontact_survey_cannot_join_a_group_by_group_create(raw, fresh_ref):
    survey_id = raw.create(incl_excl=1)["ps_survey_id"]
    response = raw.v2("POST", "/surveygroups", json=_group(fresh_ref(), [survey_id]))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1012


def test_a_recontact_survey_cannot_join_a_group_by_group_put(raw, fresh_ref):
    ref = fresh_ref()
    raw.v2("POST", "/surveygroups", json=_group(ref, []))
    survey_id = raw.create(incl_excl=1)["ps_survey_id"]
    response = raw.v2("PUT", f"/surveygroups/{ref}", json=_group(ref, [survey_id]))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1012


def test_a_recontact_survey_cannot_be_created_into_a_group(raw, make_body, fresh_ref):
    ref = fresh_ref()
    raw.v2("POST", "/surveygroups", json=_group(ref, []))
    body = make_body(incl_excl=1, buyer_surveygroup_ref=ref)
    response = raw.v2("POST", "/surveys", json=body)
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1012


def test_a_survey_created_with_an_existing_ref_joins_that_group(api, make_body, fresh_ref):
    first = api.create_survey(make_body())["ps_survey_id"]
    ref = fresh_ref()
    api.create_group(_group(ref, [first]))
    second = api.create_survey(make_body(buyer_surveygroup_ref=ref))
    assert api.get_group(ref)["surveys_in_group"] == [first, second["ps_survey_id"]]
    assert second["buyer_surveygroup_ref"] == ref
    assert second["buyer_surveygroup_refs"] == [ref]
    assert second["survey_grouping"][0]["buyer_surveygroup_ref"] == ref


def test_a_survey_updated_with_refs_joins_those_groups(api, make_body, fresh_ref):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    refs = sorted([fresh_ref(), fresh_ref()])
    for ref in refs:
        api.create_group(_group(ref, []))
    updated = api.update_survey(survey_id, make_body(buyer_surveygroup_refs=refs))
    assert updated["buyer_surveygroup_refs"] == refs
    assert all(api.get_group(ref)["surveys_in_group"] == [survey_id] for ref in refs)


def test_a_put_without_group_refs_takes_the_survey_out_of_its_groups(api, make_body, fresh_ref):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    ref = fresh_ref()
    api.create_group(_group(ref, [survey_id]))
    assert api.get_survey(survey_id)["buyer_surveygroup_refs"] == [ref]
    updated = api.update_survey(survey_id, make_body())
    assert updated["buyer_surveygroup_refs"] == []
    assert api.get_group(ref)["surveys_in_group"] == []


def test_a_survey_naming_an_unknown_group_is_refused(raw, make_body, fresh_ref):
    response = raw.v2("POST", "/surveys", json=make_body(buyer_surveygroup_ref=fresh_ref()))
    assert response.status_code == 400
    assert response.json()["ps_api_response_code"] == 1013


def test_a_deleted_survey_leaves_its_group(api, make_body, fresh_ref):
    survey_id = api.create_survey(make_body())["ps_survey_id"]
    ref = fresh_ref()
    api.create_group(_group(ref, [survey_id]))
    api.delete_survey(survey_id)
    assert api.get_group(ref)["surveys_in_group"] == []
