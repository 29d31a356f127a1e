"""How a plan describes a survey's targeting and quotas in words, in every format."""

from __future__ import annotations

from surveyctl.render import text

from .plans import create, plan

MEN = {
    "buyer_quota_id": "men",
    "quota_title": "Men",
    "required_count": 100,
    "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
}


def test_a_quota_of_a_create_shows_its_title():
    shown = text.render(plan(create("new", {"survey_title": "New", "quotas": [MEN]})))
    assert '+ quotas[men]: 100 completes; 211: 111; title "Men"' in shown


def test_a_quotas_empty_fields_are_not_listed():
    quota = {**MEN, "quota_title": None, "quota_nature": ""}
    shown = text.render(plan(create("new", {"survey_title": "New", "quotas": [quota]})))
    assert "+ quotas[men]: 100 completes; 211: 111\n" in shown


def test_a_field_a_create_leaves_empty_is_not_listed():
    body = {"survey_title": "New", "buyer_surveygroup_refs": [], "qbp": {}, "buyer_message": None}
    shown = text.render(plan(create("new", body)))
    assert shown.splitlines()[:3] == [
        "+ Survey/new will be created",
        '    + survey_title: "New"',
        "",
    ]


def test_whole_numbers_of_a_range_are_shown_without_decimals():
    age = {"qualification_code": 212, "range_sets": [{"from": 18.0, "to": 34.0, "units": 311}]}
    shown = text.render(plan(create("new", {"survey_title": "New", "qualifications": [age]})))
    assert "+ qualifications[212].range_sets: 18-34 years" in shown
