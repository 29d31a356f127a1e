"""The spec shows no status of a DELETE (4.9 for a group, 4.11 for a survey and a quota): the
client takes 200, 202 and 204 alike as the resource going, over real HTTP through a proxy
that answers the sandbox's deletes so."""

from __future__ import annotations

import uuid

import pytest

from surveyctl.api import ApiClient
from surveyctl.errors import ApiError

from ..reconcile.proxies import Proxy

KEY = "sandbox-buyer-1"


class DeleteAnswer(Proxy):
    """Deletes as the sandbox does, answering each DELETE the sandbox took with `status`
    and `body`."""

    status, body = 202, b""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "DELETE" and answer.ok:
            answer.status_code = self.status
            headers["Content-Type"] = "application/json"
            return self.body
        return answer.content


ANSWERS = [(202, b""), (202, b'{"ps_api_response_message": "Deletion accepted"}'), (200, b"[]")]


@pytest.fixture
def through(sandbox):
    """`through(status, body)`: a client whose DELETEs the service answers so."""
    proxies: list[Proxy] = []
    clients: list[ApiClient] = []

    def make(status: int, body: bytes) -> ApiClient:
        proxy = DeleteAnswer(sandbox.url)
        proxy.status, proxy.body = status, body
        proxies.append(proxy)
        clients.append(ApiClient(proxy.url, KEY, retries=0))
        return clients[-1]

    yield make
    for client in clients:
        client.close()
    for proxy in proxies:
        proxy.stop()


@pytest.mark.parametrize(("status", "body"), ANSWERS)
def test_a_group_delete_answered_with_any_success_status_is_a_group_deleted(
    api, through, status, body
):
    ref = f"deleted-{uuid.uuid4().hex[:12]}"
    api.create_group(
        {"buyer_surveygroup_ref": ref, "name": "g", "surveys_in_group": [], "exclusion_period": 7}
    )
    through(status, body).delete_group(ref)
    with pytest.raises(ApiError) as gone:
        api.get_group(ref)
    assert gone.value.status == 404


@pytest.mark.parametrize(("status", "body"), ANSWERS)
def test_a_survey_delete_answered_with_any_success_status_is_a_survey_deleted(
    api, new_survey, through, status, body
):
    survey_id = new_survey()
    through(status, body).delete_survey(survey_id)
    with pytest.raises(ApiError) as gone:
        api.get_survey(survey_id)
    assert gone.value.status == 404


@pytest.mark.parametrize(("status", "body"), ANSWERS)
def test_a_quota_delete_answered_with_any_success_status_is_a_quota_deleted(
    api, new_survey, through, status, body
):
    survey_id = new_survey()
    through(status, body).delete_quota(survey_id, "female")
    assert [q["buyer_quota_id"] for q in api.get_survey(survey_id)["quotas"]] == ["male"]
