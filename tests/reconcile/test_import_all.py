"""import --all-unmanaged over real HTTP: adopting every survey surveyctl does not manage yet."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from surveyctl.api import ApiClient
from surveyctl.reconcile.discovery import name_from_title
from surveyctl.reconcile.kinds.survey_listing import MIN_LISTED
from surveyctl.resources import valid_name
from surveyctl.state import FileStateStore

from .conftest import survey_manifest
from .test_list_reads import survey_reads


def _store(project: Path) -> FileStateStore:
    return FileStateStore(project / ".surveyctl" / "state" / "local.json")


@pytest.fixture
def own(project, start_sandbox):
    """A sandbox of this test alone, so the account holds only the surveys the test makes."""
    sandbox = start_sandbox()
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  local: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: local\n",
        encoding="utf-8",
    )
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    yield client
    client.close()


def _made_by_hand(own: ApiClient, title: str) -> int:
    return own.create_survey(survey_manifest("x", survey_title=title)["spec"])["ps_survey_id"]


def _import_all(run_cli, *options):
    return run_cli("import", "--all-unmanaged", "--out-dir", "manifests/imported", *options)


def test_every_unmanaged_survey_gets_its_own_manifest_named_from_its_title(
    project, own, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    first = _made_by_hand(own, "Brand Tracker – Q3 (US)")
    second = _made_by_hand(own, "brand tracker Q3 US")
    result = _import_all(run_cli)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Adopted 2 survey(s) into manifests/imported." in result.stdout
    state = _store(project).load()
    assert state.survey("brand-tracker-q3-us").ps_survey_id == first
    assert state.survey("brand-tracker-q3-us-2").ps_survey_id == second
    written = yaml.safe_load(
        (project / "manifests/imported/brand-tracker-q3-us-2.yaml").read_text()
    )
    assert written["name"] == "brand-tracker-q3-us-2"
    assert written["spec"]["survey_title"] == "brand tracker Q3 US"


def test_manifests_adopted_all_at_once_are_already_formatted(project, own, run_cli):
    _made_by_hand(own, "Brand tracker Q3")
    assert _import_all(run_cli).exit_code == 0
    checked = run_cli("fmt", "--check", "manifests/imported")
    assert checked.exit_code == 0, checked.stdout
    assert "0 file(s) would be reformatted, 1 already formatted" in checked.stderr


def test_after_adopting_all_the_plan_shows_no_changes_and_nothing_is_unmanaged(
    project, own, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    _made_by_hand(own, "Concept test")
    _made_by_hand(own, "Ad test")
    assert _import_all(run_cli).exit_code == 0
    plan = run_cli("plan", "manifests", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout
    assert "No changes." in plan.stdout
    unmanaged = run_cli("surveys", "list", "--unmanaged", "--format", "json")
    assert unmanaged.stdout.strip() == "[]"


def test_each_adopted_survey_is_its_own_state_write(project, own, run_cli):
    for title in ("One", "Two", "Three"):
        _made_by_hand(own, title)
    assert _import_all(run_cli).exit_code == 0
    assert _store(project).load().serial == 3


def test_closed_surveys_are_left_out_unless_asked_for(project, own, run_cli):
    closed = _made_by_hand(own, "Old wave")
    for status in (22, 33, 44):
        own.set_survey_status(closed, status)
    _made_by_hand(own, "New wave")
    assert _import_all(run_cli).exit_code == 0
    assert _store(project).load().addresses() == ["Survey/new-wave"]
    assert _import_all(run_cli, "--status", "closed").exit_code == 0
    assert _store(project).load().survey("old-wave").ps_survey_id == closed


def test_a_name_taken_by_a_file_in_the_folder_is_not_overwritten(project, own, run_cli):
    folder = project / "manifests" / "imported"
    folder.mkdir(parents=True)
    (folder / "concept-test.yaml").write_text("# mine\n")
    _made_by_hand(own, "Concept test")
    assert _import_all(run_cli).exit_code == 0
    assert (folder / "concept-test.yaml").read_text() == "# mine\n"
    assert _store(project).load().addresses() == ["Survey/concept-test-2"]


def _read_manifests_folder(project: Path) -> None:
    """Names `manifests/` as the project's manifests, as a team's surveyctl.yaml does."""
    config = project / "surveyctl.yaml"
    config.write_text("manifests: [manifests/]\n" + config.read_text(), encoding="utf-8")


def test_a_survey_whose_manifest_exists_is_left_to_it_not_written_again(
    project, own, manifests, run_cli
):
    _read_manifests_folder(project)
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "--auto-approve").exit_code == 0
    survey_id = _store(project).load().survey("tracker").ps_survey_id
    assert run_cli("state", "rm", "Survey/tracker").exit_code == 0  # as after a lost state
    result = _import_all(run_cli)
    assert result.exit_code == 1
    assert f"`surveyctl import {survey_id} --name tracker`" in result.stderr
    assert list((project / "manifests" / "imported").glob("*.yaml")) == []
    assert _store(project).load().resources == {}
    assert run_cli("validate", "--offline").exit_code == 0


def test_an_adopted_survey_never_takes_the_name_of_a_manifest(project, own, manifests, run_cli):
    _read_manifests_folder(project)
    manifests.write(survey_manifest("concept-test"))  # another survey's manifest, not applied
    _made_by_hand(own, "Concept test")
    result = _import_all(run_cli)
    assert result.exit_code == 0, result.stderr
    assert _store(project).load().addresses() == ["Survey/concept-test-2"]
    assert run_cli("validate", "--offline").exit_code == 0


def test_adopting_all_is_refused_while_a_create_is_unresolved(project, own, run_cli):
    _made_by_hand(own, "Maybe the lost one")
    _store(project).journal_create("Survey/lost", survey_manifest("lost")["spec"])
    result = _import_all(run_cli)
    assert result.exit_code == 1
    assert "unresolved create (Survey/lost)" in result.stderr
    assert _store(project).load().resources == {}
    assert list((project / "manifests" / "imported").glob("*.yaml")) == []


def test_adopting_all_when_every_survey_is_managed_makes_no_out_dir(
    project, own, manifests, run_cli
):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    result = _import_all(run_cli)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Adopted 0 survey(s)" in result.stdout
    assert not (project / "manifests" / "imported").exists()


def test_all_unmanaged_needs_an_out_dir(own, run_cli):
    result = run_cli("import", "--all-unmanaged")
    assert result.exit_code != 0
    assert "--all-unmanaged needs --out-dir DIR" in result.stderr


def test_an_out_dir_that_is_a_file_is_refused_before_any_request(project, own, run_cli):
    (project / "taken").write_text("")
    _made_by_hand(own, "Concept test")
    result = run_cli("import", "--all-unmanaged", "--out-dir", "taken")
    assert result.exit_code != 0
    assert "'taken' is a file" in result.stderr
    assert _store(project).load().resources == {}


@pytest.mark.parametrize(
    ("title", "taken", "expected"),
    [
        ("Brand Tracker – Q3 (US)", set(), "brand-tracker-q3-us"),
        ("Étude Café Crème", set(), "etude-cafe-creme"),
        ("!!!", set(), "survey-10001"),
        ("Concept", {"concept", "concept-2"}, "concept-3"),
        ("x" * 80, set(), "x" * 63),
        ("x" * 80, {"x" * 63}, "x" * 61 + "-2"),
    ],
)
def test_names_from_titles_follow_the_name_rule_and_are_unique(title, taken, expected):
    name = name_from_title(title, 10001, set(taken))
    assert name == expected
    assert valid_name(name)


def _adopted_many(project, own, run_cli) -> list[int]:
    """As many hand-made surveys as the survey list can spare reads for, adopted at once into
    the manifests the plan reads."""
    made = [_made_by_hand(own, f"Hand made {index}") for index in range(MIN_LISTED + 2)]
    assert _import_all(run_cli).exit_code == 0
    return made


def test_a_plan_after_adopting_all_reads_the_survey_list_not_each_survey(project, own, run_cli):
    _adopted_many(project, own, run_cli)

    planned = run_cli("--debug", "plan", "manifests")

    assert planned.stdout.startswith("No changes."), planned.stdout
    assert survey_reads(planned) == []


def test_an_adopted_survey_changed_on_the_service_since_is_read_and_shown_as_drift(
    project, own, run_cli
):
    changed = _adopted_many(project, own, run_cli)[3]
    own.update_survey(changed, {**own.get_survey(changed), "offer_price": 3.0})

    planned = run_cli("--debug", "plan", "manifests")

    assert survey_reads(planned) == [f"GET /surveys/{changed}"]
    assert "offer_price" in planned.stdout and "No changes." not in planned.stdout


def test_each_adopted_manifest_is_laid_out_once(project, own, run_cli, monkeypatch):
    from surveyctl.reconcile import importer

    laid_out = []
    original = importer.canonical

    def counted(text: str, source: str) -> str:
        laid_out.append(source)
        return original(text, source)

    monkeypatch.setattr(importer, "canonical", counted)
    for title in ("One", "Two", "Three"):
        _made_by_hand(own, title)

    assert _import_all(run_cli).exit_code == 0

    assert len(laid_out) == 3


class _Died(BaseException):
    """The process dying at that point (a BaseException: nothing catches it)."""


def test_an_import_that_dies_at_a_state_write_is_completed_by_the_next_without_doubles(
    project, own, run_cli, monkeypatch
):
    made = [_made_by_hand(own, title) for title in ("One", "Two", "Three", "Four")]
    real = FileStateStore.resolve_create
    writes = []

    def dies_at_the_third(store, *args, **kwargs):
        writes.append(args[0])
        if len(writes) == 3:
            raise _Died()
        return real(store, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(FileStateStore, "resolve_create", dies_at_the_third)
        with pytest.raises(_Died):
            _import_all(run_cli)
    assert len(_store(project).load().resources) == 2  # each adopted survey kept
    again = _import_all(run_cli)
    assert again.exit_code == 0, again.stdout + again.stderr
    assert "Adopted 2 survey(s)" in again.stdout
    state = _store(project).load()
    recorded = sorted(record.ps_survey_id for record in state.resources.values())
    assert recorded == sorted(made)
    written = sorted(path.stem for path in (project / "manifests/imported").glob("*.yaml"))
    assert written == sorted(name.split("/", 1)[1] for name in state.resources)
