"""Errors the sandbox answers with: an HTTP status plus the service's error body.

Every refusal becomes `{"ps_api_response_code": int, "ps_api_response_message": str}`. The
codes other than 1007 (QBP outside draft, public facts) and 1014 (QLC without quotas, spec 7)
are sandbox decisions, listed in docs/api-assumptions.md.
"""

from __future__ import annotations

UNAUTHORIZED = 1001
FORBIDDEN = 1002
NOT_FOUND = 1003
INVALID_BODY = 1004
INVALID_QUERY = 1005
STATUS_MOVE = 1006
QBP_NOT_DRAFT = 1007
QBP_UNKNOWN_QUOTA = 1008
DUPLICATE_QUOTA = 1009
SURVEY_CLOSED = 1010
GROUP_EXISTS = 1011
RECONTACT_GROUPED = 1012
UNKNOWN_GROUP = 1013
QLC_NEEDS_QUOTAS = 1014
QLC_NEEDS_MULTIPLE_QUOTAS = 1015
QLC_OPTION_WITHOUT_QLC = 1016
QLC_FROZEN = 1017
CATALOGUE = 1018
UNAVAILABLE = 1019
RATE_LIMITED = 1020
METHOD_NOT_ALLOWED = 1021
CONTRACT_VIOLATION = 1099


class ApiProblem(Exception):
    """A request the sandbox refuses; the app turns it into the error body."""

    def __init__(self, status: int, code: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}

    def body(self) -> dict:
        return {"ps_api_response_code": self.code, "ps_api_response_message": self.message}


def bad_request(code: int, message: str) -> ApiProblem:
    return ApiProblem(400, code, message)


def not_found(what: str) -> ApiProblem:
    return ApiProblem(404, NOT_FOUND, f"{what} not found")


def forbidden(what: str) -> ApiProblem:
    return ApiProblem(403, FORBIDDEN, f"{what} belongs to another buyer")
