"""A survey is never created twice: a lost, emptied or misplaced state costs a question, not a
duplicate. Over real HTTP against the sandbox, on the file and on PostgreSQL."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.manifests import load_desired
from surveyctl.reconcile.identity import Rule
from surveyctl.reconcile.twins import find_twins
from surveyctl.state import FileStateStore, State, SurveyRecord, open_state

from ..overlapping import OverlappingReads
from ..reconcile.conftest import Manifests, group_manifest, survey_manifest
from ..reconcile.proxies import Proxy, RefusingProxy
from .conftest import DSN_VARIABLE


@pytest.fixture
def unique() -> str:
    """A suffix of this test's titles and group references: the sandbox account is shared."""
    return uuid.uuid4().hex[:8]


@pytest.fixture
def settings(state_setting) -> dict:
    """What the `local` environment of surveyctl.yaml says (rewritten by `configure`)."""
    return {"state": state_setting, "extra": ""}


def configure(project: Path, url: str, state: str, extra: str = "") -> None:
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{url}', api_key_env: SURVEYCTL_LOCAL_KEY{state}{extra}}}\n"
        "default_environment: local\nmanifests: [manifests]\n",
        encoding="utf-8",
    )


@pytest.fixture
def project(tmp_path: Path, sandbox, monkeypatch, settings) -> Path:
    """The `local` environment on the session sandbox, its state in the backend under test."""
    configure(tmp_path, sandbox.url, settings["state"])
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", "sandbox-buyer-1")
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def lose_state(project: Path, backend: str, sandbox, postgres_fixture=None) -> None:
    """What a fresh CI checkout sees: the file state gone, or a PostgreSQL schema never used."""
    if backend == "file":
        shutil.rmtree(project / ".surveyctl" / "state")
        return
    schema = postgres_fixture.fresh_schema()
    configure(
        project,
        sandbox.url,
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}",
    )


@pytest.fixture
def lost(project, backend, sandbox, request):
    """Call it to lose the state of the project."""
    postgres = request.getfixturevalue("postgres") if backend == "postgres" else None
    return lambda: lose_state(project, backend, sandbox, postgres)


def state_of(project: Path):
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"))
    try:
        return store.load()
    finally:
        store.close()


def ids_titled(api, title: str) -> list[int]:
    listed = api.list_surveys(status=[11, 22, 33, 44])
    return sorted(s["ps_survey_id"] for s in listed if s["survey_title"] == title)


def shown(api, survey_id: int) -> str:
    """How a plan names survey `survey_id`: its id, its status and when it was created."""
    survey = api.get_survey(survey_id)
    status = {11: "draft", 22: "live", 33: "paused", 44: "closed"}[survey["ps_survey_status"]]
    return f"survey {survey_id} ({status}, created {survey['project_creation_date']})"


def tracker(unique: str, name: str = "tracker", **spec) -> dict:
    return survey_manifest(name, **{"survey_title": f"Tracker {unique}", **spec})


def applied(run_cli, *args: str):
    result = run_cli("apply", *args, "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    return result


def test_a_plan_from_a_lost_state_creates_nothing_and_names_the_survey_to_adopt(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert "will be created" not in plan.stdout
    assert (
        f"  error: Survey/tracker: exists on the service as survey {made} (same title and "
        f"locale) but is not in state; adopt it with `surveyctl import {made} --name tracker`, "
        "or plan and apply with --adopt (records it, then plans the differences as updates); "
        "--allow-duplicate creates another one beside it"
    ) in plan.stdout.splitlines()


def test_apply_from_a_lost_state_refuses_and_leaves_one_survey(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    again = run_cli("apply", "--auto-approve")
    assert again.exit_code == 1
    assert "the plan has errors; nothing was applied" in again.stderr
    assert len(ids_titled(api, f"Tracker {unique}")) == 1


def test_adopt_records_the_survey_and_the_next_plan_has_no_changes(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    adopted = applied(run_cli, "--adopt")
    assert (
        f"  note: Survey/tracker: exists on the service as survey {made} (same title and locale) "
        "and is adopted (--adopt): apply records it in the state before its writes"
    ) in adopted.stdout.splitlines()
    assert state_of(project).resources["Survey/tracker"].ps_survey_id == made
    plan = run_cli("plan", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout
    assert "No changes." in plan.stdout
    assert ids_titled(api, f"Tracker {unique}") == [made]


def test_allow_duplicate_creates_exactly_one_more(run_cli, manifests, lost, api, unique):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    result = applied(run_cli, "--allow-duplicate")
    assert "Apply complete! Resources: 1 added" in result.stdout
    assert len(ids_titled(api, f"Tracker {unique}")) == 2


def test_allow_duplicate_of_a_survey_no_address_manages_warns_without_naming_an_address(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    plan = run_cli("plan", "--allow-duplicate")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert (
        f"  warning: Survey/tracker: exists on the service as {shown(api, made)} but is not in "
        "state; created once more, as --allow-duplicate says"
    ) in plan.stdout.splitlines()


def test_state_rebuild_adopts_what_exists_and_the_next_plan_has_no_changes(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker"))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    rebuilt = run_cli("state", "rebuild", "--yes")
    assert rebuilt.exit_code == 0, rebuilt.stdout + rebuilt.stderr
    assert f"+ Survey/tracker: adopt survey {made}" in rebuilt.stdout
    assert f"+ ExclusionGroup/trackers: adopt group trackers-{unique}" in rebuilt.stdout
    assert "Rebuild: 2 to adopt, 0 ambiguous, 0 not found, 0 already in state." in rebuilt.stdout
    plan = run_cli("plan", "--detailed-exitcode")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert "No changes." in plan.stdout
    assert ids_titled(api, f"Tracker {unique}") == [made]


# -- one backend is enough for what follows: each test chooses where the state is, or the rule
# is the same whichever keeps it.

file_only = pytest.mark.parametrize("backend", ["file"])


@file_only
def test_switching_to_postgres_before_migrating_refuses_to_plan(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    schema = postgres.fresh_schema()
    configure(
        project,
        sandbox.url,
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}",
    )
    for command in ("plan", "apply"):
        result = run_cli(command, *(("--auto-approve",) if command == "apply" else ()))
        assert result.exit_code == 1
        assert "will be created" not in result.stdout
        message = result.stderr
        assert ".surveyctl/state/local.json holds its state (serial 2, 1 resource(s))" in message
        assert f"PostgreSQL (${DSN_VARIABLE}, schema {schema})" in message
        assert "`surveyctl state migrate --from file --env local`" in message
        assert postgres.password not in message


@file_only
def test_switching_to_the_file_while_postgres_holds_the_state_refuses_to_plan(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    # The place `state migrate --from postgres` reads by default: $SURVEYCTL_STATE_DSN,
    # schema surveyctl, shared by the tests, so this environment has a name of its own.
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    environment = f"e{unique}"
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
        f"SURVEYCTL_LOCAL_KEY, state: {{backend: postgres, dsn_env: {DSN_VARIABLE}}}}}\n"
        f"default_environment: {environment}\nmanifests: [manifests]\n",
        encoding="utf-8",
    )
    manifests.write(tracker(unique))
    applied(run_cli)
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
        f"SURVEYCTL_LOCAL_KEY}}\ndefault_environment: {environment}\nmanifests: [manifests]\n",
        encoding="utf-8",
    )
    result = run_cli("plan")
    assert result.exit_code == 1
    assert "will be created" not in result.stdout
    assert f".surveyctl/state/{environment}.json, which holds nothing" in result.stderr
    assert f"PostgreSQL (${DSN_VARIABLE}, schema surveyctl) holds its state" in result.stderr
    assert f"`surveyctl state migrate --from postgres --env {environment}`" in result.stderr


def assert_the_migrate_named_copies_the_state(run_cli, said: str, migrate: str) -> None:
    """`said` names `migrate`, and that way out works: the state is copied into the place
    surveyctl.yaml names, and the plan has nothing to do."""
    assert f"`{migrate}`" in said
    copied = run_cli(*migrate.split()[1:])
    assert copied.exit_code == 0, copied.stderr
    again = run_cli("plan", "--detailed-exitcode")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert "No changes" in again.stdout


@file_only
def test_switching_to_the_file_while_the_projects_own_schema_holds_the_state_refuses_to_plan(
    run_cli, sandbox, postgres, monkeypatch, tmp_path, unique
):
    # `init` keeps a project's state in the schema named after its folder; a surveyctl.yaml
    # that lost its `state:` block must not plan every survey again beside that state.
    folder = tmp_path / f"brand-trackers-{unique}"
    schema = f"brand_trackers_{unique}"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    postgres_state = f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
    configure(folder, sandbox.url, postgres_state)
    Manifests(folder).write(tracker(unique))
    applied(run_cli)
    configure(folder, sandbox.url, "")
    result = run_cli("plan")
    assert result.exit_code == 1
    assert "will be created" not in result.stdout
    assert f"PostgreSQL (${DSN_VARIABLE}, schema {schema}) holds its state" in result.stderr
    assert f"dsn_env: {DSN_VARIABLE}, schema: {schema}}}` for it" in result.stderr
    migrate = f"surveyctl state migrate --from postgres --schema {schema} --env local"
    assert postgres.password not in result.stderr
    assert_the_migrate_named_copies_the_state(run_cli, result.stderr, migrate)


@file_only
def test_a_schema_set_without_copying_the_state_warns_of_the_state_in_schema_surveyctl(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    # A project made before `init` named a schema keeps its state in `surveyctl`; setting
    # `schema:` without `state migrate` leaves the new schema empty. Schema surveyctl is
    # shared by the tests, so this environment has a name of its own.
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    environment = f"e{unique}"

    def configure_schema(setting: str) -> None:
        (project / "surveyctl.yaml").write_text(
            f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
            f"SURVEYCTL_LOCAL_KEY, state: {{backend: postgres, dsn_env: {DSN_VARIABLE}"
            f"{setting}}}}}\ndefault_environment: {environment}\nmanifests: [manifests]\n",
            encoding="utf-8",
        )

    configure_schema("")
    manifests.write(tracker(unique))
    applied(run_cli)
    schema = postgres.fresh_schema()
    configure_schema(f", schema: {schema}")
    result = run_cli("plan")
    said = f"in schema {schema} is empty, while schema surveyctl of the same database holds one"
    assert said in result.stderr
    migrate = (
        f"surveyctl state migrate --from postgres --dsn-env {DSN_VARIABLE} --schema surveyctl "
        f"--env {environment}"
    )
    assert postgres.password not in result.stderr
    assert_the_migrate_named_copies_the_state(run_cli, result.stderr, migrate)


def test_a_schema_of_its_own_that_holds_nothing_names_no_other_schema_when_surveyctl_is_empty(
    run_cli, manifests, unique
):
    manifests.write(tracker(unique))
    result = run_cli("plan")
    assert "is empty, so the plan creates 1 resource(s)" in result.stderr
    assert "schema surveyctl of the same database" not in result.stderr


@file_only
def test_a_file_copied_to_schema_surveyctl_is_not_the_state_named_for_a_schema_of_its_own(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    # The file went to schema surveyctl, which the team then applied to; the file is older
    # than that copy, so the migrate to name for the new schema is the one from surveyctl.
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    environment = f"e{unique}"

    def configure_state(setting: str) -> None:
        (project / "surveyctl.yaml").write_text(
            f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
            f"SURVEYCTL_LOCAL_KEY{setting}}}\ndefault_environment: {environment}\n"
            "manifests: [manifests]\n",
            encoding="utf-8",
        )

    configure_state("")
    manifests.write(tracker(unique))
    applied(run_cli)
    configure_state(f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}}}")
    assert run_cli("state", "migrate", "--from", "file").exit_code == 0
    manifests.write(tracker(unique, "second", survey_title=f"Second {unique}"))
    applied(run_cli)
    schema = postgres.fresh_schema()
    configure_state(f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}")
    result = run_cli("plan")  # withholds both creates: their surveys exist
    assert "--from file" not in result.stderr
    migrate = (
        f"surveyctl state migrate --from postgres --dsn-env {DSN_VARIABLE} --schema surveyctl "
        f"--env {environment}"
    )
    assert f"`{migrate}`" in result.stderr
    assert run_cli(*migrate.split()[1:]).exit_code == 0
    again = run_cli("plan", "--detailed-exitcode")
    assert again.exit_code == 0, again.stdout + again.stderr


class CountingProxy(Proxy):
    """Forwards to the sandbox and keeps the method and path of every request (and the query
    of each read of the survey list)."""

    def __init__(self, upstream: str):
        super().__init__(upstream)
        self.seen: list[tuple[str, str]] = []
        self.list_queries: list[dict[str, str]] = []

    def reshape(self, request, answer, headers) -> bytes:
        self.seen.append((request.method, request.path))
        if (request.method, request.path) == ("GET", "/buyers/v2/surveys"):
            self.list_queries.append(dict(request.args))
        return answer.content

    def list_reads(self) -> int:
        return sum(1 for method, path in self.seen if (method, path[-8:]) == ("GET", "/surveys"))


@pytest.fixture
def counted(project, sandbox, settings):
    """The project's environment behind a proxy that counts the requests."""
    proxy = CountingProxy(sandbox.url)
    configure(project, proxy.url, settings["state"])
    yield proxy
    proxy.stop()


@file_only
def test_a_plan_without_creates_makes_no_request_but_the_live_reads(
    run_cli, manifests, counted, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    assert counted.list_reads() >= 4  # the create looked for its twin: every status
    made = state_of(project).resources["Survey/tracker"].ps_survey_id
    before = len(counted.seen)
    plan = run_cli("plan", "--detailed-exitcode")
    assert plan.exit_code == 0
    assert counted.seen[before:] == [("GET", f"/buyers/v2/surveys/{made}")]


@file_only
def test_the_survey_list_is_read_without_targeting_one_status_at_a_time(
    run_cli, manifests, counted, unique
):
    manifests.write(tracker(unique))
    assert run_cli("plan").exit_code == 0
    assert sorted(q["status"] for q in counted.list_queries if q["page"] == "1") == [
        "11",
        "22",
        "33",
        "44",
    ]
    assert all(q["targeting"] == "0" for q in counted.list_queries)


@file_only
def test_several_twins_are_all_named_and_adopt_does_not_choose(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    applied(run_cli, "--allow-duplicate")
    first, second = ids_titled(api, f"Tracker {unique}")
    lost()
    plan = run_cli("plan", "--adopt")
    assert plan.exit_code == 1
    assert (
        "  error: Survey/tracker: exists on the service more than once: "
        f"{shown(api, first)}, {shown(api, second)}, but is not in state; adopt the right one "
        "with `surveyctl import ID --name tracker` for the one it is, or create one more with "
        "--allow-duplicate; --adopt does not choose between them"
    ) in plan.stdout.splitlines()
    assert "will be created" not in plan.stdout


@file_only
def test_a_closed_survey_of_the_same_title_is_an_earlier_wave_not_a_twin(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (earlier,) = ids_titled(api, f"Tracker {unique}")
    for status in (22, 33, 44):  # live, paused, closed
        api.set_survey_status(earlier, status)
    lost()
    plan = run_cli("plan", "--detailed-exitcode")
    assert plan.exit_code == 2, plan.stdout
    assert "+ Survey/tracker will be created" in plan.stdout
    assert (
        f"  note: Survey/tracker: closed {shown(api, earlier)} share its title and locale; "
        "closed surveys are taken as earlier waves, not as this one (docs/state.md, Identity)"
    ) in plan.stdout.splitlines()


@file_only
def test_a_saved_plan_records_allow_duplicate_and_applies_with_it(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    saved = run_cli("plan", "--allow-duplicate", "--out", "twin.plan")
    assert saved.exit_code == 0, saved.stdout
    assert json.loads((project / "twin.plan").read_text())["plan"]["overrides"] == ["duplicate"]
    applied(run_cli, "twin.plan", "--allow-duplicate")  # an unsigned plan: named again
    assert len(ids_titled(api, f"Tracker {unique}")) == 2


@file_only
def test_an_empty_state_with_creates_is_announced_on_stderr(run_cli, manifests, unique):
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 0
    assert "the state of environment 'local'" in plan.stderr
    assert ".surveyctl/state/local.json) is empty, so the plan creates 1 resource(s)" in (
        plan.stderr
    )
    assert "warning" not in plan.stdout


@file_only
def test_the_pull_request_comment_carries_the_empty_state_warning(run_cli, manifests, unique):
    manifests.write(tracker(unique))
    comment = run_cli("plan", "--format", "markdown")
    assert comment.exit_code == 0
    warning = next(line for line in comment.stdout.splitlines() if "Warning" in line)
    assert warning.startswith("> **Warning:** the state of environment 'local' (")
    assert "is empty, so the plan creates 1 resource(s)" in warning
    assert json.loads(run_cli("plan", "--format", "json").stdout)["warnings"] == [
        comment.stderr.split("surveyctl: warning: ", 1)[1].strip()
    ]


@file_only
def test_a_plan_of_a_kept_state_carries_no_warning(run_cli, manifests, unique):
    manifests.write(tracker(unique))
    applied(run_cli)
    manifests.write(tracker(unique + "-2", name="second"))
    comment = run_cli("plan", "--format", "markdown")
    assert "1 to add" in comment.stdout
    assert "Warning" not in comment.stdout


def _protected(project: Path, sandbox) -> None:
    configure(project, sandbox.url, "", ", protected: true")


@file_only
def test_ci_refuses_to_apply_from_an_empty_local_state_on_a_protected_environment(
    run_cli, manifests, project, sandbox, monkeypatch, api, unique
):
    _protected(project, sandbox)
    monkeypatch.setenv("CI", "true")
    manifests.write(tracker(unique))
    result = run_cli("--env", "local", "apply", "--auto-approve")
    assert result.exit_code == 1
    assert "CI=true and the state of protected environment 'local' is a local file" in (
        result.stderr
    )
    assert "--allow-local-state" in result.stderr
    assert ids_titled(api, f"Tracker {unique}") == []


@file_only
def test_allow_local_state_lets_ci_apply_from_an_empty_local_state(
    run_cli, manifests, project, sandbox, monkeypatch, api, unique
):
    _protected(project, sandbox)
    monkeypatch.setenv("CI", "true")
    manifests.write(tracker(unique))
    result = run_cli("--env", "local", "apply", "--auto-approve", "--allow-local-state")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(ids_titled(api, f"Tracker {unique}")) == 1


@file_only
def test_with_external_project_id_a_survey_is_known_by_its_address_not_its_title(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    configure(project, sandbox.url, "", ", identity: external_project_id")
    name = f"t-{unique}"  # the id is the environment and the address: unique in the account
    manifests.write(tracker(unique, name))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    assert api.get_survey(made)["external_project_id"] == f"local/Survey/{name}"
    lost()
    manifests.write(tracker(unique, name, survey_title=f"Tracker {unique} renamed"))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {made} (same external_project_id)" in plan.stdout


@file_only
def test_with_external_project_id_a_closed_survey_of_the_address_is_the_survey(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    configure(project, sandbox.url, "", ", identity: external_project_id")
    manifests.write(tracker(unique, f"t-{unique}"))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    for status in (22, 33, 44):
        api.set_survey_status(made, status)
    lost()
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {made} (same external_project_id)" in plan.stdout


def _applied_by_external_id(run_cli, manifests, api, project, sandbox, unique, name) -> int:
    """Survey `name` (title Tracker UNIQUE) applied under the external_project_id rule: its id."""
    configure(project, sandbox.url, "", ", identity: external_project_id")
    manifests.write(tracker(unique, name))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    return made


def _renamed(manifests, unique) -> None:
    manifests.remove(f"old-{unique}")
    manifests.write(tracker(unique, f"new-{unique}"))


@file_only
def test_with_external_project_id_a_renamed_manifest_names_the_state_mv(
    run_cli, manifests, api, project, sandbox, unique
):
    made = _applied_by_external_id(
        run_cli, manifests, api, project, sandbox, unique, f"old-{unique}"
    )
    _renamed(manifests, unique)
    plan = run_cli("plan")
    assert plan.exit_code == 1, plan.stdout
    assert f"which the state manages as Survey/old-{unique}, no longer in the manifests" in (
        plan.stdout
    )
    assert f"`surveyctl state mv Survey/old-{unique} Survey/new-{unique}`" in plan.stdout
    assert run_cli("apply", "--auto-approve").exit_code == 1
    assert ids_titled(api, f"Tracker {unique}") == [made]


@file_only
def test_with_external_project_id_a_state_lost_after_state_mv_creates_nothing(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    made = _applied_by_external_id(
        run_cli, manifests, api, project, sandbox, unique, f"old-{unique}"
    )
    _renamed(manifests, unique)
    moved = run_cli("state", "mv", f"Survey/old-{unique}", f"Survey/new-{unique}")
    assert moved.exit_code == 0, moved.stderr
    lost()  # the service still holds the stamp of the old address
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {made} (same title and locale)" in plan.stdout
    assert run_cli("apply", "--auto-approve").exit_code == 1
    assert ids_titled(api, f"Tracker {unique}") == [made]


@file_only
def test_with_external_project_id_a_renamed_environment_creates_nothing(
    run_cli, manifests, api, project, sandbox, unique
):
    made = _applied_by_external_id(run_cli, manifests, api, project, sandbox, unique, f"t-{unique}")
    renamed = (project / "surveyctl.yaml").read_text().replace("local", "local2")
    (project / "surveyctl.yaml").write_text(renamed)
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {made} (same title and locale)" in plan.stdout
    assert ids_titled(api, f"Tracker {unique}") == [made]


@file_only
def test_with_external_project_id_two_manifests_of_one_title_stay_two_surveys(
    run_cli, manifests, api, project, sandbox, unique
):
    _applied_by_external_id(run_cli, manifests, api, project, sandbox, unique, f"first-{unique}")
    manifests.write(tracker(unique, f"second-{unique}"))  # the same title and locale
    plan = run_cli("plan")
    assert plan.exit_code == 0, plan.stdout
    assert f"+ Survey/second-{unique} will be created" in plan.stdout
    applied(run_cli)
    assert len(ids_titled(api, f"Tracker {unique}")) == 2


@file_only
def test_adopt_plans_the_differences_with_the_live_survey_as_an_update(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    manifests.write(tracker(unique, offer_price=3.0))
    plan = run_cli("plan", "--adopt", "--detailed-exitcode")
    assert plan.exit_code == 2, plan.stdout + plan.stderr
    assert f"Survey/tracker (ps_survey_id {made}) will be updated" in plan.stdout
    assert "offer_price: 2.5 -> 3" in plan.stdout
    assert "will be created" not in plan.stdout
    applied(run_cli, "--adopt")
    assert api.get_survey(made)["offer_price"] == 3.0
    assert run_cli("plan", "--detailed-exitcode").exit_code == 0


@file_only
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_plan_saved_with_adopt_names_the_apply_that_takes_it(
    run_cli, manifests, lost, api, unique, monkeypatch, signed
):
    if signed:
        monkeypatch.setenv("SURVEYCTL_PLAN_KEY", "a-key-of-the-team-0123456789")
    else:
        monkeypatch.delenv("SURVEYCTL_PLAN_KEY", raising=False)
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    saved = run_cli("plan", "--adopt", "--out", "adopt.plan")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    command = "surveyctl apply adopt.plan" + ("" if signed else " --adopt")
    assert f"apply it with `{command}`." in saved.stderr
    result = run_cli(*command.split()[1:], "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ids_titled(api, f"Tracker {unique}") == [made]


@file_only
def test_a_plan_saved_with_errors_says_apply_refuses_it(run_cli, manifests, lost, unique):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()  # its create is withheld: an error of the plan
    saved = run_cli("plan", "--out", "twin.plan")
    assert saved.exit_code == 1
    assert saved.stderr.splitlines()[-1] == (
        "Saved the plan to twin.plan; it has errors, and apply refuses it until they are fixed "
        "and it is made again."
    )
    assert "the plan has errors" in run_cli("apply", "twin.plan").stderr


@file_only
def test_a_create_is_held_back_while_the_survey_list_cannot_be_read(
    run_cli, manifests, project, sandbox, api, unique
):
    proxy = RefusingProxy(sandbox.url)
    proxy.list_refused = True
    try:
        configure(project, proxy.url, "")
        manifests.write(tracker(unique))
        result = run_cli("apply", "--auto-approve")
    finally:
        proxy.stop()
    assert result.exit_code == 1
    (note,) = [line for line in result.stdout.splitlines() if "cannot check" in line]
    assert note.startswith(
        "  warning: Survey/tracker: cannot check whether it exists on the service already "
        "(reading the survey list: GET "
    )
    assert note.endswith(
        "refused (test)); it is left out of this plan and apply does not create it (run it again)"
    )
    assert "will be created" not in result.stdout
    assert "Apply incomplete: 0 done, 0 failed, 1 not attempted." in result.stdout
    assert (
        "  skipped: Survey/tracker (create): whether it exists on the service already could not "
        "be checked, so it was not created; run apply again"
    ) in result.stdout.splitlines()
    assert (
        "1 create is left out: whether it exists on the service already could not be checked "
        "(see the notes)."
    ) in result.stdout
    assert "managed resource could not be read" not in result.stdout
    assert ids_titled(api, f"Tracker {unique}") == []


class KeyRefusingList(Proxy):
    """Answers the survey list 401, as a service that no longer takes the key; the rest passes."""

    def reshape(self, request, answer, headers) -> bytes:
        if request.method == "GET" and request.path == "/buyers/v2/surveys":
            headers["Content-Type"] = "application/json"
            answer.status_code = 401
            return json.dumps({"msg": "invalid access token"}).encode()
        return answer.content


def test_a_survey_list_that_refuses_the_key_ends_the_plan_in_one_sentence(
    run_cli, manifests, project, sandbox, unique
):
    manifests.write(tracker(unique))
    manifests.write(tracker(unique, "other", survey_title=f"Other {unique}"))
    proxy = KeyRefusingList(sandbox.url)
    try:
        configure(project, proxy.url, "")
        plan = run_cli("plan")
    finally:
        proxy.stop()
    assert plan.exit_code == 1
    assert plan.stderr.count("the marketplace refused the API key") == 1, plan.stderr
    assert "cannot check" not in plan.stdout


@file_only
def test_a_saved_plan_made_with_adopt_records_the_survey_when_applied(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    saved = run_cli("plan", "--adopt", "--out", "adopt.plan")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    assert "1 resource is on the service adopted with --adopt" in saved.stdout
    applied(run_cli, "adopt.plan", "--adopt")  # an unsigned plan: named again
    assert state_of(project).resources["Survey/tracker"].ps_survey_id == made
    assert run_cli("plan", "--detailed-exitcode").exit_code == 0


@file_only
def test_a_group_whose_reference_exists_is_not_created_again(run_cli, manifests, lost, unique):
    manifests.write(tracker(unique))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker"))
    applied(run_cli)
    lost()
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert (
        f"  error: ExclusionGroup/trackers: exists on the service as group trackers-{unique} "
        "(same reference) but is not in state; adopt it with `surveyctl import-group "
        f"trackers-{unique} --name trackers`, or plan and apply with --adopt (records it, then "
        "plans the differences as updates)"  # no --allow-duplicate: the reference is unique
    ) in plan.stdout.splitlines()
    assert "will be created" not in plan.stdout


@file_only
def test_state_rebuild_on_a_protected_environment_needs_it_named_without_a_terminal(
    run_cli, manifests, lost, project, sandbox, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    _protected(project, sandbox)
    refused = run_cli("state", "rebuild", "--yes")
    assert refused.exit_code == 1
    assert "--env local" in refused.stderr
    assert "Survey/tracker" not in state_of(project).resources
    named = run_cli("--env", "local", "state", "rebuild", "--yes")
    assert named.exit_code == 0, named.stdout + named.stderr
    assert "Survey/tracker" in state_of(project).resources


@file_only
def test_state_rebuild_leaves_an_ambiguous_manifest_alone_and_exits_1(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    applied(run_cli, "--allow-duplicate")
    lost()
    first, second = ids_titled(api, f"Tracker {unique}")
    rebuilt = run_cli("state", "rebuild", "--yes")
    assert rebuilt.exit_code == 1
    assert f"? Survey/tracker: ambiguous, survey {first} (draft" in rebuilt.stdout
    assert f"survey {second} (draft" in rebuilt.stdout
    assert "Rebuild: 0 to adopt, 1 ambiguous" in rebuilt.stdout
    assert state_of(project).resources == {}


@file_only
def test_state_rebuild_lists_what_the_state_has_and_what_the_service_lacks(
    run_cli, manifests, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    manifests.write(tracker(unique, "other", survey_title=f"Other {unique}"))
    before = state_of(project)
    rebuilt = run_cli("state", "rebuild", "--yes")
    assert rebuilt.exit_code == 0, rebuilt.stdout + rebuilt.stderr
    survey_id = before.resources["Survey/tracker"].ps_survey_id
    assert f"  = Survey/tracker: already in state (ps_survey_id={survey_id} quotas=2)" in (
        rebuilt.stdout
    )
    assert "  - Survey/other: not found on the service; apply creates it" in rebuilt.stdout
    assert "Rebuild: 0 to adopt, 0 ambiguous, 1 not found, 1 already in state." in rebuilt.stdout
    assert state_of(project).to_json() == before.to_json()


@file_only
def test_state_rebuild_leaves_a_journaled_create_to_plan_and_exits_1(
    run_cli, manifests, project, unique
):
    manifests.write(tracker(unique))
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json")
    store.journal_create("Survey/tracker", tracker(unique)["spec"])
    store.flush()
    rebuilt = run_cli("state", "rebuild", "--yes")
    assert rebuilt.exit_code == 1
    assert (
        "  ! Survey/tracker: its create lost its answer and is journaled: `surveyctl plan` "
        "resolves it"
    ) in rebuilt.stdout
    assert "1 to look at." in rebuilt.stdout
    assert state_of(project).resources == {}


@file_only
def test_state_rebuild_names_a_group_reference_another_buyer_holds(
    run_cli, manifests, project, other_buyer_api, unique
):
    ref = f"theirs-{unique}"
    other_buyer_api.create_group(
        {
            "buyer_surveygroup_ref": ref,
            "name": "Theirs",
            "exclusion_period": 30,
            "surveys_in_group": [],
        }
    )
    manifests.write(tracker(unique))
    manifests.write(group_manifest(ref, "tracker"))
    rebuilt = run_cli("state", "rebuild", "--yes")
    assert rebuilt.exit_code == 1
    assert (
        f"  ! ExclusionGroup/trackers: group {ref} exists on the service and belongs to another "
        "buyer"
    ) in rebuilt.stdout
    assert "ExclusionGroup/trackers" not in state_of(project).resources


@file_only
def test_a_survey_two_manifests_match_is_taken_by_neither(run_cli, manifests, lost, api, unique):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    manifests.write(tracker(unique, "tracker-copy"))
    plan = run_cli("plan", "--adopt")
    assert plan.exit_code == 1
    for name in ("tracker", "tracker-copy"):
        assert (
            f"  error: Survey/{name}: exists on the service more than once: {shown(api, made)} "
            "(another manifest matches it too), but is not in state; adopt the right one with "
            f"`surveyctl import ID --name {name}` for the one it is, or create one more with "
            "--allow-duplicate; --adopt does not choose between them"
        ) in plan.stdout.splitlines()
    assert ids_titled(api, f"Tracker {unique}") == [made]


def _made_by_hand(api, unique: str, count: int) -> list[int]:
    """`count` surveys of the tracker's title and locale, made outside surveyctl."""
    body = tracker(unique)["spec"]
    return sorted(api.create_survey(body)["ps_survey_id"] for _ in range(count))


@file_only
def test_a_plan_names_each_of_ten_twins(run_cli, manifests, api, unique):
    made = _made_by_hand(api, unique, 10)
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    listed = ", ".join(shown(api, survey) for survey in made)
    assert (
        f"  error: Survey/tracker: exists on the service more than once: {listed}, but is not "
        "in state; adopt the right one with `surveyctl import ID --name tracker` for the one it "
        "is, or create one more with --allow-duplicate"
    ) in plan.stdout.splitlines()


@file_only
def test_twins_of_several_statuses_are_named_oldest_first(run_cli, manifests, api, unique):
    first, second = _made_by_hand(api, unique, 2)
    api.set_survey_status(first, 22)  # live: the list, read a status at a time, shows it last
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert (
        f"more than once: {shown(api, first)}, {shown(api, second)}, but is not in state"
        in plan.stdout
    )


@file_only
def test_a_plan_names_ten_twins_and_counts_the_others(run_cli, manifests, api, unique):
    made = _made_by_hand(api, unique, 12)
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    listed = ", ".join(shown(api, survey) for survey in made[:10])
    assert f"more than once: {listed} and 2 more, but is not in state" in plan.stdout


@file_only
def test_a_manifests_own_external_project_id_is_kept_under_the_external_id_rule(
    run_cli, manifests, api, project, sandbox, unique
):
    configure(project, sandbox.url, "", ", identity: external_project_id")
    manifests.write(tracker(unique, external_project_id=f"crm-{unique}"))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    assert api.get_survey(made)["external_project_id"] == f"crm-{unique}"


@file_only
def test_with_external_project_id_a_survey_made_before_the_opt_in_is_found_by_its_title(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)  # under the title rule: no external_project_id
    (made,) = ids_titled(api, f"Tracker {unique}")
    lost()
    configure(project, sandbox.url, "", ", identity: external_project_id")
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert f"exists on the service as survey {made} (same title and locale)" in plan.stdout
    assert "will be created" not in plan.stdout


@file_only
@pytest.mark.parametrize(
    "theirs", ["crm-{unique}", "local/ExclusionGroup/tracker", "local/Survey/Tracker_{unique}"]
)
def test_with_external_project_id_a_survey_another_tool_identified_is_not_the_manifests(
    run_cli, manifests, api, project, sandbox, unique, theirs
):
    # The same title and locale, but an external_project_id that is no stamp of a survey
    # address (docs/state.md): a survey of another tool, not one a manifest described.
    configure(project, sandbox.url, "", ", identity: external_project_id")
    spec = tracker(unique)["spec"]
    api.create_survey({**spec, "external_project_id": theirs.format(unique=unique)})
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert "+ Survey/tracker will be created" in plan.stdout
    assert "exists on the service" not in plan.stdout


@file_only
def test_with_external_project_id_a_survey_stamped_for_a_program_member_gone_is_a_twin(
    run_cli, manifests, api, project, sandbox, unique
):
    # The stamp a renamed program's member leaves on the service: the survey is surveyctl's.
    configure(project, sandbox.url, "", ", identity: external_project_id")
    stamp = f"local/Survey/old-{unique}[en_US,w1]"
    made = api.create_survey({**tracker(unique)["spec"], "external_project_id": stamp})
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 1, plan.stdout
    assert (
        f"exists on the service as survey {made['ps_survey_id']} (same title and locale)"
        in plan.stdout
    )


@pytest.fixture
def renamed(run_cli, manifests, api, unique) -> int:
    """Survey/tracker applied, then its manifest renamed to tracker-renamed: the survey's id."""
    manifests.write(tracker(unique))
    applied(run_cli)
    manifests.remove("tracker")
    manifests.write(tracker(unique, "tracker-renamed"))
    (made,) = ids_titled(api, f"Tracker {unique}")
    return made


@file_only
def test_a_renamed_manifest_names_the_state_mv_and_the_other_ways_out(renamed, run_cli):
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert (
        f"  error: Survey/tracker-renamed: exists on the service as survey {renamed} (same title "
        "and locale), which the state manages as Survey/tracker, no longer in the manifests; if "
        "the manifest was renamed, run `surveyctl state mv Survey/tracker Survey/tracker-renamed` "
        "and plan again (it keeps its id and its fieldwork); --allow-duplicate creates another "
        "one beside it"
    ) in plan.stdout.splitlines()


@file_only
def test_allow_duplicate_beside_a_renamed_survey_names_the_address_that_manages_it(
    renamed, run_cli, api
):
    plan = run_cli("plan", "--allow-duplicate")
    assert plan.exit_code == 0, plan.stdout
    assert (
        f"  warning: Survey/tracker-renamed: exists on the service as "
        f"{shown(api, renamed)[:-1]}, managed as Survey/tracker) but is not in state under "
        "this address; created once more, as --allow-duplicate says"
    ) in plan.stdout.splitlines()


@file_only
def test_a_withheld_create_holds_back_only_itself(run_cli, manifests, lost, api, unique):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    manifests.write(tracker(unique, "uplift", survey_title=f"Uplift {unique}"))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert "Survey/tracker: exists on the service as survey" in plan.stdout
    assert "+ Survey/uplift will be created" in plan.stdout
    assert "+ Survey/tracker will be created" not in plan.stdout


@file_only
def test_destroy_replacing_a_renamed_survey_still_withholds_another_manifests_twin(
    renamed, run_cli, manifests, api, unique
):
    other = tracker(unique, "zulu", survey_title=f"Zulu {unique}")
    made = api.create_survey(other["spec"])["ps_survey_id"]  # outside surveyctl
    manifests.write(other)
    plan = run_cli("plan", "--destroy")
    assert plan.exit_code == 1
    assert "+ Survey/tracker-renamed will be created" in plan.stdout  # the replacement
    assert f"Survey/zulu: exists on the service as survey {made}" in plan.stdout
    assert "+ Survey/zulu will be created" not in plan.stdout


@file_only
def test_a_group_whose_reference_belongs_to_another_buyer_is_not_created(
    run_cli, manifests, other_buyer_api, unique
):
    theirs = f"theirs-{unique}"
    other_buyer_api.create_group(
        {"buyer_surveygroup_ref": theirs, "name": theirs, "surveys_in_group": [],
         "exclusion_period": 1}
    )  # fmt: skip
    manifests.write(tracker(unique))
    manifests.write(group_manifest(theirs, "tracker"))
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert (
        f"  error: ExclusionGroup/trackers: group {theirs} exists on the service and belongs to "
        "another buyer; buyer_surveygroup_ref is globally unique, so choose another one"
    ) in plan.stdout.splitlines()
    assert "+ ExclusionGroup/trackers will be created" not in plan.stdout
    assert "+ Survey/tracker will be created" in plan.stdout


@file_only
def test_an_adoption_that_cannot_read_its_survey_holds_back_only_that_manifest(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    for name in ("alpha", "bravo"):
        manifests.write(tracker(unique, name, survey_title=f"{name} {unique}"))
    applied(run_cli)
    (alpha,), (bravo,) = ids_titled(api, f"alpha {unique}"), ids_titled(api, f"bravo {unique}")
    lost()
    proxy = RefusingProxy(sandbox.url)
    proxy.unreadable = {alpha}
    try:
        configure(project, proxy.url, "")
        plan = run_cli("plan", "--adopt")
    finally:
        proxy.stop()
    assert plan.exit_code == 1
    assert "warning: Survey/alpha: cannot check whether it exists on the service already" in (
        plan.stdout
    )
    assert (
        f"  note: Survey/bravo: exists on the service as survey {bravo} (same title and locale) "
        "and is adopted (--adopt): apply records it in the state before its writes"
    ) in plan.stdout.splitlines()
    assert "will be created" not in plan.stdout
    # The summary tells the create held back from a managed resource that could not be read.
    assert "1 create is left out: whether it exists on the service already" in plan.stdout
    assert "could not be read" not in plan.stdout


@file_only
def test_with_external_project_id_an_update_leaves_the_surveys_external_project_id_alone(
    run_cli, manifests, api, project, sandbox, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)  # under the title rule: no external_project_id
    (made,) = ids_titled(api, f"Tracker {unique}")
    before = api.get_survey(made).get("external_project_id")
    configure(project, sandbox.url, "", ", identity: external_project_id")
    manifests.write(tracker(unique, offer_price=3.0))
    applied(run_cli)
    after = api.get_survey(made)
    assert after["offer_price"] == 3.0
    assert after.get("external_project_id") == before


class NoCreationDates(Proxy):
    """The survey list's items without their project_creation_date."""

    def reshape(self, request, answer, headers) -> bytes:
        if (request.method, request.path) == ("GET", "/buyers/v2/surveys"):
            items = [{k: v for k, v in item.items() if k != "project_creation_date"}
                     for item in answer.json()]  # fmt: skip
            return json.dumps(items).encode()
        return answer.content


@file_only
def test_twins_listed_without_a_creation_date_are_named_by_their_status_alone(
    run_cli, manifests, project, sandbox, api, unique
):
    first, second = _made_by_hand(api, unique, 2)
    manifests.write(tracker(unique))
    proxy = NoCreationDates(sandbox.url)
    try:
        configure(project, proxy.url, "")
        plan = run_cli("plan")
    finally:
        proxy.stop()
    assert plan.exit_code == 1
    assert (
        f"exists on the service more than once: survey {first} (draft), survey {second} "
        "(draft), but is not in state" in plan.stdout
    )


@file_only
def test_a_survey_manifest_made_a_program_member_names_the_state_mv_of_that_member(
    run_cli, manifests, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (made,) = ids_titled(api, f"Tracker {unique}")
    template = {k: v for k, v in tracker(unique)["spec"].items() if k != "survey_localization"}
    manifests.remove("tracker")
    manifests.write(
        {
            "kind": "SurveyProgram",
            "name": "trackers",
            "spec": {"template": template, "markets": {"en_US": None}, "waves": ["w1"]},
        }
    )
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert (
        f"  error: Survey/trackers[en_US,w1]: exists on the service as survey {made} (same title "
        "and locale), which the state manages as Survey/tracker, no longer in the manifests; if "
        "the manifest was renamed, run `surveyctl state mv Survey/tracker "
        "'Survey/trackers[en_US,w1]'` and plan again (it keeps its id and its fieldwork); "
        "--allow-duplicate creates another one beside it"
    ) in plan.stdout.splitlines()


@file_only
def test_a_closed_survey_whose_manifest_became_a_program_member_is_an_earlier_wave_of_it(
    run_cli, manifests, api, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    (earlier,) = ids_titled(api, f"Tracker {unique}")
    for status in (22, 33, 44):  # live, paused, closed
        api.set_survey_status(earlier, status)
    template = {k: v for k, v in tracker(unique)["spec"].items() if k != "survey_localization"}
    manifests.remove("tracker")
    manifests.write(
        {
            "kind": "SurveyProgram",
            "name": "trackers",
            "spec": {"template": template, "markets": {"en_US": None}, "waves": ["w1"]},
        }
    )
    # Only a member moved to another program is the closed survey itself (docs/state.md).
    plan = run_cli("plan", "--detailed-exitcode")
    assert plan.exit_code == 2, plan.stdout + plan.stderr
    assert "+ Survey/trackers[en_US,w1] will be created" in plan.stdout
    assert (
        f"note: Survey/trackers[en_US,w1]: closed {shown(api, earlier)[:-1]}, managed as "
        "Survey/tracker) share its title and locale"
    ) in plan.stdout


# -- where the state is: what a backend that holds something, or nothing, makes a plan do.


def _with_postgres_state(project: Path, sandbox, schema: str) -> None:
    configure(
        project,
        sandbox.url,
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}",
    )


def _one_survey_under_two_names(project: Path) -> None:
    """A state file that records survey 4711 as Survey/alpha and as Survey/bravo."""
    store = FileStateStore(project / ".surveyctl" / "state" / "local.json", "local")
    with store.locked("test"):
        store.record("Survey/alpha", SurveyRecord(4711))
        store.record("Survey/bravo", SurveyRecord(4711))
    store.close()


@file_only
def test_switching_to_postgres_from_a_file_state_that_holds_nothing_any_more_plans_the_creates(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    assert run_cli("state", "rm", "Survey/tracker").exit_code == 0
    assert (project / ".surveyctl" / "state" / "local.json").is_file()
    manifests.write(tracker(unique + "-2"))
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    _with_postgres_state(project, sandbox, postgres.fresh_schema())
    result = run_cli("plan")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 to add" in result.stdout


def _unreadable_state_file(project: Path) -> None:
    (project / ".surveyctl" / "state").mkdir(parents=True)
    (project / ".surveyctl" / "state" / "local.json").write_text("{not json")


@file_only
@pytest.mark.parametrize(
    ("spoil", "held"),
    [
        (_unreadable_state_file, "a file that cannot be read"),
        # counted whole: two names of one survey are two resources
        (lambda project: _one_survey_under_two_names(project), "serial 2, 2 resource(s)"),
    ],
    ids=["unreadable", "a-survey-under-two-names"],
)
def test_a_state_file_that_holds_something_keeps_postgres_from_planning(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique, spoil, held
):
    spoil(project)
    manifests.write(tracker(unique))
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    _with_postgres_state(project, sandbox, postgres.fresh_schema())
    result = run_cli("plan")
    assert result.exit_code == 1
    assert f".surveyctl/state/local.json holds its state ({held})" in result.stderr


@file_only
def test_a_postgres_state_holding_only_an_unresolved_create_keeps_the_file_from_planning(
    run_cli, manifests, project, sandbox, postgres, monkeypatch, unique
):
    # An apply on PostgreSQL journaled its create and stopped before the answer: the create
    # may exist on the service, and a plan from an empty file would make it a second time.
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    environment = f"e{unique}"
    config = project / "surveyctl.yaml"
    config.write_text(
        f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
        f"SURVEYCTL_LOCAL_KEY, state: {{backend: postgres, dsn_env: {DSN_VARIABLE}}}}}\n"
        f"default_environment: {environment}\nmanifests: [manifests]\n",
        encoding="utf-8",
    )
    loaded = load_config(config)
    store = open_state(loaded, loaded.environment(environment))
    try:
        with store.locked("apply"):
            store.journal_create("Survey/tracker", tracker(unique)["spec"])
    finally:
        store.close()
    config.write_text(
        f"environments:\n  {environment}: {{host: '{sandbox.url}', api_key_env: "
        f"SURVEYCTL_LOCAL_KEY}}\ndefault_environment: {environment}\nmanifests: [manifests]\n",
        encoding="utf-8",
    )
    manifests.write(tracker(unique))
    result = run_cli("plan")
    assert result.exit_code == 1
    assert "will be created" not in result.stdout
    assert (
        f"PostgreSQL (${DSN_VARIABLE}, schema surveyctl) holds its state (serial 1, 0 "
        "resource(s))" in result.stderr
    )


@file_only
def test_state_rebuild_refuses_a_state_that_records_a_survey_under_two_names(
    run_cli, manifests, project, unique
):
    _one_survey_under_two_names(project)
    manifests.write(tracker(unique))
    result = run_cli("state", "rebuild", "--yes")
    assert result.exit_code == 1
    assert "Survey/alpha and Survey/bravo both record ps_survey_id 4711" in result.stderr
    assert "`surveyctl state rm Survey/bravo`" in result.stderr


@file_only
def test_ci_refusal_of_an_empty_local_state_says_where_to_keep_the_state(
    run_cli, manifests, project, sandbox, monkeypatch, unique
):
    _protected(project, sandbox)
    monkeypatch.setenv("CI", "true")
    manifests.write(tracker(unique))
    result = run_cli("--env", "local", "apply", "--auto-approve")
    assert result.exit_code == 1
    assert (
        ".surveyctl/state/local.json) that holds nothing, as in every fresh checkout, so this "
        "apply would create 1 resource(s) from no record of what exists; keep the state in "
        "PostgreSQL (`state: {backend: postgres, dsn_env: SURVEYCTL_STATE_DSN}`), or pass "
        "--allow-local-state if the state really starts here"
    ) in " ".join(result.stderr.split())


@file_only
def test_ci_applies_from_an_empty_local_state_of_an_environment_that_is_not_protected(
    run_cli, manifests, monkeypatch, api, unique
):
    monkeypatch.setenv("CI", "true")
    manifests.write(tracker(unique))
    applied(run_cli)
    assert len(ids_titled(api, f"Tracker {unique}")) == 1


@file_only
def test_a_protected_environment_applies_from_an_empty_local_state_outside_ci(
    run_cli, manifests, project, sandbox, api, unique
):
    _protected(project, sandbox)
    manifests.write(tracker(unique))
    result = run_cli("--env", "local", "apply", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(ids_titled(api, f"Tracker {unique}")) == 1


@file_only
def test_ci_applies_to_a_protected_environment_whose_local_state_holds_something(
    run_cli, manifests, project, sandbox, monkeypatch, api, unique
):
    # A runner that keeps its checkout: the state file is there, and the apply adds to it.
    _protected(project, sandbox)
    monkeypatch.setenv("CI", "true")
    manifests.write(tracker(unique))
    first = run_cli("--env", "local", "apply", "--auto-approve", "--allow-local-state")
    assert first.exit_code == 0, first.stdout + first.stderr
    manifests.write(tracker(unique + "-2", name="second"))
    second = run_cli("--env", "local", "apply", "--auto-approve")
    assert second.exit_code == 0, second.stdout + second.stderr
    assert len(ids_titled(api, f"Tracker {unique}-2")) == 1


@file_only
def test_the_empty_state_warning_names_state_rebuild(run_cli, manifests, unique):
    manifests.write(tracker(unique))
    plan = run_cli("plan")
    assert plan.exit_code == 0
    assert (
        "is empty, so the plan creates 1 resource(s); if these manifests were applied before, "
        "their state is kept elsewhere: `surveyctl state rebuild` records what exists on the "
        "service"
    ) in " ".join(plan.stderr.split())


@file_only
def test_a_plan_on_the_embedded_sandbox_carries_no_empty_state_warning(run_cli, manifests, unique):
    manifests.write(tracker(unique))
    plan = run_cli("--env", "sandbox", "plan")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert "1 to add" in plan.stdout
    assert "is empty, so the plan creates" not in plan.stderr


# -- adoption (--adopt): each manifest with one twin is adopted, whatever comes before it.


def adopted_note(name: str, survey_id: int) -> str:
    return (
        f"  note: Survey/{name}: exists on the service as survey {survey_id} (same title and "
        "locale) and is adopted (--adopt): apply records it in the state before its writes"
    )


@file_only
def test_adopt_takes_the_one_twin_of_a_manifest_beside_one_with_several(
    run_cli, manifests, lost, api, unique
):
    manifests.write(tracker(unique, "alpha", survey_title=f"alpha {unique}"))
    applied(run_cli)
    lost()
    applied(run_cli, "--allow-duplicate")  # alpha twice on the service
    manifests.write(tracker(unique, "bravo", survey_title=f"bravo {unique}"))
    applied(run_cli)
    (bravo,) = ids_titled(api, f"bravo {unique}")
    lost()
    plan = run_cli("plan", "--adopt")
    assert "Survey/alpha: exists on the service more than once" in plan.stdout
    assert adopted_note("bravo", bravo) in plan.stdout.splitlines()


@file_only
def test_adopt_takes_the_one_twin_of_a_manifest_beside_a_renamed_one(
    run_cli, manifests, api, unique
):
    manifests.write(tracker(unique, "old", survey_title=f"alpha {unique}"))
    manifests.write(tracker(unique, "bravo", survey_title=f"bravo {unique}"))
    applied(run_cli)
    (bravo,) = ids_titled(api, f"bravo {unique}")
    assert run_cli("state", "rm", "Survey/bravo").exit_code == 0
    manifests.remove("old")
    manifests.write(tracker(unique, "alpha", survey_title=f"alpha {unique}"))  # renamed
    plan = run_cli("plan", "--adopt")
    assert "which the state manages as Survey/old" in plan.stdout
    assert adopted_note("bravo", bravo) in plan.stdout.splitlines()


@file_only
def test_an_adoption_that_cannot_read_its_survey_names_the_survey_it_could_not_read(
    run_cli, manifests, lost, api, project, sandbox, unique
):
    manifests.write(tracker(unique, "alpha", survey_title=f"alpha {unique}"))
    applied(run_cli)
    (alpha,) = ids_titled(api, f"alpha {unique}")
    listed = shown(api, alpha)
    lost()
    proxy = RefusingProxy(sandbox.url)
    proxy.unreadable = {alpha}
    try:
        configure(project, proxy.url, "")
        plan = run_cli("plan", "--adopt")
    finally:
        proxy.stop()
    assert (
        "  warning: Survey/alpha: cannot check whether it exists on the service already "
        f"(reading {listed}: "
    ) in plan.stdout


@file_only
def test_the_identity_check_counts_the_read_of_each_survey_it_adopts(
    run_cli, manifests, lost, api, project, unique
):
    manifests.write(tracker(unique))
    applied(run_cli)
    lost()
    desired = load_desired([project / "manifests"])
    looked = find_twins(api, desired, State.empty(), Rule("local"))
    adopting = find_twins(api, desired, State.empty(), Rule("local"), adopt=True)
    assert list(adopting.adopted) == ["Survey/tracker"]
    assert adopting.requests == looked.requests + 1


@file_only
def test_a_targeted_plan_looks_on_the_service_for_its_own_creates_only(
    run_cli, manifests, lost, unique
):
    manifests.write(tracker(unique, "alpha", survey_title=f"alpha {unique}"))
    applied(run_cli)
    lost()  # alpha's survey is on the service, and no longer in state
    manifests.write(tracker(unique, "bravo", survey_title=f"bravo {unique}"))
    plan = run_cli("plan", "--target", "Survey/bravo")
    assert plan.exit_code == 0, plan.stdout + plan.stderr
    assert "+ Survey/bravo will be created" in plan.stdout
    assert "Survey/alpha" not in plan.stdout


@file_only
def test_a_renamed_program_names_the_one_state_mv_that_moves_all_its_members(
    run_cli, manifests, api, unique
):
    template = {k: v for k, v in tracker(unique)["spec"].items() if k != "survey_localization"}
    spec = {"template": template, "markets": {"en_US": None}, "waves": ["w1"]}
    manifests.write({"kind": "SurveyProgram", "name": "trackers", "spec": spec})
    applied(run_cli)
    manifests.remove("trackers")
    manifests.write({"kind": "SurveyProgram", "name": "panels", "spec": spec})
    plan = run_cli("plan")
    assert plan.exit_code == 1
    assert "will be created" not in plan.stdout
    assert "run `surveyctl state mv --program trackers panels` and plan again" in plan.stdout


@file_only
def test_adopting_twins_reads_them_side_by_side(run_cli, manifests, lost, api, project, unique):
    for name in ("alpha", "bravo", "charlie"):
        manifests.write(tracker(unique, name, survey_title=f"{name} {unique}"))
    applied(run_cli)
    lost()
    client = OverlappingReads(api)

    found = find_twins(
        client, load_desired([project / "manifests"]), State.empty(), Rule("local"), adopt=True
    )

    assert len(found.adopted) == 3
    assert client.most > 1


@file_only
def test_the_groups_a_plan_would_create_are_looked_for_side_by_side(
    manifests, api, project, unique
):
    manifests.write(tracker(unique))
    for index in range(3):
        manifests.write(group_manifest(f"g{index}-{unique}", "tracker", name=f"group-{index}"))
    client = OverlappingReads(api, "get_group")

    found = find_twins(client, load_desired([project / "manifests"]), State.empty(), Rule("local"))

    assert found.twins == {} and found.unchecked == {}
    assert client.most > 1
