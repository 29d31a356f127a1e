"""The attribute catalogue route of `/buyers/v3` (4.6), served from `catalogue`.

Query: `localization` (required), `class` (a comma list), `page` from 1 and `limit` (spec 8 pages
this call "via page and limit"; 20 by default, at most 1000 as the other lists), with the
`total_pages` header.
"""

from __future__ import annotations

from flask import Blueprint, request

from surveyctl.sandbox import catalogue
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.errors import INVALID_QUERY, NOT_FOUND, ApiProblem, bad_request
from surveyctl.sandbox.query import integer_list, positive_int

blueprint = Blueprint("attributes", __name__, url_prefix="/buyers/v3")

MAX_LIMIT = 1000  # as the survey, quota and transaction lists


@blueprint.get("/attributes")
def attributes():
    locale = request.args.get("localization")
    if not locale:
        raise bad_request(INVALID_QUERY, "query parameter localization is required")
    classes = integer_list("class")
    page = positive_int("page", 1)
    limit = positive_int("limit", catalogue.PAGE_SIZE, MAX_LIMIT)
    wanted = set(classes) if classes else None
    try:
        items, total = catalogue.attributes_page(locale, wanted, page, limit)
    except LookupError as exc:
        raise ApiProblem(404, NOT_FOUND, str(exc)) from None
    return reply(items, 200, "attributes.response.json", {"total_pages": str(total)})
