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


def test_an_unknown_transaction_answers_400_as_the_spec_lists(raw, survey_with_transactions):
    # Spec 4.5 and 7 list 400 and 403 for this call, not 404 (404 stays for an unknown survey).
    survey_id, _ = survey_with_transactions
    response = raw.v3("GET", f"/surveys/{survey_id}/transactions/nope")
    assert response.status_code == 400
    assert response.json()["ps_api_response_message"].startswith("Invalid transaction")


def test_a_transaction_of_another_survey_answers_400(raw, survey_with_transactions):
    _, ids = survey_with_transactions
    other = raw.create()["ps_survey_id"]
    assert raw.v3("GET", f"/surveys/{other}/transactions/{ids[0]}").status_code == 400


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


def test_filtered_pages_are_cut_among_the_matching_records(api, survey_with_transactions):
    survey_id, ids = survey_with_transactions  # statuses 21,21,18,17,21
    pages = [api.get_transactions_page(survey_id, status=[21], page=n, limit=2) for n in (1, 2)]
    assert [[item["Transaction ID"] for item in items] for items, _ in pages] == [
        [ids[0], ids[1]],
        [ids[4]],
    ]
    assert [total for _, total in pages] == [2, 2]


def test_records_stored_together_are_listed_like_records_stored_one_by_one(
    raw, store, fresh_transaction_id
):
    survey_id = raw.create()["ps_survey_id"]
    one = store.insert_transaction(survey_id, {"Transaction ID": fresh_transaction_id()})
    batch = [{"Transaction ID": fresh_transaction_id(), "Supplier ID": n} for n in range(3)]
    assert store.insert_transactions(survey_id, batch) == 3
    listed = raw.v3("GET", f"/surveys/{survey_id}/transactions").json()
    assert [item["Transaction ID"] for item in listed] == [one["Transaction ID"]] + [
        record["Transaction ID"] for record in batch
    ]
    assert [list(item) for item in listed[1:]] == [list(listed[0])] * 3


def test_a_batch_with_one_bad_record_stores_none(raw, store, fresh_transaction_id):
    survey_id = raw.create()["ps_survey_id"]
    batch = [{"Transaction ID": fresh_transaction_id()}, {"Transaction ID": ""}]
    with pytest.raises(ValueError, match="Transaction ID"):
        store.insert_transactions(survey_id, batch)
    assert raw.v3("GET", f"/surveys/{survey_id}/transactions").json() == []


def test_records_of_an_older_sandbox_file_list_their_keys_in_the_same_order(
    tmp_path, fresh_transaction_id
):
    import json

    from surveyctl.sandbox.store import Store

    old = Store(tmp_path / "old.db")
    with old.write() as conn:
        survey_id = old.insert_survey(conn, 1, {"completes_required": 10}, [])
    for _ in range(2):
        old.insert_transaction(survey_id, {"Transaction ID": fresh_transaction_id()})
    with old.write() as conn:  # as files written before records were stored sorted
        for seq, text in conn.execute("SELECT seq, record FROM transactions").fetchall():
            unsorted = json.dumps(dict(reversed(json.loads(text).items())))
            conn.execute("UPDATE transactions SET record = ? WHERE seq = ?", (unsorted, seq))
    old.close()
    reopened = Store(tmp_path / "old.db")
    texts, total = reopened.transactions_page_json(survey_id, None, None, 1, 10)
    reopened.close()
    assert total == 2
    assert [list(json.loads(text)) for text in texts] == [sorted(json.loads(texts[0]))] * 2
