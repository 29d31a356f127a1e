"""A sandbox whose answers take the shapes the service's public documentation shows.

The sandbox answers as the spec's sample shapes do; the documentation shows the real service
answering differently in places (public facts, "Shapes seen in documented responses"): extra
survey fields (`mod_on`, `crtd_on`), `offer_price` as an integer, range bounds and some
transaction numbers as text, date-times like `2025-03-05 09:27:31`, a single transaction as an
array of one object, and 401 bodies with `msg`. `DocumentedShapes` rewrites the sandbox's
answers that way, so the client is tested against them over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path

from flask import Response, request

from surveyctl.sandbox.app import create_app
from surveyctl.sandbox.store import Store

from ..loopback import LoopbackServer

EPOCH_MS = 1741166851000
TEXT_NUMBERS = ("Respondent Buyer CPI", "Expected Buyer CPI", "Expected Buyer CPI Fx")
DATE_TIMES = ("PS Entry DateTime", "Buyer Survey Entry Datetime", "Buyer Survey Return Datetime",
              "PS Exit Datetime")  # fmt: skip


def _ranges_as_text(targets: list) -> None:
    for target in targets or []:
        for range_set in target.get("range_sets") or []:
            range_set["from"], range_set["to"] = str(range_set["from"]), str(range_set["to"])


def survey_as_documented(survey: dict) -> dict:
    survey["mod_on"], survey["crtd_on"] = EPOCH_MS, EPOCH_MS - 86_400_000
    price = survey.get("offer_price")
    if isinstance(price, float) and price.is_integer():
        survey["offer_price"] = int(price)
    _ranges_as_text(survey.get("qualifications"))
    for quota in survey.get("quotas") or []:
        _ranges_as_text(quota.get("criteria"))
    return survey


def transaction_as_documented(record: dict) -> dict:
    for key in TEXT_NUMBERS:
        record[key] = f"{record[key]:.2f}"
    record["Respondent LOI"] = str(record["Respondent LOI"] or "")
    for key in DATE_TIMES:
        if record[key]:
            record[key] = record[key].replace("T", " ")[:19]
    record.setdefault("Parent ID", "")
    return record


def _reshape(response: Response) -> Response:
    if not response.is_json:
        return response
    body, path = response.get_json(), request.path
    if response.status_code == 401:
        body = {"msg": "Invalid access token"}
    elif "/transactions" in path and isinstance(body, list):
        body = [transaction_as_documented(r) for r in body]
    elif "/transactions/" in path and isinstance(body, dict) and "Transaction ID" in body:
        body = [transaction_as_documented(body)]
    elif isinstance(body, dict) and "ps_survey_id" in body and "live_url" in body:
        body = survey_as_documented(body)
    elif isinstance(body, list) and body and isinstance(body[0], dict) and "live_url" in body[0]:
        body = [survey_as_documented(s) for s in body]
    response.set_data(json.dumps(body))
    return response


class DocumentedShapes(LoopbackServer):
    """The sandbox app over its own data file, answering in the documented shapes."""

    def __init__(self, db_path: Path):
        self.store = Store(db_path)
        app = create_app(self.store)
        app.after_request(_reshape)
        super().__init__(app)

    def stop(self) -> None:
        super().stop()
        self.store.close()
