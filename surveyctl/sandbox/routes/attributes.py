"""The attribute catalogue route of `/buyers/v3` (4.6), served from `catalogue`."""

from __future__ import annotations

from flask import Blueprint, request

from surveyctl.sandbox import catalogue
from surveyctl.sandbox.contract import reply
from surveyctl.sandbox.errors import INVALID_QUERY, NOT_FOUND, ApiProblem, bad_request
from surveyctl.sandbox.query import integer_list, positive_int

blueprint = Blueprint("attributes", __name__, url_prefix="/buyers/v3")


@blueprint.get("/attributes")
def attributes():
    locale = request.args.get("localization")
    if not locale:
        raise bad_request(INVALID_QUERY, "query parameter localization is required")
    classes = integer_list("class")
    page = positive_int("page", 1)
    try:
        items, total = catalogue.attributes_page(locale, set(classes) if classes else None, page)
    except LookupError as exc:
        raise ApiProblem(404, NOT_FOUND, str(exc)) from None
    return reply(items, 200, "attributes.response.json", {"total_pages": str(total)})
