"""The catalogue client against the sandbox over HTTP: pages, de-duplication, cache."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from surveyctl import catalog
from surveyctl.catalog import Catalog, CatalogError

KEY = "the-environments-api-key"


@pytest.fixture
def make_catalog(api, tmp_path):
    def _make(**options) -> Catalog:
        options.setdefault("signing_key", KEY)
        return Catalog(lambda: api, "local", tmp_path / "cache", **options)

    return _make


def _rewrite(cache_file, data: dict, key: str = KEY) -> None:
    """Writes `data` to the cache file signed with `key`, as a catalogue with it would."""
    data["signature"] = Catalog(lambda: None, "local", signing_key=key)._signature(data)
    cache_file.write_text(json.dumps(data))


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


def _cached(make_catalog, tmp_path, locale: str = "en_US") -> tuple[Path, dict]:
    """The cache file a first read of `locale` wrote, and what it holds."""
    make_catalog().locale(locale)
    cache_file = tmp_path / "cache" / "catalog" / "local" / f"{locale}.json"
    return cache_file, json.loads(cache_file.read_text())


def _fetched(api, read: Callable[[], Any]) -> tuple[bool, Any]:
    """Whether `read` fetched the catalogue from the service, and what it returned."""
    before = api.request_counts.get("GET attributes", 0)
    result = read()
    return api.request_counts.get("GET attributes", 0) > before, result


def test_an_expired_cache_is_fetched_again(api, make_catalog, tmp_path):
    cache_file, data = _cached(make_catalog, tmp_path, "fr_FR")
    data["fetched_at"] = time.time() - 7200
    _rewrite(cache_file, data)
    fetched, _ = _fetched(api, lambda: make_catalog(ttl=3600).locale("fr_FR"))
    assert fetched


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
    cache_file, data = _cached(make_catalog, tmp_path)
    damage(next(e for e in data["attributes"] if e["qualification_code"] == 211))
    _rewrite(cache_file, data)
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.by_name("gender").answer("FEMALE").condition_code == "112"


def test_a_cache_entry_that_is_no_object_is_fetched_again(api, make_catalog, tmp_path):
    cache_file, data = _cached(make_catalog, tmp_path)
    data["attributes"][0] = 5
    _rewrite(cache_file, data)
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert len(locale) == len(data["attributes"])


def _male_made_female(data: dict) -> None:
    """A planted catalogue: 'Male' of Gender given the code of Female."""
    gender = next(e for e in data["attributes"] if e["qualification_code"] == 211)
    for answer in gender["localizations"][0]["answers"]:
        if answer.get("eng_text") == "Male":
            answer["condition_code"] = "112"


def test_a_cache_file_signed_without_the_environments_key_is_not_read(api, make_catalog, tmp_path):
    cache_file, data = _cached(make_catalog, tmp_path)
    _male_made_female(data)
    _rewrite(cache_file, data, key="a-key-a-pull-request-could-know")
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.by_name("Gender").answer("Male").condition_code == "111"


def test_a_cache_file_signed_with_the_key_is_read_as_it_is(api, make_catalog, tmp_path):
    # The check above is the signature's: the same planted file signed with the key is read.
    cache_file, data = _cached(make_catalog, tmp_path)
    _male_made_female(data)
    _rewrite(cache_file, data)
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert not fetched
    assert locale.by_name("Gender").answer("Male").condition_code == "112"


def test_an_unsigned_cache_file_is_fetched_again(api, make_catalog, tmp_path):
    cache_file, data = _cached(make_catalog, tmp_path)
    del data["signature"]
    cache_file.write_text(json.dumps(data))
    fetched, _ = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched


def test_a_cache_file_dated_in_the_future_is_fetched_again(api, make_catalog, tmp_path):
    cache_file, data = _cached(make_catalog, tmp_path)
    data["fetched_at"] = time.time() + 3600
    _rewrite(cache_file, data)
    fetched, _ = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.update(format=catalog.CACHE_FORMAT + 1),
        lambda data: data.update(fetched_at="yesterday"),
    ],
    ids=["another-format", "time-not-a-number"],
)
def test_a_signed_cache_file_of_another_format_or_time_is_fetched_again(
    api, make_catalog, tmp_path, damage
):
    cache_file, data = _cached(make_catalog, tmp_path)
    damage(data)
    _rewrite(cache_file, data)
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.by_name("gender").answer("FEMALE").condition_code == "112"


def test_a_cache_that_cannot_be_written_does_not_stop_the_read(api, make_catalog, tmp_path):
    (tmp_path / "cache").write_text("a file where the cache folder would be")
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.by_name("gender").qualification_code == 211


def test_the_cache_file_of_another_locale_is_not_read_in_its_place(api, make_catalog, tmp_path):
    cache_file, _ = _cached(make_catalog, tmp_path, "en_GB")
    (cache_file.parent / "en_US.json").write_text(cache_file.read_text())
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.locale == "en_US"


def test_the_cache_file_of_another_environment_is_not_read_in_its_place(api, tmp_path):
    # Staging and production may share a key; each keeps its own catalogue all the same.
    staging = Catalog(lambda: api, "staging", tmp_path / "cache", signing_key=KEY)
    staging.locale("en_US")
    folder = tmp_path / "cache" / "catalog"
    (folder / "local").mkdir()
    (folder / "local" / "en_US.json").write_text((folder / "staging" / "en_US.json").read_text())
    local = Catalog(lambda: api, "local", tmp_path / "cache", signing_key=KEY)
    local.locale("en_US")
    assert local.fetched == ["en_US"]


def test_a_cache_file_past_the_size_bound_is_fetched_again(
    api, make_catalog, tmp_path, monkeypatch
):
    cache_file, _ = _cached(make_catalog, tmp_path)
    size = cache_file.stat().st_size
    monkeypatch.setattr(catalog, "CACHE_BYTES", size - 1)
    fetched, _ = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched


def test_without_a_key_nothing_is_cached(api, make_catalog, tmp_path):
    make_catalog(signing_key=None).locale("en_US")
    assert not (tmp_path / "cache").exists()


def test_an_attribute_served_with_answers_that_are_not_a_list_is_left_out(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            yield [
                {"qualification_code": 211, "desc": "Gender", "localizations": [{"answers": 5}]},
                {"qualification_code": 212, "desc": "Age", "localizations": [{"answers": []}]},
            ]

    locale = Catalog(lambda: Service(), "local", tmp_path / "cache", signing_key=KEY).locale(
        "en_US"
    )
    assert set(locale.by_code) == {212}


def test_cache_is_kept_per_environment(api, tmp_path):
    Catalog(lambda: api, "staging", tmp_path, signing_key=KEY).locale("en_US")
    Catalog(lambda: api, "production", tmp_path, signing_key=KEY).locale("en_US")
    assert (tmp_path / "catalog" / "staging" / "en_US.json").is_file()
    assert (tmp_path / "catalog" / "production" / "en_US.json").is_file()


def test_no_connection_is_opened_while_the_cache_is_fresh(api, tmp_path):
    Catalog(lambda: api, "local", tmp_path, signing_key=KEY).locale("en_US")

    def no_client():
        raise AssertionError("the client was asked for")

    assert Catalog(no_client, "local", tmp_path, signing_key=KEY).locale("en_US").by_code


def test_unknown_locale_is_a_catalog_error(make_catalog):
    with pytest.raises(CatalogError, match="has no attribute catalogue for locale 'xx_XX'"):
        make_catalog().locale("xx_XX")


def test_an_unknown_locale_names_the_locales_whose_catalogue_is_cached(api, make_catalog):
    make_catalog().locale("en_GB")
    with pytest.raises(CatalogError, match="served so far: en_GB$"):
        make_catalog().locale("xx_XX")


def test_a_cache_file_whose_answers_were_changed_after_signing_is_fetched_again(
    api, make_catalog, tmp_path
):
    cache_file, data = _cached(make_catalog, tmp_path)
    signature = data["signature"]
    _male_made_female(data)
    data["signature"] = signature
    cache_file.write_text(json.dumps(data))
    fetched, locale = _fetched(api, lambda: make_catalog().locale("en_US"))
    assert fetched
    assert locale.by_name("Gender").answer("Male").condition_code == "111"


def test_an_answer_is_found_by_its_english_text_in_another_locale(make_catalog):
    gender = make_catalog().locale("de_DE").by_code[211]
    male = next(answer for answer in gender.answers if answer.condition_code == "111")
    assert male.local_text != male.eng_text
    assert gender.answer(male.eng_text.upper()) == male


def test_a_locale_entry_is_found_whatever_the_spelling_of_its_locale(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            entries = [
                {"locale": "en-GB", "answers": [{"condition_code": 1, "local_text": "Colour"}]},
                {"locale": "EN-us", "answers": [{"condition_code": 1, "local_text": "Color"}]},
            ]
            yield [{"qualification_code": 9, "desc": "Hue", "localizations": entries}]

    locale = Catalog(lambda: Service(), "local", None).locale("en_US")
    assert locale.by_code[9].answers[0].local_text == "Color"


def test_an_attribute_without_its_locales_entry_takes_the_first_one(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            entries = [{"locale": "en_GB", "answers": [{"condition_code": 1, "local_text": "Yes"}]}]
            yield [{"qualification_code": 9, "desc": "Consent", "localizations": entries}]

    locale = Catalog(lambda: Service(), "local", None).locale("en_US")
    assert locale.by_code[9].answers[0].local_text == "Yes"


def test_a_locale_the_service_refuses_as_a_bad_request_is_a_catalog_error(make_catalog):
    with pytest.raises(CatalogError, match=r"locale '' \(the service answered 400: "):
        make_catalog().locale("")


def test_a_question_repeated_on_a_later_page_keeps_its_first_answers(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            for text in ("Yes", "Oui"):
                answers = [{"condition_code": 1, "local_text": text}]
                yield [
                    {
                        "qualification_code": 9,
                        "desc": "Consent",
                        "localizations": [{"answers": answers}],
                    }
                ]

    locale = Catalog(lambda: Service(), "local", None).locale("en_US")
    assert locale.by_code[9].answers[0].local_text == "Yes"


def test_of_two_questions_of_one_name_the_first_is_found_by_it(tmp_path):
    class Service:
        get_attributes_page = None

        def iter_pages(self, fetch, **_):
            yield [{"qualification_code": code, "desc": "Region"} for code in (96, 97)]

    locale = Catalog(lambda: Service(), "local", None).locale("en_US")
    assert locale.by_name("region").qualification_code == 96


def test_the_answers_of_another_locale_are_listed_in_english(make_catalog):
    gender = make_catalog().locale("de_DE").by_code[211]
    assert gender.answer_texts() == [answer.eng_text for answer in gender.answers]
    assert gender.answer_texts() != [answer.local_text for answer in gender.answers]
