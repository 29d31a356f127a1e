"""What a respondent's final status costs, said before `transactions set-status` asks.

A complete (21) is paid at the transaction's `Expected Buyer CPI` (US dollars, spec 2.10; the
`Respondent Buyer CPI` of a session still open is 0 until it completes), so the question shows
that amount as the record gives it, never rounded to another. The public material says nothing
of what the other final statuses cost, so nothing is claimed for them.
"""

from __future__ import annotations

from surveyctl.money import dollars, usd_price
from surveyctl.statuses import COMPLETE

PRICE_FIELD = "Expected Buyer CPI"


def what_it_pays(record: dict, status: int) -> str:
    """One sentence on what giving `record` the final `status` pays; empty when the status is
    not a complete."""
    if status != COMPLETE:
        return ""
    price = dollars(record.get(PRICE_FIELD))
    if price is None:
        return f"A complete is paid; the transaction shows no {PRICE_FIELD} to say how much."
    return f"A complete is paid: {what_it_was_said_to_cost(record, status)}."


def what_it_was_said_to_cost(record: dict, status: int) -> str | None:
    """What `what_it_pays` says, in a few words, for the history to keep; None when it says
    nothing (a status other than a complete)."""
    if status != COMPLETE:
        return None
    price = dollars(record.get(PRICE_FIELD))
    if price is None:
        return f"an amount the transaction does not show (no {PRICE_FIELD})"
    return f"{usd_price(price)} in US dollars (the transaction's {PRICE_FIELD})"
