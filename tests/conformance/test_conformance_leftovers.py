"""`surveyctl conformance` and the draft an earlier run left, as its journal records it: the
draft is removed, and nothing but the draft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from surveyctl.api import ApiClient
from surveyctl.cli.main import cli
from surveyctl.conformance.draft import NOWHERE, draft_title

from .conftest import drafts_left

KEY = "sandbox-buyer-1"
JOURNAL = Path(".surveyctl") / "conformance" / "local.json"


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    """Runs `surveyctl --env local conformance --format json` in tmp_path against `url`."""
    monkeypatch.chdir(tmp_path)

    def run(url: str) -> Result:
        config = {"environments": {"local": {"host": url, "api_key_env": "SURVEYCTL_L_KEY"}}}
        Path("surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = ["--env", "local", "conformance", "--format", "json"]
        return CliRunner().invoke(cli, command, env={"SURVEYCTL_L_KEY": KEY})

    return run


def _create(url: str, title: str, *, live: bool = False) -> int:
    body = {
        "survey_title": title,
        "survey_category_code": 231,
        "survey_localization": "en_US",
        "completes_required": 100,
        "expected_ir": 50,
        "expected_loi": 5,
        "live_url": NOWHERE,
        "field_time": 10,
    }
    with ApiClient(url, KEY, retries=0) as client:
        survey_id = client.create_survey(body)["ps_survey_id"]
        if live:
            client.set_survey_status(survey_id, 22)
    return survey_id


def _journal(title: str, survey_id: int | None) -> None:
    JOURNAL.parent.mkdir(parents=True, exist_ok=True)
    entry = {"title": title, "started_at": 0, "ps_survey_id": survey_id}
    JOURNAL.write_text(json.dumps(entry), encoding="utf-8")


def _status(url: str, survey_id: int) -> int:
    with ApiClient(url, KEY, retries=0) as client:
        return client.get_survey(survey_id)["ps_survey_status"]


def test_a_journal_naming_a_survey_that_is_not_its_draft_leaves_that_survey_alone(invoke, sandbox):
    # The journal outlived the draft's service (a reset sandbox, an environment pointed at
    # another host): the id it names is now a real, live survey.
    live = _create(sandbox.url, "Brand tracker", live=True)
    _journal(draft_title(), live)
    result = invoke(sandbox.url)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert f"survey {live} is titled 'Brand tracker': it was left alone" in message
    assert str(JOURNAL) in message
    assert _status(sandbox.url, live) == 22
    assert JOURNAL.exists()
    assert result.stdout == ""  # no check ran, no draft was made


def test_a_draft_whose_create_answer_never_came_is_found_by_its_title_and_deleted(invoke, sandbox):
    title = draft_title()
    left = _create(sandbox.url, title)
    _journal(title, None)  # killed after the create was sent, before its answer
    result = invoke(sandbox.url)
    assert result.exit_code == 0, result.output
    leftover = json.loads(result.stdout)["leftover_draft"]
    assert leftover == {"ps_survey_id": left, "removed": True, "how": "deleted"}
    assert drafts_left(sandbox.url) == []
    assert not JOURNAL.exists()


def test_a_planted_journal_naming_a_live_survey_by_its_own_title_leaves_it_alone(invoke, sandbox):
    # The journal is a file of the project: a pull request could commit one that names a real
    # survey by its id and its title, which the project's manifests show.
    live = _create(sandbox.url, "Brand tracker", live=True)
    _journal("Brand tracker", live)
    result = invoke(sandbox.url)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert "names the draft 'Brand tracker', a title no conformance run gives its draft" in (
        message
    )
    assert "nothing was deleted, closed or checked" in message
    assert _status(sandbox.url, live) == 22
    assert result.stdout == ""


def test_a_planted_journal_naming_a_draft_by_its_title_alone_leaves_it_alone(invoke, sandbox):
    draft = _create(sandbox.url, "Brand tracker wave 2")
    _journal("Brand tracker wave 2", None)
    result = invoke(sandbox.url)
    assert result.exit_code == 1
    assert _status(sandbox.url, draft) == 11


def test_a_launched_survey_with_a_drafts_title_is_left_alone(invoke, sandbox):
    title = draft_title()
    live = _create(sandbox.url, title, live=True)
    _journal(title, live)
    result = invoke(sandbox.url)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert "has status 22, which no draft of a conformance run reaches" in message
    assert _status(sandbox.url, live) == 22


def test_a_journal_that_links_to_a_device_is_refused_without_reading_it(invoke, sandbox):
    # A link committed in the journal's place to /dev/zero was read until memory ran out.
    JOURNAL.parent.mkdir(parents=True, exist_ok=True)
    JOURNAL.symlink_to("/dev/zero")
    result = invoke(sandbox.url)
    assert result.exit_code == 1
    message = result.stderr.strip().splitlines()[-1]
    assert "cannot read the conformance journal" in message
    assert "is a character device, not a regular file" in message
    assert result.stdout == ""
