"""A state written by a newer surveyctl: what this one does not know, it neither reads nor writes.

A later release records more (a field of a record, of a create in flight, of the whole state, a
resource of a new kind). This surveyctl would write the state back without what it does not
know - a create in flight forgotten is a survey made twice, a protection forgotten a protected
survey deleted - so it refuses the whole state, in one sentence, and leaves it as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from surveyctl import __version__
from surveyctl.state import RECORD_TYPES, StateBackend, SurveyRecord
from surveyctl.state.records import FORMAT_VERSION

from .conftest import open_staging


@dataclass(frozen=True)
class LaterSurveyRecord(SurveyRecord):
    """A survey's record as a later surveyctl writes it: one field more."""

    owner: str = ""

    def to_json(self) -> dict:
        return {**super().to_json(), "owner": self.owner}

    @classmethod
    def from_json(cls, value: Any, source: object, where: str) -> LaterSurveyRecord:
        known = {key: item for key, item in value.items() if key != "owner"}
        record = SurveyRecord.from_json(known, source, where)
        return cls(
            record.ps_survey_id,
            record.quota_ids,
            record.last_applied,
            record.prevent_destroy,
            record.mod_on,
            owner=value.get("owner", ""),
        )


KEPT_MANIFEST = """\
kind: Survey
name: kept
spec:
  survey_title: Kept
  survey_category_code: 231
  survey_localization: en_US
  completes_required: 100
  expected_ir: 40
  expected_loi: 12
  live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
  field_time: 14
"""


@pytest.fixture
def project(staging_project: Path) -> Path:
    return staging_project


def _as_later_surveyctl(monkeypatch) -> None:
    monkeypatch.setitem(RECORD_TYPES, "Survey", LaterSurveyRecord)


def _state_file(project: Path) -> Path:
    return project / ".surveyctl" / "state" / "staging.json"


def _written_by_later_version(project: Path, edit) -> str:
    """A file state holding two surveys, edited as a later surveyctl would write it; its text."""
    store = open_staging(project)
    store.record("Survey/kept", SurveyRecord(4711, last_applied={"survey_title": "Kept"}))
    store.record("Survey/other", SurveyRecord(4712))
    store.journal_create("Survey/in-flight", {"survey_title": "In flight"})
    store.flush()
    store.close()
    path = _state_file(project)
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    text = json.dumps(data, indent=1)
    path.write_text(text, encoding="utf-8")
    return text


def test_a_record_field_of_a_newer_surveyctl_is_refused_and_kept(run_cli, project, monkeypatch):
    with monkeypatch.context() as later:
        _as_later_surveyctl(later)
        store: StateBackend = open_staging(project)
        store.record("Survey/kept", LaterSurveyRecord(4711, owner="ann"))
        store.flush()  # into the state file itself, where the file backend keeps it
        store.close()

    result = run_cli("state", "mv", "Survey/kept", "Survey/renamed")

    assert result.exit_code == 1
    assert f"{store.location}: Survey/kept holds 'owner', which this surveyctl" in result.stderr
    assert "a newer surveyctl wrote this state" in result.stderr
    assert "Traceback" not in result.stderr
    _as_later_surveyctl(monkeypatch)
    store = open_staging(project)
    assert store.load().resources["Survey/kept"].owner == "ann"
    store.close()


def test_plan_refuses_a_state_with_a_record_field_of_a_newer_surveyctl(
    run_cli, project, monkeypatch
):
    with monkeypatch.context() as later:
        _as_later_surveyctl(later)
        store = open_staging(project)
        store.record("Survey/kept", LaterSurveyRecord(4711, owner="ann"))
        store.close()
    (project / "kept.yaml").write_text(KEPT_MANIFEST, encoding="utf-8")
    monkeypatch.setenv("SURVEYCTL_STAGING_KEY", "staging-key-of-the-team")

    result = run_cli("plan", "--refresh=false", "kept.yaml")

    assert result.exit_code == 1
    assert "Survey/kept holds 'owner'" in result.stderr
    assert "upgrade surveyctl" in result.stderr


@pytest.mark.parametrize("backend", ["file"])
def test_a_field_of_a_create_in_flight_of_a_newer_surveyctl_is_refused_and_kept(run_cli, project):
    def later(data: dict) -> None:
        data["journal"]["Survey/in-flight"]["attempt"] = 2

    text = _written_by_later_version(project, later)

    result = run_cli("state", "rm", "Survey/other")

    assert result.exit_code == 1
    assert (
        f"{_state_file(project)}: the create in flight of Survey/in-flight holds 'attempt'"
    ) in result.stderr
    assert _state_file(project).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("backend", ["file"])
def test_a_top_level_field_of_a_newer_surveyctl_is_refused_and_kept(run_cli, project):
    def later(data: dict) -> None:
        data["checksum"] = "sha256:0"

    text = _written_by_later_version(project, later)

    result = run_cli("state", "rm", "Survey/other")

    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {_state_file(project)}: the state holds 'checksum' at the top level, which this "
        f"surveyctl ({__version__}, state format {FORMAT_VERSION}) does not know: a newer "
        "surveyctl wrote this state, and this one would lose what it recorded; nothing was "
        "changed: upgrade surveyctl here to the version that wrote it (one version wherever the "
        "state is used, CI included)"
    )
    assert _state_file(project).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("backend", ["file"])
def test_a_later_state_format_names_its_format_and_says_to_upgrade(run_cli, project):
    def later(data: dict) -> None:
        data["format_version"] = FORMAT_VERSION + 1

    _written_by_later_version(project, later)

    result = run_cli("state", "list")

    assert result.exit_code == 1
    assert f"the state is in format {FORMAT_VERSION + 1}" in result.stderr
    assert "a newer surveyctl wrote this state" in result.stderr


@pytest.mark.parametrize("backend", ["file"])
def test_a_resource_of_a_kind_a_newer_surveyctl_added_is_refused_as_newer(run_cli, project):
    def later(data: dict) -> None:
        data["resources"]["Webhook/orders"] = {"webhook_id": "w-1"}

    text = _written_by_later_version(project, later)

    result = run_cli("state", "rm", "Survey/other")

    assert result.exit_code == 1
    assert "Webhook/orders, a resource of kind 'Webhook'" in result.stderr
    assert "a newer surveyctl wrote this state" in result.stderr
    assert _state_file(project).read_text(encoding="utf-8") == text


@pytest.mark.parametrize("backend", ["file"])
def test_a_create_in_flight_of_a_kind_a_newer_surveyctl_added_is_not_called_foreign(
    run_cli, project
):
    # Removing that entry by hand, as a foreign one would be, forgets a create that may have
    # been made: the next apply of the newer surveyctl would make it again.
    def later(data: dict) -> None:
        data["journal"]["Webhook/orders"] = {
            "address": "Webhook/orders",
            "started_at": "2026-11-21T13:30:00+00:00",
            "fingerprint": "sha256:0",
        }

    _written_by_later_version(project, later)

    result = run_cli("state", "list")

    assert result.exit_code == 1
    assert "Webhook/orders, a resource of kind 'Webhook'" in result.stderr
    assert "remove that entry" not in result.stderr


@pytest.mark.parametrize("backend", ["file"])
def test_history_written_by_a_newer_surveyctl_is_refused_not_left_out(
    run_cli, project, monkeypatch
):
    with monkeypatch.context() as later:
        _as_later_surveyctl(later)
        store = open_staging(project)
        with store.locked("apply"):
            store.record("Survey/gone", LaterSurveyRecord(4713, owner="ann"))
            store.forget("Survey/gone")
        store.close()

    result = run_cli("state", "history")

    assert result.exit_code == 1
    assert "Survey/gone holds 'owner'" in result.stderr


# State files as earlier surveyctls wrote them (an apply of three resources, then a create
# journalled and never answered), by the commit that wrote them: before prevent_destroy was
# kept, with it, with the change history, with each survey's mod_on, and with status changes
# in the history (of a managed survey, of one the state does not manage, of a transaction).
EARLIER = Path(__file__).parent / "data" / "earlier"


@pytest.mark.parametrize("backend", ["file"])
@pytest.mark.parametrize("commit", sorted(p.name for p in EARLIER.iterdir()))
def test_a_state_an_earlier_surveyctl_wrote_is_read_and_written(run_cli, project, commit):
    folder = project / ".surveyctl" / "state"
    folder.mkdir(parents=True)
    for written in (EARLIER / commit).iterdir():
        (folder / written.name.replace("sandbox", "staging")).write_bytes(written.read_bytes())
    before = json.loads((folder / "staging.json").read_text(encoding="utf-8"))

    removed = run_cli("state", "rm", "Survey/tracker-ca")
    listed = run_cli("state", "list")
    history = run_cli("state", "history")

    assert removed.exit_code == 0, removed.stderr
    assert history.stdout.splitlines()[-1].split()[-2:] == ["Survey/tracker-ca", "removed"]
    groups = before["resources"]["ExclusionGroup/trackers"]["ps_survey_ids"]
    survey_id = before["resources"]["Survey/tracker-us"]["ps_survey_id"]
    assert [line for line in listed.stdout.splitlines() if "unresolved" not in line] == [
        "ExclusionGroup/trackers  buyer_surveygroup_ref=trackers-2026 surveys="
        + ",".join(str(i) for i in groups),
        f"Survey/tracker-us  ps_survey_id={survey_id} quotas=1",
    ]
    assert ("Survey/tracker-uk  (unresolved create since" in listed.stdout) == bool(
        before["journal"]
    )
    after = json.loads((folder / "staging.json").read_text(encoding="utf-8"))
    assert after["resources"]["Survey/tracker-us"] == {
        "prevent_destroy": False,
        **before["resources"]["Survey/tracker-us"],
    }
