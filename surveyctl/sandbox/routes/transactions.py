"""Transaction reads of `/buyers/v3` (4.4, 4.5) over the stored records.

The list is paged from 1 with `limit` (default 100, at most 1000) and says how many pages there
are in the `total_pages` header; a page past the end is an empty list. A list item is the whole
stored record, `Parent ID` included, so the page is the stored JSON texts joined into an array.
"""

from __future__ import annotations

import math

from flask import Blueprint

from surveyctl.sandbox import transactions
from surveyctl.sandbox.contract import reply, reply_encoded
from surveyctl.sandbox.current import get_store
from surveyctl.sandbox.errors import UNKNOWN_TRANSACTION, bad_request
from surveyctl.sandbox.query import integer_list, positive_int
from surveyctl.sandbox.routes.surveys import owned_survey

blueprint = Blueprint("transactions", __name__, url_prefix="/buyers/v3")

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


@blueprint.get("/surveys/<int:survey_id>/transactions")
def list_transactions(survey_id: int):
    store = get_store()
    statuses, suppliers = integer_list("status"), integer_list("supplier_ids")
    page = positive_int("page", 1)
    limit = positive_int("limit", DEFAULT_LIMIT, MAX_LIMIT)
    owned_survey(store, survey_id)
    texts, total = store.transactions_page_json(survey_id, statuses, suppliers, page, limit)
    pages = max(1, math.ceil(total / limit))
    return reply_encoded(
        "[" + ", ".join(texts) + "]",
        200,
        "transactions-list.response.json",
        {"total_pages": str(pages)},
    )


@blueprint.get("/surveys/<int:survey_id>/transactions/<path:transaction_id>")
def get_transaction(survey_id: int, transaction_id: str):
    store = get_store()
    owned_survey(store, survey_id)
    record = store.transaction(transaction_id)
    if record is None or record["Survey ID"] != survey_id:
        # Spec 4.5 lists 400 and 403 for this call, no 404: the transaction id is what is bad.
        raise bad_request(
            UNKNOWN_TRANSACTION,
            f"Invalid transaction: {transaction_id!r} is not a transaction of survey {survey_id}",
        )
    return reply(transactions.single(record), 200, "transaction.response.json")
