"""The spec shows neither the body nor the status of a group update's answer (4.9): whatever
2xx the service gives it, the update is applied and recorded, and the next plan is clean."""

from __future__ import annotations

import pytest

from .conftest import group_manifest, pointed_at, survey_manifest
from .proxies import Proxy


class GroupUpdateAnswer(Proxy):
    """Updates a group as the sandbox does, answering the PUT with `status` and `body`."""

    status, body = 204, b""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "PUT" and "/surveygroups/" in request.path and answer.ok:
            answer.status_code = self.status
            if not self.body:
                headers.pop("Content-Type", None)
            return self.body
        return answer.content


@pytest.mark.parametrize(
    ("status", "body"),
    [(204, b""), (200, b""), (200, b'{"ps_api_response_message": "Group updated"}')],
)
def test_a_group_update_answered_without_the_group_is_applied(
    manifests, unique, run_cli, project, sandbox, status, body
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker-a", "tracker-b"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    proxy = GroupUpdateAnswer(sandbox.url)
    proxy.status, proxy.body = status, body
    with pointed_at(project, proxy):
        renamed = group_manifest(ref, "tracker-a", "tracker-b")
        renamed["spec"]["name"] = "Renamed trackers"
        manifests.write(renamed)
        applied = run_cli("apply", "manifests", "--auto-approve")
        planned = run_cli("plan", "manifests")
    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "1 changed" in applied.stdout
    assert "No changes." in planned.stdout, planned.stdout + planned.stderr
