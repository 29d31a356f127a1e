"""Answers that go wrong on the way back from the service, as a proxy in front of the sandbox
makes them: a create the service made but whose answer is a 502 or a connection closed before
the answer was whole, and exclusion-group reads the service refuses or fails. None of them may
cost a duplicate, or a change planned blind."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest
import requests
from werkzeug.wrappers import Request

from surveyctl.state import FileStateStore

from ..reconcile.proxies import Proxy
from .conftest import (
    group_manifest,
    pointed_at,
    quotas_of,
    survey_manifest,
    survey_title,
)


class AnswerProxy(Proxy):
    """Forwards every request, then replaces the answer of those `answers` names (method,
    path) by that status with an error body: the service did the work, the buyer never learns.
    Those `garbled` names keep their status and lose their body to a gateway's page. Those
    `cut` names are forwarded, then their connection is closed after the bytes of the answer
    `cut` keeps (the status line and headers and half the body, or none)."""

    def __init__(self, upstream: str):
        self.answers: dict[tuple[str, str], int] = {}
        self.garbled: set[tuple[str, str]] = set()
        self.cut: dict[tuple[str, str], Callable[[bytes], bytes]] = {}
        super().__init__(upstream)

    def _app(self, environ, start_response):
        request = Request(environ)
        keep = self.cut.get((request.method, request.path))
        if keep is None:
            return super()._app(environ, start_response)
        answer = self.forward(request)  # the service does the work
        whole = (
            f"HTTP/1.1 {answer.status_code} {answer.reason}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(answer.content)}\r\n\r\n"
        ).encode() + answer.content
        connection = environ["werkzeug.socket"]
        connection.sendall(keep(whole))
        connection.shutdown(socket.SHUT_RDWR)
        # What werkzeug takes for a client gone: it drops the request without a word.
        raise ConnectionAbortedError("closed before the answer (test)")

    def reshape(self, request: Request, answer: requests.Response, headers: dict) -> bytes:
        if (request.method, request.path) in self.garbled:
            headers["Content-Type"] = "text/html"
            return b"<html><body>upstream sent an invalid response</body></html>"
        status = self.answers.get((request.method, request.path))
        if status is None:
            return answer.content
        answer.status_code = status
        headers["Content-Type"] = "application/json"
        error = {"ps_api_response_code": 1002, "ps_api_response_message": "failed (test)"}
        return json.dumps(error).encode()


@pytest.fixture
def proxy(project, own_market):
    """A proxy in front of the test's own marketplace, which the project is pointed at."""
    upstream = (project / "surveyctl.yaml").read_text().split("host: '")[1].split("'")[0]
    running = AnswerProxy(upstream)
    with pointed_at(project, running):
        yield running


def _nothing(whole: bytes) -> bytes:
    return b""


def _half_a_body(whole: bytes) -> bytes:
    head, body = whole.split(b"\r\n\r\n", 1)
    return head + b"\r\n\r\n" + body[: len(body) // 2]


def _store(project: Path) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


def _group_path(ref: str) -> str:
    return f"/buyers/v2/surveygroups/{ref}"


def test_a_create_answered_with_a_502_stays_journaled_and_the_next_plan_adopts_what_it_made(
    project, manifests, own_market, proxy, run_cli
):
    manifests.write(survey_manifest("tracker"))
    proxy.answers[("POST", "/buyers/v2/surveys")] = 502
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert (
        "the create may or may not have been made, so Survey/tracker stays journaled: run "
        "`surveyctl plan` for how to resolve it"
    ) in applied.stderr + applied.stdout
    assert "Survey/tracker" in _store(project).load().journal
    proxy.answers.clear()
    (made,) = [s["ps_survey_id"] for s in own_market.list_surveys()]
    plan = run_cli("plan", "manifests")
    assert f"lost its answer but made survey {made}" in plan.stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    titles = Counter(s["survey_title"] for s in own_market.list_surveys())
    assert titles == Counter({survey_title("tracker"): 1})


def test_a_create_whose_answer_cannot_be_read_stays_journaled_and_the_next_plan_adopts_it(
    project, manifests, own_market, proxy, run_cli
):
    manifests.write(survey_manifest("tracker"))
    proxy.garbled.add(("POST", "/buyers/v2/surveys"))  # a 201 whose body a gateway replaced
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert "the create may or may not have been made, so Survey/tracker stays journaled" in (
        applied.stderr + applied.stdout
    )
    proxy.garbled.clear()
    (made,) = [s["ps_survey_id"] for s in own_market.list_surveys()]
    assert f"lost its answer but made survey {made}" in run_cli("plan", "manifests").stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert len(own_market.list_surveys()) == 1


_CUTS = pytest.mark.parametrize(
    "keep, reason",
    [
        (
            _nothing,
            "cannot reach environment 'local' at {url}: the connection was closed before an answer",
        ),
        (
            _half_a_body,
            "lost the answer of environment 'local' at {url}: the connection was closed in the "
            "middle of the answer",
        ),
    ],
    ids=["no answer", "half a body"],
)


@_CUTS
def test_a_create_whose_connection_closed_before_its_answer_stays_journaled_and_is_adopted(
    project, manifests, own_market, proxy, run_cli, keep, reason
):
    manifests.write(survey_manifest("tracker"))
    proxy.cut[("POST", "/buyers/v2/surveys")] = keep
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert (
        f"{reason.format(url=proxy.url)} (POST /surveys, 1 attempt); the create may or may not "
        "have been made, so Survey/tracker stays journaled: run `surveyctl plan` for how to "
        "resolve it"
    ) in applied.stdout
    assert "Survey/tracker" in _store(project).load().journal
    proxy.cut.clear()
    (made,) = [s["ps_survey_id"] for s in own_market.list_surveys()]
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 2  # a lost create to adopt
    assert f"lost its answer but made survey {made}" in plan.stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().survey("tracker").ps_survey_id == made
    titles = Counter(s["survey_title"] for s in own_market.list_surveys())
    assert titles == Counter({survey_title("tracker"): 1})


@_CUTS
def test_a_group_create_whose_connection_closed_before_its_answer_is_adopted_by_the_next_plan(
    project, manifests, own_market, proxy, run_cli, unique, keep, reason
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker"))
    proxy.cut[("POST", "/buyers/v2/surveygroups")] = keep
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert (
        f"{reason.format(url=proxy.url)} (POST /surveygroups, 1 attempt); the create may or "
        "may not have been made, so ExclusionGroup/trackers stays journaled"
    ) in applied.stdout
    assert "ExclusionGroup/trackers" in _store(project).load().journal
    proxy.cut.clear()
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 2
    assert f"lost its answer but made group {ref}; it is adopted" in plan.stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").buyer_surveygroup_ref == ref
    assert run_cli("plan", "manifests", "--detailed-exitcode").exit_code == 0


def test_a_group_create_answered_with_a_502_is_adopted_by_the_next_plan(
    project, manifests, proxy, run_cli, unique
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker"))
    proxy.answers[("POST", "/buyers/v2/surveygroups")] = 502
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert "ExclusionGroup/trackers stays journaled" in applied.stderr + applied.stdout
    proxy.answers.clear()
    plan = run_cli("plan", "manifests")
    assert f"lost its answer but made group {ref}; it is adopted" in plan.stdout
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").buyer_surveygroup_ref == ref


def _lost_group_create(project, manifests, proxy, run_cli, unique) -> str:
    """A group create whose answer was lost (a 502); returns its reference."""
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    ref = f"trackers-{unique}"
    manifests.write(group_manifest(ref, "tracker"))
    proxy.answers[("POST", "/buyers/v2/surveygroups")] = 502
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 1
    return ref


def test_a_lost_group_create_whose_reference_another_buyer_holds_is_an_error_saying_what_to_do(
    project, manifests, proxy, run_cli, unique
):
    ref = _lost_group_create(project, manifests, proxy, run_cli, unique)
    proxy.answers = {("GET", _group_path(ref)): 403}
    plan = run_cli("plan", "manifests")
    assert plan.exit_code == 1
    assert f"group {ref} belongs to another buyer; choose another buyer_surveygroup_ref" in (
        plan.stdout
    )
    assert "surveyctl state rm ExclusionGroup/trackers" in plan.stdout
    assert "ExclusionGroup/trackers" in _store(project).load().journal


def test_a_lost_group_create_whose_group_cannot_be_read_is_left_for_a_later_run(
    project, manifests, proxy, run_cli, unique
):
    ref = _lost_group_create(project, manifests, proxy, run_cli, unique)
    proxy.answers = {("GET", _group_path(ref)): 400}
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert "warning: ExclusionGroup/trackers: cannot check what the create sent at" in (
        applied.stdout
    )
    assert "it is left out of this plan and apply does not attempt it" in applied.stdout
    assert "ExclusionGroup/trackers" in _store(project).load().journal
    proxy.answers.clear()
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").buyer_surveygroup_ref == ref


def test_a_lost_group_create_whose_read_loses_its_connection_is_left_for_a_later_run(
    project, manifests, proxy, run_cli, unique
):
    ref = _lost_group_create(project, manifests, proxy, run_cli, unique)
    proxy.answers.clear()
    proxy.cut[("GET", _group_path(ref))] = _nothing
    plan = run_cli("plan", "manifests")
    assert plan.exit_code == 1
    assert "warning: ExclusionGroup/trackers: cannot check what the create sent at" in plan.stdout
    assert "the connection was closed before an answer" in plan.stdout
    assert "ExclusionGroup/trackers" in _store(project).load().journal
    proxy.cut.clear()
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert _store(project).load().group("trackers").buyer_surveygroup_ref == ref


def test_a_managed_group_that_cannot_be_read_is_left_out_of_the_plan_with_a_warning(
    project, manifests, proxy, run_cli, unique
):
    ref = f"trackers-{unique}"
    manifests.write(survey_manifest("tracker"))
    manifests.write(group_manifest(ref, "tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write({**group_manifest(ref, "tracker"), "spec": {
        **group_manifest(ref, "tracker")["spec"], "name": "Renamed"}})  # fmt: skip
    proxy.answers[("GET", _group_path(ref))] = 403
    plan = run_cli("plan", "manifests")
    assert plan.exit_code == 1
    assert "warning: ExclusionGroup/trackers: cannot read the live group" in plan.stdout
    assert "ExclusionGroup/trackers will be updated" not in plan.stdout


def test_a_new_group_whose_reference_cannot_be_looked_up_is_not_created(
    project, manifests, own_market, proxy, run_cli, unique
):
    ref = f"trackers-{unique}"
    manifests.write(survey_manifest("tracker"))
    manifests.write(group_manifest(ref, "tracker"))
    proxy.answers[("GET", _group_path(ref))] = 400  # the look-up for a twin fails
    applied = run_cli("apply", "manifests", "--auto-approve")
    assert applied.exit_code == 1
    assert (
        "warning: ExclusionGroup/trackers: cannot check whether it exists on the service "
        f"already (reading group {ref}: "
    ) in applied.stdout
    assert _store(project).load().group("trackers") is None
    proxy.answers.clear()
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    assert own_market.get_group(ref)["name"] == "Trackers"


def test_a_quota_put_whose_answer_was_lost_after_it_was_made_is_noted_not_drift(
    project, manifests, own_market, proxy, run_cli
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    survey_id = _store(project).load().survey("tracker").ps_survey_id
    manifests.write(survey_manifest("tracker", quotas=quotas_of({"male": 90, "female": 90})))
    # A 500 rather than a 502: the same lost answer, which the client does not retry for 15 s.
    proxy.answers[("PUT", f"/buyers/v2/surveys/{survey_id}/quotas/female")] = 500
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 1
    proxy.answers.clear()
    quotas = {
        q["buyer_quota_id"]: q["required_count"] for q in own_market.get_survey(survey_id)["quotas"]
    }
    assert quotas == {"male": 100, "female": 90}  # the service made female's PUT
    plan = run_cli("plan", "manifests")
    assert "! drift" not in plan.stdout
    assert "Survey/tracker: quotas[female].required_count is already as the manifest asks" in (
        plan.stdout
    )
    assert "~ quotas[male].required_count: 100 -> 90" in plan.stdout
