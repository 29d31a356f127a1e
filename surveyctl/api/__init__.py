"""The marketplace API client: the only code in surveyctl that speaks HTTP to the marketplace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from surveyctl.api.client import ApiClient

__all__ = ["ApiClient"]


def __getattr__(name: str) -> Any:
    # The client (requests, urllib3) loads on first use: `surveyctl.api.secrets`, which every
    # command's output passes through, must not bring the HTTP stack along.
    if name == "ApiClient":
        from surveyctl.api.client import ApiClient

        return ApiClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
