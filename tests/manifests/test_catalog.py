"""The catalogue client against the sandbox over HTTP: pages, de-duplication, cache."""

from __future__ import annotations

import json
import time

import pytest

from surveyctl.catalog import Catalog, CatalogError


@pytest.fixture
def make_catalog(api, tmp_path):
    def _make(**options) -> Catalog:
        return Catalog(lambda: api, "local", tmp_path / "cache", **options)

    return _make


def test_reads_every_page_and_keeps_each_question_once(api, make_catalog):
    raw = [
        item
        for page in api.iter_pages(api.get_attributes_page, localization="en_US")
        for item in page
    ]
    codes = [item["qualification_code"] for item in raw]
    assert len(codes) > len(set(codes)), "the sandbox repeats questions across pages"
    locale = make_catalog().locale("en_US")
    assert set(locale.by_code) == set(codes)
    assert len(locale) == len(set(codes))


def test_answers_carry_codes_and_texts(make_catalog):
    gender = make_catalog().locale("en_US").by_name("gender")
    assert gender.qualification_code == 211
    assert gender.answer("FEMALE").condition_code == "112"


def test_second_read_comes_from_the_cache(api, make_catalog):
    make_catalog().locale("en_GB")
    before = api.request_counts.get("GET attributes", 0)
    again = make_catalog().locale("en_GB")
    assert api.request_counts.get("GET attributes", 0) == before
    assert again.by_name("Region").qualification_code == 230


def test_refresh_fetches_despite_the_cache(api, make_catalog):
    make_catalog().locale("de_DE")
    before = api.request_counts.get("GET attributes", 0)
    make_catalog(refresh=True).locale("de_DE")
    assert api.request_counts.get("GET attributes", 0) > before


def test_an_expired_cache_is_fetched_again(api, make_catalog, tmp_path):
    make_catalog().locale("fr_FR")
    cache_file = tmp_path / "cache" / "catalog" / "local" / "fr_FR.json"
    data = json.loads(cache_file.read_text())
    data["fetched_at"] = time.time() - 7200
    cache_file.write_text(json.dumps(data))
    before = api.request_counts.get("GET attributes", 0)
    make_catalog(ttl=3600).locale("fr_FR")
    assert api.request_counts.get("GET attributes", 0) > before


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: entry.pop("qualification_code"),
        lambda entry: entry.update(qualification_code="211"),
        lambda entry: entry["localizations"][0].update(answers=5),
    ],
    ids=["no-code", "code-as-text", "answers-not-a-list"],
)
def test_a_cache_entry_of_the_wrong_shape_is_fetched_again(api, make_catalog, tmp_path, damage):
    make_catalog().locale("en_US")
    cache_file = tmp_path / "cache" / "catalog" / "local" / "en_US.json"
    data = json.loads(cache_file.read_text())
    damage(next(e for e in data["attributes"] if e["qualification_code"] == 211))
    cache_file.write_text(json.dumps(data))
    before = api.request_counts.get("GET attributes", 0)
    gender = make_catalog().locale("en_US").by_name("gender")
    assert api.request_counts.get("GET attributes", 0) > before
    assert gender.answer("FEMALE").condition_code == "112"


def test_a_cache_entry_that_is_no_object_is_fetched_again(api, make_catalog, tmp_path):
    make_catalog().locale("en_US")
    cache_file = tmp_path / "cache" / "catalog" / "local" / "en_US.json"
    data = json.loads(cache_file.read_text())
    data["attributes"][0] = 5
    cache_file.write_text(json.dumps(data))
    before = api.request_counts.get("GET attributes", 0)
    assert len(make_catalog().locale("en_US")) == len(data["attributes"])
    assert api.request_counts.get("GET attributes", 0) > before


def test_an_attribute_served_with_answers_that_are_not_a_list_is_left_out(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            yield [
                {"qualification_code": 211, "desc": "Gender", "localizations": [{"answers": 5}]},
                {"qualification_code": 212, "desc": "Age", "localizations": [{"answers": []}]},
            ]

    locale = Catalog(lambda: Service(), "local", tmp_path / "cache").locale("en_US")
    assert set(locale.by_code) == {212}


def test_cache_is_kept_per_environment(api, tmp_path):
    Catalog(lambda: api, "staging", tmp_path).locale("en_US")
    Catalog(lambda: api, "production", tmp_path).locale("en_US")
    assert (tmp_path / "catalog" / "staging" / "en_US.json").is_file()
    assert (tmp_path / "catalog" / "production" / "en_US.json").is_file()


def test_no_connection_is_opened_while_the_cache_is_fresh(api, tmp_path):
    Catalog(lambda: api, "local", tmp_path).locale("en_US")

    def no_client():
        raise AssertionError("the client was asked for")

    assert Catalog(no_client, "local", tmp_path).locale("en_US").by_code


def test_unknown_locale_is_a_catalog_error(make_catalog):
    with pytest.raises(CatalogError, match="has no attribute catalogue for locale 'xx_XX'"):
        make_catalog().locale("xx_XX")
