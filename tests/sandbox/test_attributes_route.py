"""GET /buyers/v3/attributes (4.6): query parameters, paging header and errors."""

from __future__ import annotations

import pytest


def test_a_page_of_the_catalogue_comes_with_total_pages(raw):
    response = raw.v3("GET", "/attributes?localization=en_US")
    assert response.status_code == 200
    assert int(response.headers["total_pages"]) >= 1
    assert any(item["qualification_code"] == 211 for item in response.json())


def test_the_class_filter_takes_a_comma_list(raw):
    response = raw.v3("GET", "/attributes?localization=en_US&class=1,3")
    assert response.status_code == 200
    assert {item["class"] for item in response.json()} <= {1, 3}


def test_every_page_reads_until_total_pages(api):
    pages = list(api.iter_pages(api.get_attributes_page, localization="en_US"))
    codes = {item["qualification_code"] for page in pages for item in page}
    assert len(pages) >= 2
    assert {211, 212} <= codes


def _all_pages(raw, query: str) -> list[list[dict]]:
    first = raw.v3("GET", f"/attributes?localization=en_US&{query}")
    pages = [first.json()]
    for page in range(2, int(first.headers["total_pages"]) + 1):
        pages.append(raw.v3("GET", f"/attributes?localization=en_US&{query}&page={page}").json())
    return pages


def test_the_limit_sets_the_page_size_as_spec_8_pages_the_catalogue(raw):
    # Spec 8: the attributes call pages "via page and limit", with the total_pages header.
    pages = _all_pages(raw, "limit=30")
    assert [len(page) for page in pages] == [30, 17]  # 46 questions, one repeated
    codes = {item["qualification_code"] for page in pages for item in page}
    assert codes == {item["qualification_code"] for page in _all_pages(raw, "") for item in page}


def test_a_limit_of_one_reads_one_question_a_page(raw):
    pages = _all_pages(raw, "class=1&limit=1")
    assert {len(page) for page in pages} == {1}
    assert len({page[0]["qualification_code"] for page in pages}) == len(pages)


@pytest.mark.parametrize("limit", ["0", "ten", "1001"])
def test_a_malformed_limit_is_refused(raw, limit):
    response = raw.v3("GET", f"/attributes?localization=en_US&limit={limit}")
    assert response.status_code == 400
    assert "limit" in response.json()["ps_api_response_message"]


def test_localization_is_required(raw):
    response = raw.v3("GET", "/attributes")
    assert response.status_code == 400
    assert "localization" in response.json()["ps_api_response_message"]


@pytest.mark.parametrize("query", ["class=core", "class=1,,2", "page=0", "page=two"])
def test_a_malformed_class_or_page_is_refused(raw, query):
    response = raw.v3("GET", f"/attributes?localization=en_US&{query}")
    assert response.status_code == 400


def test_an_unknown_locale_answers_404(raw):
    assert raw.v3("GET", "/attributes?localization=xx_XX").status_code == 404


def test_a_page_past_the_end_answers_404(raw):
    total = int(raw.v3("GET", "/attributes?localization=en_US").headers["total_pages"])
    assert raw.v3("GET", f"/attributes?localization=en_US&page={total + 1}").status_code == 404


def test_attributes_need_an_access_token(sandbox):
    import requests

    response = requests.get(sandbox.url + "/buyers/v3/attributes?localization=en_US", timeout=10)
    assert response.status_code == 401
