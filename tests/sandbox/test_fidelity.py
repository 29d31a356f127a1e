"""What buyers send and read, as the service's public material shows it (issue table of the
fidelity step): each call answers as documented by default, and the bodies the service takes
beyond the schemas are refused by a sandbox served with --strict."""

from __future__ import annotations

import time

import pytest

from .conftest import survey_body

INVALID_BODY, CATALOGUE = 1004, 1018
# Fields a GET answer carries that a PUT of the whole object sends back (public facts).
RESPONSE_ONLY = (
    "launch_date",
    "ps_survey_status",
    "ps_survey_id",
    "estimated_clicks",
    "soft_launch",
    "unique_links",
    "uniqueLinks",
    "url_transform",
    "survey_external_id",
    "test_ps_survey_entry_link",
)


def _sent_back(raw, survey_id: int) -> dict:
    """The survey as GET answers it, with the documented extras, ready to be PUT."""
    body = raw.v2("GET", f"/surveys/{survey_id}").json()
    body["launch_date"] = int(time.time() * 1000)
    body["external_project_id"] = "proj-77"
    return body


def _code(response) -> int:
    return response.json()["ps_api_response_code"]


def test_a_put_of_the_survey_as_get_returns_it_is_taken(raw):
    survey_id = raw.create()["ps_survey_id"]
    body = _sent_back(raw, survey_id)
    body["survey_title"] = "Renamed"
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=body)
    assert response.status_code == 200, response.text
    shown = raw.v2("GET", f"/surveys/{survey_id}").json()
    assert (shown["survey_title"], shown["external_project_id"]) == ("Renamed", "proj-77")


def test_fields_sent_back_do_not_change_what_the_service_owns(raw):
    survey_id = raw.create()["ps_survey_id"]
    body = _sent_back(raw, survey_id)
    body.update(ps_survey_status=44, ps_survey_id=1, estimated_clicks=1)
    raw.v2("PUT", f"/surveys/{survey_id}", json=body)
    shown = raw.v2("GET", f"/surveys/{survey_id}").json()
    assert (shown["ps_survey_status"], shown["ps_survey_id"]) == (11, survey_id)
    assert shown["estimated_clicks"] == 250


def test_strict_mode_refuses_the_survey_sent_back_naming_the_ten_fields(strict_raw):
    survey_id = strict_raw.create()["ps_survey_id"]
    response = strict_raw.v2("PUT", f"/surveys/{survey_id}", json=_sent_back(strict_raw, survey_id))
    assert (response.status_code, _code(response)) == (400, INVALID_BODY)
    message = response.json()["ps_api_response_message"]
    assert all(name in message for name in RESPONSE_ONLY)


def _quota_put(raw, **extra):
    survey_id = raw.create()["ps_survey_id"]
    body = {
        "required_count": 70,
        "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
        **extra,
    }
    return survey_id, raw.v2("PUT", f"/surveys/{survey_id}/quotas/male", json=body)


def test_a_quota_put_repeating_its_buyer_quota_id_is_taken(raw):
    survey_id, response = _quota_put(raw, buyer_quota_id="male")
    assert response.status_code == 200, response.text
    quota = raw.v2("GET", f"/surveys/{survey_id}/quotas/male").json()
    assert quota["required_count"] == 70


def test_a_quota_put_with_quota_title_renames_the_quota(raw):
    survey_id, response = _quota_put(raw, quota_title="Men")
    assert response.status_code == 200, response.text
    quotas = raw.v2("GET", f"/surveys/{survey_id}").json()["quotas"]
    assert [q["quota_title"] for q in quotas] == ["Men", ""]


@pytest.mark.parametrize("extra", [{"buyer_quota_id": "male"}, {"quota_title": "Men"}])
def test_strict_mode_refuses_the_documented_quota_put_fields(strict_raw, extra):
    _survey_id, response = _quota_put(strict_raw, **extra)
    assert (response.status_code, _code(response)) == (400, INVALID_BODY)
    assert next(iter(extra)) in response.json()["ps_api_response_message"]


EXCLUSIONS = {
    "enable": True,
    "start": "20260101",
    "end": "20261231",
    "criteriaSurveys": [123],
    "statuses": [21],
    "criterias": ["complete"],
}


def test_feasibility_exclusions_take_criterias_and_show_them(raw):
    survey_id = raw.create()["ps_survey_id"]
    body = survey_body(feasibility_exclusions=EXCLUSIONS)
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["feasibility_exclusions"]["criterias"] == ["complete"]


def test_an_unknown_field_inside_a_nested_object_is_taken_and_not_shown(raw):
    survey_id = raw.create()["ps_survey_id"]
    body = survey_body(feasibility_exclusions={**EXCLUSIONS, "colour": "red"})
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=body)
    assert response.status_code == 200, response.text
    assert "colour" not in response.json()["feasibility_exclusions"]


def test_strict_mode_refuses_criterias(strict_raw):
    response = strict_raw.v2(
        "POST", "/surveys", json=survey_body(feasibility_exclusions=EXCLUSIONS)
    )
    assert (response.status_code, _code(response)) == (400, INVALID_BODY)
    assert "criterias" in response.json()["ps_api_response_message"]


def _ages_as_text() -> dict:
    """Age ranges with their bounds as text, as the service's GET shows them (public facts)."""
    ages = {"qualification_code": 212, "range_sets": [{"from": "21", "to": "25", "units": 311}]}
    body = survey_body()
    body["qualifications"].append(ages)
    body["quotas"][0]["criteria"].append(ages)
    return body


def test_range_bounds_sent_as_text_as_get_shows_them_are_taken_as_numbers(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("PUT", f"/surveys/{survey_id}", json=_ages_as_text())
    assert response.status_code == 200, response.text
    shown = raw.v2("GET", f"/surveys/{survey_id}").json()
    expected = [{"from": 21, "to": 25, "units": 311}]
    assert shown["qualifications"][1]["range_sets"] == expected
    assert shown["quotas"][0]["criteria"][1]["range_sets"] == expected


def test_range_bounds_as_text_are_still_checked_against_the_catalogue(raw):
    body = _ages_as_text()
    body["qualifications"][1]["range_sets"][0].update({"from": "25", "to": "21"})
    response = raw.v2("POST", "/surveys", json=body)
    assert (response.status_code, _code(response)) == (400, CATALOGUE)


def test_strict_mode_refuses_range_bounds_as_text(strict_raw):
    response = strict_raw.v2("POST", "/surveys", json=_ages_as_text())
    assert (response.status_code, _code(response)) == (400, INVALID_BODY)
    assert "range_sets[0]" in response.json()["ps_api_response_message"]


def _states(*codes: str) -> dict:
    return survey_body(
        qualifications=[
            {"qualification_code": 211, "condition_codes": ["111", "112"]},
            {"qualification_code": 225, "condition_codes": list(codes)},
        ]
    )


def test_us_state_codes_are_taken_zero_padded_and_unpadded(raw):
    response = raw.v2("POST", "/surveys", json=_states("06", "36", "34", "6"))
    assert response.status_code == 201, response.text
    assert response.json()["qualifications"][1]["condition_codes"] == ["06", "36", "34", "6"]


def test_a_zero_padded_state_screens_respondents_as_the_unpadded_one(raw, live_survey):
    statuses = []
    for california in ("6", "06"):
        survey_id = live_survey(qualifications=_states(california, "12", "48")["qualifications"])
        body = {"respondents": 300, "seed": 9, "hold": True}
        response = raw("POST", f"/sandbox/surveys/{survey_id}/simulate", json=body)
        assert response.status_code == 200, response.text
        statuses.append(response.json()["statuses"])
    assert statuses[1] == statuses[0]
    held = raw.v3("GET", f"/surveys/{survey_id}/transactions?status=16&limit=1000").json()
    assert 6 in {record["State Code"] for record in held}  # Californians entered "06"


def test_a_padded_code_that_is_no_state_is_still_refused(raw):
    response = raw.v2("POST", "/surveys", json=_states("099"))
    assert (response.status_code, _code(response)) == (400, CATALOGUE)


def test_strict_mode_refuses_padded_state_codes(strict_raw):
    response = strict_raw.v2("POST", "/surveys", json=_states("06"))
    assert (response.status_code, _code(response)) == (400, CATALOGUE)
    assert "06" in response.json()["ps_api_response_message"]


def test_a_survey_in_en_au_is_created(raw):
    response = raw.v2("POST", "/surveys", json=survey_body(survey_localization="en_AU"))
    assert response.status_code == 201, response.text
    assert response.json()["survey_localization"] == "en_AU"


def test_an_unknown_locale_lists_the_known_ones_with_a_guess(raw):
    response = raw.v2("POST", "/surveys", json=survey_body(survey_localization="en_UK"))
    assert (response.status_code, _code(response)) == (400, CATALOGUE)
    message = response.json()["ps_api_response_message"]
    assert "did you mean 'en_GB'?" in message
    assert "en_AU, en_CA, en_GB, en_US" in message


def test_the_quota_list_shows_titles_and_criteria_and_ignores_a_monitors_parameters(raw):
    quotas = survey_body()["quotas"]
    quotas[0]["quota_title"] = "Men"
    survey_id = raw.create(quotas=quotas)["ps_survey_id"]
    response = raw.v2("GET", f"/surveys/{survey_id}/quotas?UI=1&QBS=1&page=1&limit=100")
    assert response.status_code == 200, response.text
    listed = response.json()
    assert [(q["buyer_quota_id"], q["quota_title"]) for q in listed] == [
        ("male", "Men"),
        ("female", ""),
    ]
    assert listed[0]["criteria"] == quotas[0]["criteria"]
    assert response.headers["total_pages"] == "1"


def test_the_quota_list_is_paged(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("GET", f"/surveys/{survey_id}/quotas?page=2&limit=1")
    assert [q["buyer_quota_id"] for q in response.json()] == ["female"]
    assert response.headers["total_pages"] == "2"


def test_one_quota_is_read_by_its_buyer_quota_id(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("GET", f"/surveys/{survey_id}/quotas/female")
    assert response.status_code == 200
    assert (response.json()["buyer_quota_id"], response.json()["current_target"]) == ("female", 60)


def test_an_unknown_quota_is_a_404(raw):
    survey_id = raw.create()["ps_survey_id"]
    assert raw.v2("GET", f"/surveys/{survey_id}/quotas/nobody").status_code == 404


def test_the_survey_status_is_read_without_the_survey(raw, live_survey):
    survey_id = live_survey()
    response = raw.v2("GET", f"/surveys/{survey_id}/status")
    assert response.status_code == 200
    answer = response.json()
    assert (answer["ps_survey_id"], answer["ps_survey_status"]) == (survey_id, 22)
    assert "qualifications" not in answer


def test_another_buyers_survey_status_is_forbidden(raw, raw2):
    survey_id = raw.create()["ps_survey_id"]
    response = raw2.v2("GET", f"/surveys/{survey_id}/status")
    assert (response.status_code, _code(response)) == (403, 1020)


def test_options_on_quota_performance_advertises_only_get(raw):
    survey_id = raw.create()["ps_survey_id"]
    response = raw.v2("OPTIONS", f"/surveys/{survey_id}/quotas/performance")
    allowed = {m.strip() for m in response.headers["Allow"].split(",")}
    assert allowed == {"GET", "HEAD", "OPTIONS"}


def test_the_survey_carries_crtd_on_and_mod_on_in_epoch_milliseconds(raw):
    before = int(time.time() * 1000)
    created = raw.create()
    assert before - 1000 <= created["crtd_on"] <= int(time.time() * 1000) + 1000
    assert created["mod_on"] >= created["crtd_on"]


def test_reads_do_not_move_mod_on(raw):
    survey_id = raw.create()["ps_survey_id"]
    first = raw.v2("GET", f"/surveys/{survey_id}").json()["mod_on"]
    raw.v2("GET", f"/surveys/{survey_id}/quotas")
    raw.v2("GET", f"/surveys/{survey_id}/performance")
    assert raw.v2("GET", f"/surveys/{survey_id}").json()["mod_on"] == first


WRITES = {
    "put": lambda raw, i: raw.v2("PUT", f"/surveys/{i}", json=survey_body(survey_title="New")),
    "patch": lambda raw, i: raw.v2(
        "PATCH", f"/surveys/{i}", json=[{"op": "replace", "path": "/field_time", "value": 9}]
    ),
    "status": lambda raw, i: raw.v2("PUT", f"/surveys/{i}/status", json={"ps_survey_status": 22}),
    "quota put": lambda raw, i: raw.v2(
        "PUT",
        f"/surveys/{i}/quotas/male",
        json={"required_count": 5, "criteria": survey_body()["quotas"][0]["criteria"]},
    ),
    "quota add": lambda raw, i: raw.v2(
        "POST",
        f"/surveys/{i}/quotas",
        json={"buyer_quota_id": "x", "required_count": 5, "criteria": []},
    ),
    "quota delete": lambda raw, i: raw.v2("DELETE", f"/surveys/{i}/quotas/female"),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_every_write_moves_mod_on_and_never_crtd_on(raw, write):
    created = raw.create()
    survey_id = created["ps_survey_id"]
    response = WRITES[write](raw, survey_id)
    assert response.status_code < 300, response.text
    after = raw.v2("GET", f"/surveys/{survey_id}").json()
    assert after["mod_on"] > created["mod_on"]
    assert after["crtd_on"] == created["crtd_on"]
