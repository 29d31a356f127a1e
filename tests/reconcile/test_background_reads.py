"""A plan's live reads run in the background (reconcile/reads.py): they start as soon as the
state is known, keep to the plan's parallelism, and end with the plan. Over real HTTP, through
a proxy that holds each read a little and keeps count."""

from __future__ import annotations

import threading
import uuid

import pytest

from surveyctl.api import ApiClient
from surveyctl.reconcile import kinds
from surveyctl.reconcile.reads import LiveReads
from surveyctl.state import GroupRecord, State, SurveyRecord

from ..conftest import BUYER_1_KEY
from .proxies import HoldingProxy


class SlowReads(HoldingProxy):
    """Holds every GET of one survey or one group 0.1 s before answering; keeps their paths,
    and how many were in flight at once."""

    held_s = 0.1

    def __init__(self, upstream: str):
        super().__init__(upstream)
        self.reset()

    def reset(self) -> None:
        self.received: list[str] = []
        self.most_in_flight = 0
        self.first = threading.Event()

    def holds(self, environ) -> bool:
        return environ["REQUEST_METHOD"] == "GET" and environ.get("PATH_INFO", "").count("/") == 4

    def arrived(self, environ) -> None:
        self.received.append(environ.get("PATH_INFO", ""))
        self.first.set()


@pytest.fixture(scope="module")
def running_proxy(sandbox):
    running = SlowReads(sandbox.url)
    yield running
    running.stop()


@pytest.fixture
def proxy(running_proxy):
    running_proxy.reset()
    return running_proxy


@pytest.fixture
def client(proxy):
    """A client that would send ten requests at once: only the plan's parallelism bounds it."""
    made = ApiClient(proxy.url, BUYER_1_KEY, retries=0, pool_size=10)
    yield made
    made.close()


def _state(surveys: int = 0, groups: int = 0, last_applied: dict | None = None) -> State:
    """A state of surveys and groups that do not exist (each read answers 404)."""
    state = State.empty()
    base = 900_000_000 + uuid.uuid4().int % 1_000_000 * 100
    for index in range(surveys):
        state.resources[f"Survey/s{index}"] = SurveyRecord(base + index, {}, last_applied)
    for index in range(groups):
        state.resources[f"ExclusionGroup/g{index}"] = GroupRecord(f"none-{uuid.uuid4().hex}")
    return state


def _groups_read(proxy: SlowReads) -> list[str]:
    return [path for path in proxy.received if "/surveygroups/" in path]


def test_the_groups_of_the_state_are_read_while_the_manifests_load(proxy, client):
    with LiveReads(client, _state(groups=1), parallelism=2) as reads:
        reads.start()
        assert proxy.first.wait(timeout=5)  # before anything asks for the group
        assert len(_groups_read(proxy)) == 1


def test_under_refresh_false_the_groups_are_still_read_while_the_manifests_load(proxy, client):
    state = _state(surveys=2, groups=1, last_applied={"survey_title": "planned from state"})
    with LiveReads(client, state, parallelism=2, refresh=False) as reads:
        reads.start()
        assert proxy.first.wait(timeout=5)
        assert len(_groups_read(proxy)) == 1
    assert len(proxy.received) == 1  # the surveys are planned from the state


def test_reads_go_to_the_service_unless_asked_to_plan_from_the_state(proxy, client):
    state = _state(surveys=1, last_applied={"survey_title": "as last applied"})
    (address, record), kind = next(iter(state.resources.items())), kinds.get("Survey")
    with LiveReads(client, state, parallelism=2) as reads:
        result = reads.start().result(kind, address, record, None)
    assert result.gone and not result.from_state
    assert len(proxy.received) == 1


def test_a_plan_never_has_more_reads_in_flight_than_its_parallelism(proxy, client):
    state = _state(surveys=3)
    with LiveReads(client, state, parallelism=1) as reads:
        results = reads.read_all(state.resources)
    assert all(result.gone for result in results.values())
    assert len(proxy.received) == 3
    assert proxy.most_in_flight == 1


def _plan_failed_with_a_read_in_flight(proxy, client) -> None:
    """Reads of five surveys started one at a time, and the plan failing while the first is
    in flight."""
    with (
        pytest.raises(RuntimeError, match="the manifests do not load"),
        LiveReads(client, _state(surveys=5), parallelism=1) as reads,
    ):
        reads.start()
        assert proxy.first.wait(timeout=5)
        raise RuntimeError("the manifests do not load")


def test_the_reads_a_failed_plan_had_not_sent_yet_are_never_sent(proxy, client):
    _plan_failed_with_a_read_in_flight(proxy, client)
    assert len(proxy.received) == 1


def test_a_failed_plan_returns_only_once_its_reads_in_flight_have_ended(proxy, client):
    _plan_failed_with_a_read_in_flight(proxy, client)
    assert proxy.in_flight == 0
