"""HTTP client of the marketplace API (spec section 4): `ApiClient`, one per environment.

It is made of the calls of each resource, one module each, over one transport:

- `surveyctl.api.transport`: the session, retries, throttle and the sentence of a failure;
  a POST is never retried once it may have been processed.
- `surveyctl.api.paging`: every page of a list call, in turn or one ahead.
- `surveyctl.api.surveys`, `groups`, `transactions`, `attributes`: the calls, by resource.

Every path the calls use is in `surveyctl.api.paths`.
"""

from __future__ import annotations

from surveyctl.api import paths
from surveyctl.api.attributes import AttributeCalls
from surveyctl.api.groups import GroupCalls
from surveyctl.api.surveys import SurveyCalls
from surveyctl.api.transactions import TransactionCalls


class ApiClient(SurveyCalls, GroupCalls, TransactionCalls, AttributeCalls):
    """Calls the marketplace API of one environment: `{host}/buyers/v2` and `{host}/buyers/v3`.

    Made as a `Transport` is (surveyctl.api.transport: host, key, `timeout`, `retries`,
    `target`, `show_host`, `on_retry`); used as a context manager, it closes its connections.
    """

    # -- sandbox only (not part of the marketplace API) ------------------------------------

    def simulate_traffic(self, survey_id: int, body: dict) -> dict:
        """Sends simulated respondents at a survey of the sandbox; 404 elsewhere."""
        return self._object("POST", paths.sandbox_simulate(survey_id), body=body)
