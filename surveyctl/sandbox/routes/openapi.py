"""`GET /openapi.json`: the OpenAPI 3.1 description of the Buyer API (see openapi.py).

Served without an access-token, like any published API description; it names the sandbox's
own host as the server.
"""

from __future__ import annotations

from flask import Blueprint, request

from surveyctl.sandbox.contract import reply, strict_mode
from surveyctl.sandbox.openapi import openapi_document

blueprint = Blueprint("openapi", __name__)


@blueprint.get("/openapi.json")
def openapi():
    document = openapi_document(strict=strict_mode())
    document["servers"] = [{"url": request.host_url.rstrip("/"), "description": "this sandbox"}]
    return reply(document, 200)
