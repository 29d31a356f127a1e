"""Amounts of money (US dollars, public facts) computed exactly.

Prices come from manifests and the service as JSON numbers, which Python reads as floats: a
float holds 2.675 as 2.67499999..., so a product or a sum of them rounded to the cent can end
a cent short. Amounts are therefore computed on the decimal the number was written as, and
rounded once, half up, to the cent; the result is handed on as the float of a whole number of
cents, which every renderer prints back as exactly those cents.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def dollars(value: object) -> Decimal | None:
    """The decimal a price was written as (`2.675`, `"1.30"`, `10`); None when it is no
    number (absent, empty, a boolean, text that is not a number)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))  # str(): the shortest text of a float, as it was written
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def cents(amount: Decimal) -> float:
    """`amount` rounded half up to the cent, as a float (2.675 -> 2.68)."""
    try:
        return float(amount.quantize(CENT, rounding=ROUND_HALF_UP))
    except InvalidOperation:
        # More digits than the context's 28 (a price of 1e308 from the service): no cent of
        # it can be told, and the amount is shown as it is.
        return float(amount)


def usd(amount: float | None) -> str:
    """`$1,234.50`; `n/a` for an amount that is not known."""
    return "n/a" if amount is None else f"${amount:,.2f}"


def usd_price(price: Decimal) -> str:
    """A price per complete as it is paid: cents as cents (`$2.50`), and a price written with
    more decimals in full (`$2.675`), never rounded to a price that is not the one paid."""
    return f"${price:,.2f}" if price == price.quantize(CENT) else f"${price:,}"


def usd_delta(before: float | None, after: float | None) -> str:
    """`+$100.00` or `-$12.50` from `before` to `after` (None counts 0), without float drift."""
    delta = (dollars(after) or Decimal(0)) - (dollars(before) or Decimal(0))
    sign = "+" if delta >= 0 else "-"
    return f"{sign}${abs(delta):,.2f}"


def total(amounts: Iterable[float | None]) -> float:
    """The sum of amounts already in cents (None counts 0), without float drift."""
    return cents(sum((dollars(a) or Decimal(0) for a in amounts), Decimal(0)))
