"""Errors a user can cause or fix.

Every exception here is caught by the CLI, printed as one sentence (with file:line where the
error comes from a file) and turned into exit code 1. Anything else is a bug in surveyctl.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where a value came from: a file, its 1-based line and column."""

    file: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column else "")


class SurveyctlError(Exception):
    """Base of every error surveyctl reports to the user instead of a traceback."""

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ConfigError(SurveyctlError):
    """surveyctl.yaml or the environment variables are wrong."""


class ApiError(SurveyctlError):
    """The marketplace answered a request with an error status."""

    def __init__(self, method: str, url: str, status: int, code: int | None, message: str):
        self.method = method
        self.url = url
        self.status = status
        self.code = code
        self.said = message  # the service's own words, for a message that quotes them
        detail = f" (code {code})" if code is not None else ""
        super().__init__(f"{method} {url} answered {status}{detail}: {message}")


class KeyRefused(SurveyctlError):
    """The marketplace refused the API key (401): every request of the command would be, so
    the command ends here rather than note each resource it could not read."""

    def __init__(self, refusal: ApiError, environment: str = "", variable: str = ""):
        self.refusal = refusal
        # The variable is named where the command knows it (the CLI adds it), so that the
        # sentence says which one to fix; a name, never its value.
        check = (
            f"check ${variable}, the api_key_env of environment {environment!r}"
            if variable
            else "check the key the environment's api_key_env names"
        )
        super().__init__(f"the marketplace refused the API key ({refusal}); {check}")


def key_refused(exc: Exception) -> KeyRefused | None:
    """The KeyRefused that `exc` is the cause of when it is a 401 answer, else None."""
    return KeyRefused(exc) if isinstance(exc, ApiError) and exc.status == 401 else None


class ConnectionFailed(SurveyctlError):
    """The marketplace could not be reached at all."""
