"""Buyer accounts: access tokens and the buyer each one acts for.

Two buyers exist by default (`sandbox-buyer-1` -> 1, `sandbox-buyer-2` -> 2); each has the
shared secret `sandbox-secret-<id>` for the return link's hash, kept in the store. Tokens added
with `--key TOKEN=BUYER_ID` live for one run of the server.
"""

from __future__ import annotations

from flask import g, request

from surveyctl.sandbox.errors import UNAUTHORIZED, ApiProblem

DEFAULT_KEYS: dict[str, int] = {"sandbox-buyer-1": 1, "sandbox-buyer-2": 2}
TOKEN_HEADER = "access-token"


class Accounts:
    """Resolves access tokens to buyer ids."""

    def __init__(self, extra_keys: dict[str, int] | None = None):
        self.keys = {**DEFAULT_KEYS, **(extra_keys or {})}

    def buyer_ids(self) -> set[int]:
        return set(self.keys.values())

    def authenticate(self, refusal: int = 401) -> int:
        """The buyer of the request's access-token header; `refusal` (401, or 403 on the calls
        that list 403 and not 401, spec 5.2) when it is missing or unknown."""
        token = request.headers.get(TOKEN_HEADER)
        if not token:
            raise ApiProblem(refusal, UNAUTHORIZED, "the access-token header is missing")
        buyer_id = self.keys.get(token)
        if buyer_id is None:
            raise ApiProblem(refusal, UNAUTHORIZED, "the access-token is not valid")
        g.buyer_id = buyer_id
        return buyer_id


def current_buyer() -> int:
    """The buyer the current /buyers request acts for (set by the app before the view)."""
    return g.buyer_id
