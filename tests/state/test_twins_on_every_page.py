"""A survey is found on the service before any create, on whichever page of the survey list it
is: also past the first hundred, past the pages the list announces, and in a list that announces
none. Over real HTTP, in a marketplace of the module's own that holds a full page of surveys."""

from __future__ import annotations

import uuid

import pytest

from surveyctl.api import ApiClient

from ..conftest import BUYER_1_KEY
from ..reconcile.conftest import Manifests, point_project_at, survey_manifest
from ..reconcile.proxies import Proxy

PAGE = 100  # surveys a page of the list holds


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A marketplace whose account holds a full page of draft surveys: a survey made after
    them is on the list's second page."""
    from surveyctl.sandbox.server import SandboxOptions, start

    sandbox = start(SandboxOptions(db_path=tmp_path_factory.mktemp("crowded") / "sandbox.db"))
    client = ApiClient(sandbox.url, BUYER_1_KEY, retries=0)
    filler = survey_manifest("filler")["spec"]
    for index in range(PAGE):
        client.create_survey({**filler, "survey_title": f"Filler {index}"})
    yield sandbox, client
    client.close()
    sandbox.stop()


@pytest.fixture
def twin(crowded, project):
    """The manifest `tracker` in the project, and the id of its survey on the list's second
    page, made outside surveyctl (the state knows nothing of it)."""
    _sandbox, client = crowded
    manifest = survey_manifest("tracker", survey_title=f"Tracker {uuid.uuid4().hex[:8]}")
    Manifests(project).write(manifest)
    return client.create_survey(manifest["spec"])["ps_survey_id"]


class Pages(Proxy):
    """The survey list with its `total_pages` header set to `announced` (None: left out)."""

    def __init__(self, upstream: str, announced: str | None):
        self.announced = announced
        super().__init__(upstream)

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and request.path == "/buyers/v2/surveys":
            for name in [n for n in headers if n.lower() == "total_pages"]:
                del headers[name]
            if self.announced is not None:
                headers["total_pages"] = self.announced
        return answer.content


def _planned(run_cli, project, url: str):
    point_project_at(project, url)
    return run_cli("plan", "manifests")


def _found(plan, survey_id: int) -> bool:
    return f"exists on the service as survey {survey_id} (same title and locale)" in plan.stdout


def test_a_survey_on_the_second_page_of_the_list_is_not_created_again(
    crowded, twin, project, run_cli
):
    plan = _planned(run_cli, project, crowded[0].url)
    assert plan.exit_code == 1
    assert _found(plan, twin)
    assert "will be created" not in plan.stdout


def test_a_survey_past_the_pages_the_list_announces_is_not_created_again(
    crowded, twin, project, run_cli
):
    proxy = Pages(crowded[0].url, announced="1")  # as a list that grew while it was read
    try:
        plan = _planned(run_cli, project, proxy.url)
    finally:
        proxy.stop()
    assert plan.exit_code == 1
    assert _found(plan, twin)
    assert "will be created" not in plan.stdout


def test_a_survey_in_a_list_without_total_pages_is_not_created_again(
    crowded, twin, project, run_cli
):
    proxy = Pages(crowded[0].url, announced=None)
    try:
        plan = _planned(run_cli, project, proxy.url)
    finally:
        proxy.stop()
    assert plan.exit_code == 1
    assert _found(plan, twin)
    assert "will be created" not in plan.stdout
