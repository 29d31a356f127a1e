"""Errors the sandbox answers with: an HTTP status plus the service's error body.

Every refusal becomes `{"ps_api_response_code": int, "ps_api_response_message": str}`. The
documented codes mean what the documentation says: 1006 "Survey not found" (404), 1007 QBP
outside draft, 1014 QLC without quotas, 1020 "You don't have permission for this survey" (403).
The others are sandbox decisions, listed in docs/api-assumptions.md. The transaction status
call has its own error body (`ps_error_code`, see routes/transaction_status.py).
"""

from __future__ import annotations

from werkzeug.exceptions import BadRequest

UNAUTHORIZED = 1001
FORBIDDEN = 1002
NOT_FOUND = 1003
INVALID_BODY = 1004
INVALID_QUERY = 1005
SURVEY_NOT_FOUND = 1006
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
SURVEY_FORBIDDEN = 1020
METHOD_NOT_ALLOWED = 1021
# 1022, 1024, 1025: respondent traffic and the open-ended check (routes/traffic.py)
UNKNOWN_TRANSACTION = 1023  # the open-ended check and the read of one transaction
STATUS_MOVE = 1026
RATE_LIMITED = 1027
PATCH_REFUSED = 1028
TOO_LARGE = 1029
SERVER_ERROR = 1098
CONTRACT_VIOLATION = 1099


# SQLite's codes for a write the disk refused (a full disk, a file that may not grow).
SQLITE_IOERR, SQLITE_FULL = 10, 13


def refused_by_the_disk(error: Exception) -> bool:
    """Whether a SQLite error is the disk refusing a write, rather than a bug of the sandbox."""
    return getattr(error, "sqlite_errorcode", 0) & 0xFF in (SQLITE_IOERR, SQLITE_FULL)


class SandboxError(Exception):
    """Base of the errors of the sandbox itself (it cannot start, its data is inconsistent).

    The sandbox shares no code with the client: the CLI turns these into its own message."""


class BadPathParameter(BadRequest):
    """A path parameter that cannot name anything (an id beyond 64 bits): a 400 raised while
    the URL is matched, where only werkzeug's HTTP exceptions are caught."""


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


SURVEY_NOT_FOUND_MESSAGE = "Survey not found"
SURVEY_FORBIDDEN_MESSAGE = "You don't have permission for this survey"


def survey_not_found() -> ApiProblem:
    """The documented answer for a survey that does not exist (public facts)."""
    return ApiProblem(404, SURVEY_NOT_FOUND, SURVEY_NOT_FOUND_MESSAGE)


def survey_forbidden() -> ApiProblem:
    """The documented answer for another buyer's survey (public facts)."""
    return ApiProblem(403, SURVEY_FORBIDDEN, SURVEY_FORBIDDEN_MESSAGE)


def conflict(code: int, message: str) -> ApiProblem:
    """409: the request is well formed but conflicts with the resource as it is (RFC 9110;
    for a patch, RFC 5789 2.2)."""
    return ApiProblem(409, code, message)


def not_found(what: str) -> ApiProblem:
    return ApiProblem(404, NOT_FOUND, f"{what} not found")


def forbidden(what: str) -> ApiProblem:
    return ApiProblem(403, FORBIDDEN, f"{what} belongs to another buyer")
