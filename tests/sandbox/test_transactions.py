"""Transaction reads (4.4, 4.5) over records stored the way the traffic simulator stores them."""

from __future__ import annotations

import pytest

from surveyctl.sandbox import transactions as spec


@pytest.fixture
def survey_with_transactions(raw, store, fresh_transaction_id):
    """A survey of buyer 1 with 5 transactions: statuses 21,21,18,17,21; suppliers 1,2,1,3,2."""
    survey_id = raw.create()["ps_survey_id"]
    ids = []
    for status, supplier in [(21, 1), (21, 2), (18, 1), (17, 3), (21, 2)]:
        record = store.insert_transaction(
            survey_id,
            {
                "Transaction ID": fresh_transaction_id(),
                "PSID": "psid-1",
                "Respondent Status Code": status,
                "Supplier ID": supplier,
                "Child1 Age": "7",
                "Parent ID": str(survey_id),
            },
        )
        ids.append(record["Transaction ID"])
    return survey_id, ids


def test_the_list_holds_every_key_of_the_record_and_parent_id(raw, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    response = raw.v3("GET", f"/surveys/{survey_id}/transactions")
    assert response.status_code == 200
    items = response.json()
    assert [item["Transaction ID"] for item in items] == ids
    assert set(items[0]) == set(spec.RECORD_KEYS) | {"Parent ID"}
    assert items[0]["Parent ID"] == str(survey_id)


def test_the_single_record_has_psid_and_survey_id_but_no_parent_id(raw, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    response = raw.v3("GET", f"/surveys/{survey_id}/transactions/{ids[0]}")
    assert response.status_code == 200
    record = response.json()
    assert set(record) == set(spec.RECORD_KEYS)
    assert record["PSID"] == "psid-1"
    assert record["Survey ID"] == survey_id


def test_children_without_a_value_are_empty_strings(raw, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    record = raw.v3("GET", f"/surveys/{survey_id}/transactions/{ids[0]}").json()
    assert record["Child1 Age"] == "7"
    assert record["Child2 Age"] == ""
    assert record["Child5 Gender"] == ""


def test_the_status_filter_takes_a_comma_list(api, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    items, _ = api.get_transactions_page(survey_id, status=[18, 17])
    assert [item["Transaction ID"] for item in items] == [ids[2], ids[3]]


def test_the_supplier_filter_takes_a_comma_list(api, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    items, _ = api.get_transactions_page(survey_id, supplier_ids=[2, 3])
    assert [item["Transaction ID"] for item in items] == [ids[1], ids[3], ids[4]]


def test_pages_are_cut_by_limit_and_counted_in_total_pages(api, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    pages = [api.get_transactions_page(survey_id, page=n, limit=2) for n in (1, 2, 3)]
    assert [total for _, total in pages] == [3, 3, 3]
    assert [item["Transaction ID"] for items, _ in pages for item in items] == ids


def test_a_page_past_the_end_is_empty(api, survey_with_transactions):
    survey_id, _ = survey_with_transactions
    items, total = api.get_transactions_page(survey_id, page=9, limit=2)
    assert items == []
    assert total == 3


@pytest.mark.parametrize("query", ["status=21,x", "supplier_ids=a", "page=0", "limit=100000"])
def test_a_malformed_query_parameter_is_refused(raw, survey_with_transactions, query):
    survey_id, _ = survey_with_transactions
    response = raw.v3("GET", f"/surveys/{survey_id}/transactions?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.json()["ps_api_response_message"]


def test_another_buyers_transactions_answer_403(raw2, survey_with_transactions):
    survey_id, ids = survey_with_transactions
    assert raw2.v3("GET", f"/surveys/{survey_id}/transactions").status_code == 403
    assert raw2.v3("GET", f"/surveys/{survey_id}/transactions/{ids[0]}").status_code == 403


def test_an_unknown_transaction_answers_404(raw, survey_with_transactions):
    survey_id, _ = survey_with_transactions
    assert raw.v3("GET", f"/surveys/{survey_id}/transactions/nope").status_code == 404


def test_a_record_with_an_unknown_key_is_not_stored(raw, store, fresh_transaction_id):
    survey_id = raw.create()["ps_survey_id"]
    with pytest.raises(ValueError, match="Favourite Colour"):
        store.insert_transaction(
            survey_id, {"Transaction ID": fresh_transaction_id(), "Favourite Colour": "red"}
        )
    assert raw.v3("GET", f"/surveys/{survey_id}/transactions").json() == []


def test_a_record_with_a_value_of_the_wrong_type_is_not_stored(raw, store, fresh_transaction_id):
    survey_id = raw.create()["ps_survey_id"]
    with pytest.raises(ValueError, match="Supplier ID"):
        store.insert_transaction(
            survey_id, {"Transaction ID": fresh_transaction_id(), "Supplier ID": "12"}
        )
