"""The marketplace API client: the only code in surveyctl that speaks HTTP to the marketplace."""

from surveyctl.api.client import ApiClient

__all__ = ["ApiClient"]
