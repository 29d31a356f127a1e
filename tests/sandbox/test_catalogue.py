"""The sandbox's attribute catalogue: data per locale and the pages it serves (spec 2.8, 4.6)."""

from __future__ import annotations

import re

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveyctl.errors import ApiError
from surveyctl.sandbox import catalogue
from surveyctl.sandbox.catalogue import (
    PAGE_SIZE,
    TYPE_FREE_TEXT,
    TYPE_MULTIPLE_CHOICE,
    TYPE_NUMERIC_RANGE,
    TYPE_SINGLE_CHOICE,
)
from surveyctl.schemafiles import load_schema

LOCALES = ["de_DE", "en_AU", "en_CA", "en_GB", "en_US", "es_ES", "fr_FR"]
CORE_EVERYWHERE = [211, 212, 213, 215, 216, 217, 218, 219, 229]
# Asked in the respondent's language; the device (219) is detected, and its answers such as
# "Smartphone" read the same in every language.
TRANSLATED_CORE = [211, 212, 213, 215, 216, 217, 218, 229]
COUNTRY_OF_BIRTH = 235
US_STATE = 225
REGION_CODE = {
    "en_US": 226,
    "en_GB": 230,
    "de_DE": 231,
    "fr_FR": 232,
    "en_CA": 233,
    "es_ES": 234,
    "en_AU": 236,
}


def all_pages(locale: str, classes: set[int] | None = None) -> list[dict]:
    """Every item of every page, in page order, repeats included."""
    items, total = catalogue.attributes_page(locale, classes, 1)
    for page in range(2, total + 1):
        items += catalogue.attributes_page(locale, classes, page)[0]
    return items


def full_list(locale: str, classes: set[int] | None = None) -> dict[int, dict]:
    return {item["qualification_code"]: item for item in all_pages(locale, classes)}


def localization(locale: str, code: int) -> dict:
    item = catalogue.attribute(locale, code)
    assert item is not None, f"{locale} lacks attribute {code}"
    return item["localizations"][0]


def local_answer(locale: str, code: int, condition_code: int) -> str:
    answers = localization(locale, code)["answers"]
    return next(a["local_text"] for a in answers if a["condition_code"] == condition_code)


def test_the_catalogue_serves_seven_locales():
    assert catalogue.locales() == LOCALES


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_matches_the_attributes_response_schema(locale):
    validator = jsonschema.Draft202012Validator(load_schema("api/attributes.response.json"))
    _, total = catalogue.attributes_page(locale, None, 1)
    for page in range(1, total + 1):
        items, _ = catalogue.attributes_page(locale, None, page)
        errors = [e.message for e in validator.iter_errors(items)]
        assert errors == [], f"{locale} page {page}: {errors[:3]}"


def test_the_schema_refuses_an_attribute_with_a_field_the_spec_does_not_name():
    item = catalogue.attribute("en_US", 211)
    item["label"] = "Gender"
    validator = jsonschema.Draft202012Validator(load_schema("api/attributes.response.json"))
    assert not validator.is_valid([item])


@pytest.mark.parametrize("locale", LOCALES)
def test_each_item_carries_exactly_its_own_locale(locale):
    for item in all_pages(locale):
        assert [loc["locale"] for loc in item["localizations"]] == [locale]


@pytest.mark.parametrize("locale", LOCALES)
def test_every_locale_offers_the_core_qualifications_and_a_region(locale):
    items = full_list(locale)
    for code in [*CORE_EVERYWHERE, REGION_CODE[locale]]:
        assert code in items, f"{locale} lacks core qualification {code}"
        assert items[code]["class"] == 1
    assert items[REGION_CODE[locale]]["desc"] == "Region"


def test_only_en_us_offers_the_us_state():
    assert catalogue.attribute("en_US", 225)["desc"] == "US State"
    assert len(localization("en_US", 225)["answers"]) == 51
    for locale in set(LOCALES) - {"en_US"}:
        assert catalogue.attribute(locale, 225) is None


@pytest.mark.parametrize(
    ("locale", "code", "condition_code", "text"),
    [
        ("de_DE", 211, 112, "Weiblich"),
        ("de_DE", 211, 113, "Keine Angabe"),
        ("de_DE", 231, 112, "Bayern"),
        ("de_DE", 215, 115, "Im Ruhestand"),
        ("de_DE", 235, 114, "Außerhalb der EU geboren"),
        ("fr_FR", 211, 112, "Femme"),
        ("fr_FR", 232, 118, "Île-de-France"),
        ("fr_FR", 217, 112, "Marié(e)"),
        ("es_ES", 211, 111, "Hombre"),
        ("es_ES", 234, 120, "Cataluña"),
        ("en_GB", 230, 117, "London"),
        ("en_GB", 214, 114, "Asian or Asian British"),
        ("en_CA", 214, 112, "Latin American"),
    ],
)
def test_answers_are_written_in_the_locale_language(locale, code, condition_code, text):
    assert local_answer(locale, code, condition_code) == text


@pytest.mark.parametrize("locale", ["de_DE", "fr_FR", "es_ES"])
def test_core_questions_and_answers_are_translated_with_english_beside(locale):
    for code in [*TRANSLATED_CORE, COUNTRY_OF_BIRTH]:
        local = localization(locale, code)
        if code != COUNTRY_OF_BIRTH:  # asked in these markets only
            assert local["text"] != localization("en_US", code)["text"], f"{locale} {code}"
        for answer in local["answers"]:
            assert answer["local_text"] != answer["eng_text"], f"{locale} {code} {answer}"
    assert [a["eng_text"] for a in localization(locale, 211)["answers"]] == [
        "Male",
        "Female",
        "Prefer not to say",
    ]


def test_gender_uses_the_documented_condition_codes_everywhere():
    for locale in LOCALES:
        answers = localization(locale, 211)["answers"]
        assert [(a["condition_code"], a["eng_text"]) for a in answers] == [
            (111, "Male"),
            (112, "Female"),
            (113, "Prefer not to say"),
        ]


def test_a_qualification_code_means_the_same_attribute_in_every_locale():
    by_code: dict[int, set] = {}
    for locale in LOCALES:
        for code, item in full_list(locale).items():
            by_code.setdefault(code, set()).add((item["desc"], item["type"], item["class"]))
    assert {code: shapes for code, shapes in by_code.items() if len(shapes) > 1} == {}


def test_extended_and_custom_codes_are_the_same_in_every_locale():
    code_sets = {locale: set(full_list(locale, {2, 3})) for locale in LOCALES}
    assert all(codes == code_sets["en_US"] for codes in code_sets.values())


def test_a_condition_code_names_the_same_english_answer_of_its_attribute_in_every_locale():
    english: dict[tuple[int, int], set[str]] = {}
    for locale in LOCALES:
        for code, item in full_list(locale).items():
            for answer in item["localizations"][0]["answers"]:
                key = (code, answer["condition_code"])
                english.setdefault(key, set()).add(answer["eng_text"])
    assert {code: texts for code, texts in english.items() if len(texts) > 1} == {}


@pytest.mark.parametrize("locale", LOCALES)
def test_condition_codes_are_unique_within_an_attribute(locale):
    for code, item in full_list(locale).items():
        conditions = [a["condition_code"] for a in item["localizations"][0]["answers"]]
        assert len(conditions) == len(set(conditions)), f"{locale} {code}"


@pytest.mark.parametrize("locale", LOCALES)
def test_an_answer_id_is_its_condition_code_as_text(locale):
    for item in full_list(locale).values():
        for answer in item["localizations"][0]["answers"]:
            assert answer["answer_id"] == str(answer["condition_code"])


@pytest.mark.parametrize("locale", LOCALES)
def test_desc_names_one_attribute_within_a_locale(locale):
    descs = [item["desc"] for item in full_list(locale).values()]
    assert len(descs) == len(set(descs))


@pytest.mark.parametrize("locale", LOCALES)
def test_choice_attributes_have_answers_and_entry_attributes_have_none(locale):
    for code, item in full_list(locale).items():
        answers = item["localizations"][0]["answers"]
        if item["type"] in (TYPE_SINGLE_CHOICE, TYPE_MULTIPLE_CHOICE):
            assert len(answers) >= 2, f"{locale} {code}"
        else:
            assert item["type"] in (TYPE_NUMERIC_RANGE, TYPE_FREE_TEXT)
            assert answers == [], f"{locale} {code}"


@pytest.mark.parametrize(
    ("locale", "income_units"),
    [
        ("en_US", 321),
        ("en_CA", 324),
        ("en_AU", 325),
        ("en_GB", 323),
        ("de_DE", 322),
        ("fr_FR", 322),
        ("es_ES", 322),
    ],
)
def test_age_and_income_are_ranges_with_units(locale, income_units):
    age = localization(locale, 212)["format"]
    assert (age["min"], age["max"]) == (16, 99)
    assert catalogue.range_units(locale, 212) == 311
    assert catalogue.range_units(locale, 213) == income_units
    assert catalogue.range_units(locale, 211) is None


@pytest.mark.parametrize(
    ("locale", "good", "bad"),
    [
        ("en_US", "10001", "1000"),
        ("en_CA", "K1A 0B1", "12345"),
        ("en_AU", "2000", "20000"),
        ("en_GB", "SW1A 1AA", "12345"),
        ("de_DE", "10115", "1011"),
        ("fr_FR", "75001", "7500A"),
        ("es_ES", "28013", "99999"),
    ],
)
def test_the_postal_code_is_free_entry_checked_by_a_pattern(locale, good, bad):
    item = catalogue.attribute(locale, 229)
    local = item["localizations"][0]
    assert item["type"] == TYPE_FREE_TEXT and local["answers"] == []
    assert re.fullmatch(local["format"]["regex"], good)
    assert not re.fullmatch(local["format"]["regex"], bad)


@pytest.mark.parametrize("locale", LOCALES)
def test_text_placeholders_name_attributes_of_the_same_locale(locale):
    items = full_list(locale)
    referenced = []
    for item in items.values():
        referenced += [int(c) for c in re.findall(r"%%(\d+)%%", item["localizations"][0]["text"])]
    assert len(referenced) >= 3
    assert set(referenced) <= set(items)


@pytest.mark.parametrize("locale", LOCALES)
def test_the_extended_catalogue_is_rich(locale):
    extended = full_list(locale, {2}).values()
    assert len(extended) >= 20
    assert {item["type"] for item in extended} == {TYPE_SINGLE_CHOICE, TYPE_MULTIPLE_CHOICE}
    assert any(not item["is_active"] for item in extended)
    assert 2 <= len(full_list(locale, {3})) <= 3


@pytest.mark.parametrize("locale", LOCALES)
def test_reading_all_pages_and_deduplicating_yields_every_attribute_once(locale):
    raw = all_pages(locale)
    unique = full_list(locale)
    assert len(raw) > len(unique), "no attribute opened a second page"
    assert list(unique) == sorted(unique)
    for code in unique:
        assert catalogue.attribute(locale, code) == unique[code]


def test_the_last_item_of_a_page_opens_the_next_page():
    first, total = catalogue.attributes_page("en_US", None, 1)
    second, _ = catalogue.attributes_page("en_US", None, 2)
    assert total >= 2 and len(first) == PAGE_SIZE
    assert second[0] == first[-1]


@settings(max_examples=25, deadline=None)
@given(
    locale=st.sampled_from(LOCALES),
    classes=st.sets(st.sampled_from([1, 2, 3, 4]), min_size=1),
)
def test_every_class_filter_pages_to_exactly_the_attributes_of_those_classes(locale, classes):
    expected = {code for code, item in full_list(locale).items() if item["class"] in classes}
    pages = full_list(locale, classes)
    assert set(pages) == expected
    assert {item["class"] for item in pages.values()} <= classes


def test_a_filter_with_several_classes_joins_their_attributes():
    extended, custom = full_list("de_DE", {2}), full_list("de_DE", {3})
    both = full_list("de_DE", {2, 3})
    assert set(both) == set(extended) | set(custom)
    assert {item["class"] for item in both.values()} == {2, 3}


def test_a_filter_that_matches_nothing_is_one_empty_page():
    assert catalogue.attributes_page("en_US", {7}, 1) == ([], 1)


def test_an_unknown_locale_raises_lookup_error():
    with pytest.raises(LookupError):
        catalogue.attributes_page("xx_XX", None, 1)
    with pytest.raises(LookupError):
        catalogue.attributes_page("en-US", None, 1)


@pytest.mark.parametrize("page", [0, -1, 4])
def test_a_page_outside_the_pages_raises_lookup_error(page):
    _, total = catalogue.attributes_page("en_US", None, 1)
    assert total == 3
    with pytest.raises(LookupError):
        catalogue.attributes_page("en_US", None, page)


def test_a_page_past_the_end_of_an_empty_filter_raises_lookup_error():
    with pytest.raises(LookupError):
        catalogue.attributes_page("en_US", {7}, 2)


def test_attribute_answers_none_for_an_unknown_code_or_locale():
    assert catalogue.attribute("en_US", 999999) is None
    assert catalogue.attribute("xx_XX", 211) is None


def test_changing_a_served_item_does_not_change_the_catalogue():
    items, _ = catalogue.attributes_page("fr_FR", None, 1)
    items[0]["localizations"][0]["answers"].clear()
    single = catalogue.attribute("fr_FR", items[0]["qualification_code"])
    single["desc"] = "changed"
    again = catalogue.attribute("fr_FR", items[0]["qualification_code"])
    assert again["desc"] != "changed"
    assert again["localizations"][0]["answers"] != []


def test_the_sandbox_serves_the_catalogue_pages_over_http(api):
    first, total = api.get_attributes_page("de_DE", [2, 3], 1)
    served = {item["qualification_code"]: item for item in first}
    for page in range(2, total + 1):
        items, _ = api.get_attributes_page("de_DE", [2, 3], page)
        served.update({item["qualification_code"]: item for item in items})
    assert total == catalogue.attributes_page("de_DE", {2, 3}, 1)[1] == 2
    assert served == full_list("de_DE", {2, 3})


def test_the_sandbox_answers_404_for_an_unknown_locale(api):
    with pytest.raises(ApiError) as raised:
        api.get_attributes_page("xx_XX")
    assert raised.value.status == 404


@pytest.mark.parametrize("locale", LOCALES)
def test_the_answers_of_each_attribute_are_numbered_from_111(locale):
    for code, item in full_list(locale).items():
        conditions = [a["condition_code"] for a in item["localizations"][0]["answers"]]
        if conditions and code != US_STATE:
            assert min(conditions) >= 111 and max(conditions) < 200, f"{locale} {code}"
            assert conditions == sorted(conditions), f"{locale} {code}"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (211, [111, 112, 113]),
        (214, [111, 112, 113, 114, 115, 116, 117]),
        (215, [111, 112, 113, 114, 115]),
        (216, [111, 112, 113, 114, 115, 116]),
        (217, [111, 112, 113, 114, 115, 116]),
        (219, [111, 112, 113]),
    ],
)
def test_en_us_offers_the_documented_answer_codes(code, expected):
    assert [a["condition_code"] for a in localization("en_US", code)["answers"]] == expected


@pytest.mark.parametrize(
    ("code", "condition_code", "english"),
    [
        (214, 111, "White"),
        (214, 112, "Hispanic or Latino"),
        (214, 113, "Black or African American"),
        (214, 114, "Asian"),
        (216, 111, "Less than high school"),
        (216, 112, "High school or equivalent"),
        (219, 111, "Desktop or laptop computer"),
        (219, 112, "Smartphone"),
        (219, 113, "Tablet"),
    ],
)
def test_documented_answer_codes_name_the_documented_answers(code, condition_code, english):
    answers = localization("en_US", code)["answers"]
    assert next(a["eng_text"] for a in answers if a["condition_code"] == condition_code) == english


def test_the_same_answer_code_names_different_answers_of_different_attributes():
    assert local_answer("en_US", 211, 111) == "Male"
    assert local_answer("en_US", 215, 111) == "Employed full-time"


def test_answers_that_only_other_markets_offer_are_numbered_after_the_us_ones():
    for locale in ["en_GB", "de_DE"]:
        codes = {a["condition_code"] for a in localization(locale, 215)["answers"]}
        assert {116, 117} <= codes
    assert {a["condition_code"] for a in localization("en_GB", 214)["answers"]} >= {118, 120}


def test_us_states_are_fips_codes():
    answers = {a["eng_text"]: a for a in localization("en_US", US_STATE)["answers"]}
    assert answers["Alabama"]["answer_id"] == "1"
    assert answers["California"]["condition_code"] == 6
    assert answers["District of Columbia"]["condition_code"] == 11
    assert answers["Wyoming"]["answer_id"] == "56"


@pytest.mark.parametrize(
    ("code", "good", "bad"), [(228, "6037", "Los Angeles"), (229, "90210", "9021")]
)
def test_county_and_zip_code_are_free_entry_in_en_us(code, good, bad):
    item = catalogue.attribute("en_US", code)
    local = item["localizations"][0]
    assert item["type"] == TYPE_FREE_TEXT and local["answers"] == []
    assert re.fullmatch(local["format"]["regex"], good)
    assert not re.fullmatch(local["format"]["regex"], bad)


def test_race_is_asked_in_english_markets_and_country_of_birth_in_the_others():
    for locale in ["en_US", "en_GB", "en_CA"]:
        assert catalogue.attribute(locale, 214)["desc"] == "Ethnicity"
        assert catalogue.attribute(locale, COUNTRY_OF_BIRTH) is None
    for locale in ["de_DE", "fr_FR", "es_ES"]:
        assert catalogue.attribute(locale, 214) is None
        assert catalogue.attribute(locale, COUNTRY_OF_BIRTH)["desc"] == "Country of Birth"


def test_the_device_is_a_hidden_core_attribute():
    device = catalogue.attribute("de_DE", 219)
    assert (device["desc"], device["class"], device["is_hidden"]) == ("Device Type", 1, True)


@pytest.mark.parametrize("locale", LOCALES)
def test_every_locale_serves_the_answer_code_scheme_over_http(api, locale):
    served = {}
    for page in api.iter_pages(api.get_attributes_page, localization=locale):
        served.update({item["qualification_code"]: item for item in page})
    assert len({item["desc"] for item in served.values()}) == len(served)
    for code, item in served.items():
        answers = item["localizations"][0]["answers"]
        texts = [a["local_text"] for a in answers]
        assert len(set(texts)) == len(texts), f"{locale} {code} repeats an answer name"
        if answers and code != US_STATE:
            assert min(a["condition_code"] for a in answers) >= 111, f"{locale} {code}"
