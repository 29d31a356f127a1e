"""A survey is found on the service before any create, on whichever page of the survey list it
is: also past the first hundred, past the pages the list announces, and in a list that announces
more or none; the pages after the first are read side by side, as many at once as the plan's
parallelism. Over real HTTP, in marketplaces of the module's own that hold full pages."""

from __future__ import annotations

import uuid

import pytest

from surveyctl.api import ApiClient
from surveyctl.api.account_surveys import account_surveys
from surveyctl.model import Survey
from surveyctl.reconcile import identity
from surveyctl.reconcile.kinds.survey_twins import survey_twins
from surveyctl.state import State

from ..conftest import BUYER_1_KEY
from ..reconcile.conftest import Manifests, point_project_at, survey_manifest
from ..reconcile.proxies import HoldingProxy, Proxy

PAGE = 100  # surveys a page of the list holds


KEPT = "kept"  # the list's own total_pages header


class Pages(Proxy):
    """The survey list with its `total_pages` header set to `announced`: KEPT as the sandbox
    sends it, another number, or None (left out)."""

    announced: str | None = KEPT

    def __init__(self, upstream: str):
        self.queries: list[dict[str, str]] = []  # of each read of the list
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and request.path == "/buyers/v2/surveys":
            self.queries.append(dict(request.args))
            if self.announced != KEPT:
                for name in [n for n in headers if n.lower() == "total_pages"]:
                    del headers[name]
            if self.announced not in (KEPT, None):
                headers["total_pages"] = self.announced
        return answer.content


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A marketplace whose account holds a full page of draft surveys (a survey made after them
    is on the list's second page), and a client of it; `proxy` is in front of it."""
    from surveyctl.sandbox.server import SandboxOptions, start

    sandbox = start(SandboxOptions(db_path=tmp_path_factory.mktemp("crowded") / "sandbox.db"))
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    filler = survey_manifest("filler")["spec"]
    for index in range(PAGE):
        client.create_survey({**filler, "survey_title": f"Filler {index}"})
    proxy = Pages(sandbox.url)
    yield proxy, client
    proxy.stop()
    client.close()
    sandbox.stop()


@pytest.fixture
def twin(crowded, project):
    """The manifest `tracker` in the project, pointed at the crowded marketplace, and the id of
    its survey on the list's second page, made outside surveyctl (the state knows nothing of
    it)."""
    proxy, client = crowded
    proxy.announced = KEPT
    point_project_at(project, proxy.url)
    manifest = survey_manifest("tracker", survey_title=f"Tracker {uuid.uuid4().hex[:8]}")
    Manifests(project).write(manifest)
    return client.create_survey(manifest["spec"])["ps_survey_id"]


@pytest.mark.parametrize(
    "announced",
    [
        KEPT,  # two pages
        "1",  # fewer than it has: as a list that grew while it was read
        "3",  # more than it has: as a list that shrank while it was read
        None,  # none: a full page is followed by one more
    ],
    ids=["as-it-is", "fewer-pages", "more-pages", "no-total-pages"],
)
def test_a_survey_on_the_second_page_of_the_list_is_not_created_again(
    crowded, twin, run_cli, announced
):
    crowded[0].announced = announced
    plan = run_cli("plan", "manifests")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {twin} (same title and locale)" in plan.stdout
    assert "will be created" not in plan.stdout


def test_every_page_of_the_list_is_read_without_targeting(crowded, twin, run_cli):
    crowded[0].queries.clear()
    assert run_cli("plan", "manifests").exit_code == 1
    pages = {(q["status"], q["page"]) for q in crowded[0].queries}
    assert ("11", "2") in pages  # the drafts' second page
    assert all(q["targeting"] == "0" for q in crowded[0].queries)


def test_the_identity_check_counts_each_page_of_the_list_it_reads(crowded):
    found = identity.Identity()
    wanted = Survey("new", {"survey_title": "New", "survey_localization": "en_US"})
    survey_twins(crowded[1], {"Survey/new": wanted}, State.empty(), identity.Rule("local"), found)
    assert found.requests == 5  # the first page of each of the four statuses, the drafts' second


class SlowPages(HoldingProxy):
    """Holds every read of a page of the survey list after the first 0.2 s, and keeps how many
    of those were in flight at once; sends `announced` as the list's `total_pages` when set."""

    held_s = 0.2
    announced: str | None = None

    def holds(self, environ) -> bool:
        query = environ.get("QUERY_STRING", "")
        return environ.get("PATH_INFO") == "/buyers/v2/surveys" and "page=1&" not in f"{query}&"

    def reshape(self, request, answer, headers) -> bytes:
        if self.announced is not None and request.path == "/buyers/v2/surveys":
            for name in [n for n in headers if n.lower() == "total_pages"]:
                del headers[name]
            headers["total_pages"] = self.announced
        return answer.content


@pytest.fixture(scope="module")
def long_list(tmp_path_factory):
    """A marketplace whose drafts fill three pages of the list (250 surveys), and a client
    that would send ten requests at once, through a proxy that holds the later pages."""
    from surveyctl.sandbox.server import SandboxOptions, start

    sandbox = start(SandboxOptions(db_path=tmp_path_factory.mktemp("long") / "sandbox.db"))
    seeding = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    filler = survey_manifest("filler")["spec"]
    for index in range(2 * PAGE + PAGE // 2):
        seeding.create_survey({**filler, "survey_title": f"Filler {index}"})
    seeding.close()
    proxy = SlowPages(sandbox.url)
    client = ApiClient(proxy.url, BUYER_1_KEY, retries=0, pool_size=10)
    yield proxy, client
    client.close()
    proxy.stop()
    sandbox.stop()


def test_the_pages_after_the_first_are_read_side_by_side(long_list):
    proxy, client = long_list
    proxy.most_in_flight = 0
    listed, pages = account_surveys(client, parallelism=10)
    assert (len(listed), pages) == (2 * PAGE + PAGE // 2, 6)
    assert proxy.most_in_flight == 2  # the drafts' second and third pages


def test_the_identity_check_reads_the_later_pages_no_more_than_its_parallelism_at_once(
    long_list,
):
    proxy, client = long_list
    proxy.most_in_flight = 0
    found = identity.Identity()
    wanted = Survey("new", {"survey_title": "New", "survey_localization": "en_US"})
    survey_twins(client, {"Survey/new": wanted}, State.empty(), identity.Rule("local"), found, 1)
    assert found.requests == 6
    assert proxy.most_in_flight == 1


def test_the_pages_after_the_first_are_read_no_more_than_the_parallelism_at_once(long_list):
    proxy, client = long_list
    proxy.most_in_flight = 0
    listed, _pages = account_surveys(client, parallelism=1)
    assert len(listed) == 2 * PAGE + PAGE // 2
    assert proxy.most_in_flight == 1


def test_the_list_is_read_no_more_than_ten_pages_at_once_when_no_parallelism_is_given(long_list):
    # List-mode reads and the fieldwork view read the list so; the client here would send twenty.
    proxy, _ = long_list
    proxy.most_in_flight = 0
    proxy.announced = "30"  # the drafts' pages 4 to 30 are empty
    client = ApiClient(proxy.url, BUYER_1_KEY, retries=0, pool_size=20)
    try:
        listed, pages = account_surveys(client)
    finally:
        proxy.announced = None
        client.close()
    assert (len(listed), pages) == (2 * PAGE + PAGE // 2, 33)
    assert proxy.most_in_flight == 10
