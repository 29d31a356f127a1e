"""The sandbox's routes, one blueprint per module; `BLUEPRINTS` is what the app serves.

A new route module adds its blueprint to `BLUEPRINTS` (the app registers them in this order).
"""

from flask import Blueprint

from surveyctl.sandbox.routes import (
    adjustments,
    attributes,
    groups,
    openapi,
    patch,
    performance,
    quotas,
    sandbox,
    surveys,
    traffic,
    transaction_status,
    transactions,
)

BLUEPRINTS: list[Blueprint] = [
    surveys.blueprint,
    quotas.blueprint,
    patch.blueprint,
    performance.blueprint,
    transaction_status.blueprint,
    groups.blueprint,
    transactions.blueprint,
    adjustments.blueprint,
    attributes.blueprint,
    sandbox.blueprint,
    traffic.blueprint,
    openapi.blueprint,
]
