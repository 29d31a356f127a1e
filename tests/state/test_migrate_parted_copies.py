"""Two copies of one state after `state migrate`: the source left behind refuses plan and apply,
and every command that writes the state (import, refresh), and a copy that went on by itself
is never overwritten by the other, whichever serial is higher. Nor does a write start a second
state in a backend that holds nothing while the other holds the environment's state. Real
applies against the sandbox, the state in the file and in a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.reconcile.normalise import update_body
from surveyctl.state import FileStateStore, open_state, state_file
from surveyctl.state.postgres import PostgresSettings

from ..reconcile.conftest import Manifests, survey_manifest, survey_title
from .conftest import DSN_VARIABLE


@pytest.fixture
def schema(postgres, monkeypatch) -> str:
    monkeypatch.setenv(DSN_VARIABLE, postgres.dsn())
    return postgres.fresh_schema()


@pytest.fixture
def manifests(project: Path) -> Manifests:
    return Manifests(project)


def use(project: Path, sandbox, backend: str, schema: str) -> None:
    """Points the `local` environment's state at `backend` (no `state:` setting for the file)."""
    state = (
        f", state: {{backend: postgres, dsn_env: {DSN_VARIABLE}, schema: {schema}}}"
        if backend == "postgres"
        else ""
    )
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  local: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY{state}}}\n"
        "default_environment: local\nmanifests: [manifests]\n",
        encoding="utf-8",
    )


def applied(run_cli) -> None:
    result = run_cli("apply", "--auto-approve")
    assert result.exit_code == 0, result.stdout + result.stderr


def file_state(project: Path):
    return FileStateStore(state_file(project / ".surveyctl" / "state", "local"), "local").load()


def pg_state(project: Path, schema: str):
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"), PostgresSettings(DSN_VARIABLE, schema))
    try:
        return store.load()
    finally:
        store.close()


def mark(project: Path) -> Path:
    return project / ".surveyctl" / "state" / "local.moved.json"


@pytest.fixture
def moved_to_postgres(project, sandbox, schema, manifests, run_cli):
    """Survey/tracker applied with the file state, which was then copied into PostgreSQL."""
    use(project, sandbox, "file", schema)
    manifests.write(survey_manifest("tracker"))
    applied(run_cli)
    use(project, sandbox, "postgres", schema)
    assert run_cli("state", "migrate", "--from", "file").exit_code == 0


def test_plan_and_apply_refuse_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, manifests, run_cli, postgres
):
    use(project, sandbox, "file", schema)  # the `state:` setting removed again
    manifests.write(survey_manifest("second"))
    for command in (("plan",), ("apply", "--auto-approve")):
        result = run_cli(*command)
        assert result.exit_code == 1
        assert "will be created" not in result.stdout and "Traceback" not in result.stderr
        message = result.stderr
        assert ".surveyctl/state/local.json was copied to PostgreSQL" in message
        assert f"(schema {schema})" in message and postgres.password not in message
        assert (
            f"`surveyctl state migrate --from postgres --dsn-env {DSN_VARIABLE} --schema "
            f"{schema} --env local`" in message
        )
    assert list(file_state(project).resources) == ["Survey/tracker"]


def test_copying_the_state_back_into_the_file_lets_plan_use_it_again(
    moved_to_postgres, project, sandbox, schema, run_cli
):
    use(project, sandbox, "file", schema)
    assert run_cli("plan").exit_code == 1  # marked as moved
    copied = run_cli("state", "migrate", "--from", "postgres", "--schema", schema)
    assert copied.exit_code == 0, copied.stderr
    assert not mark(project).exists()
    result = run_cli("plan", "--detailed-exitcode")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "No changes." in result.stdout


def test_a_file_applied_to_after_the_move_is_not_overwritten_from_postgres(
    moved_to_postgres, project, sandbox, schema, manifests, run_cli
):
    # The team applies in PostgreSQL (one write more than the old file's apply below makes:
    # that apply also records the tracker's price, which it finds already as its manifest asks)...
    for price in (2.6, 2.7, 2.8, 2.9, 3.0):
        manifests.write(survey_manifest("tracker", offer_price=price))
        applied(run_cli)
    # ...while someone removes the `state:` setting and the mark, and applies to the old file.
    use(project, sandbox, "file", schema)
    mark(project).unlink()
    manifests.write(survey_manifest("file-only"))
    applied(run_cli)
    before, ahead = file_state(project), pg_state(project, schema)
    assert before.serial < ahead.serial  # serials alone would let PostgreSQL's copy win
    result = run_cli("state", "migrate", "--from", "postgres", "--schema", schema)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert (
        f".surveyctl/state/local.json (serial {before.serial}) holds changes that PostgreSQL"
        in result.stderr
    )
    assert f"(schema {schema}) (serial {ahead.serial}) does not have" in result.stderr
    after = file_state(project)
    assert after.to_json() == before.to_json()
    history = json.loads(run_cli("state", "history", "Survey/file-only", "--format", "json").stdout)
    assert [entry["change"] for entry in history] == ["create started", "create recorded"]


def test_postgres_applied_to_after_the_move_to_the_file_is_not_overwritten_from_the_file(
    project, sandbox, schema, manifests, run_cli
):
    use(project, sandbox, "postgres", schema)
    manifests.write(survey_manifest("tracker"))
    applied(run_cli)
    use(project, sandbox, "file", schema)
    assert run_cli("state", "migrate", "--from", "postgres", "--schema", schema).exit_code == 0
    # Applies to the file, the state now...
    for name in ("file-one", "file-two"):
        manifests.write(survey_manifest(name))
    applied(run_cli)
    # ...while a teammate still configured for PostgreSQL applies there.
    manifests.remove("file-one")
    manifests.remove("file-two")
    manifests.write(survey_manifest("team-only"))
    use(project, sandbox, "postgres", schema)
    applied(run_cli)
    before, ahead = pg_state(project, schema), file_state(project)
    assert before.serial < ahead.serial  # serials alone would let the file's copy win
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert f"(schema {schema}) (serial {before.serial}) holds changes that" in result.stderr
    assert f".surveyctl/state/local.json (serial {ahead.serial}) does not have" in result.stderr
    assert pg_state(project, schema).to_json() == before.to_json()
    assert "Survey/team-only" in before.resources


def test_a_mark_that_is_not_one_is_one_sentence(
    moved_to_postgres, project, sandbox, schema, run_cli
):
    use(project, sandbox, "file", schema)
    mark(project).write_text("{not json")
    result = run_cli("plan")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "local.moved.json is not the mark `surveyctl state migrate` leaves" in result.stderr


def created_outside(api, name: str) -> int:
    """A survey made on the service without surveyctl, as `import` adopts them."""
    body = {**survey_manifest(name)["spec"], "survey_title": survey_title(name)}
    return api.create_survey(body)["ps_survey_id"]


def test_apply_refresh_only_refuses_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, api, run_cli
):
    use(project, sandbox, "file", schema)
    before = file_state(project)
    survey_id = before.survey("tracker").ps_survey_id
    live = api.get_survey(survey_id)
    api.update_survey(survey_id, {**update_body(live), "offer_price": 4.0})
    result = run_cli("apply", "--refresh-only", "--auto-approve")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert ".surveyctl/state/local.json was copied to PostgreSQL" in result.stderr
    assert file_state(project).to_json() == before.to_json()


def test_import_refuses_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, api, run_cli
):
    use(project, sandbox, "file", schema)
    before = file_state(project)
    survey_id = created_outside(api, "outside")
    out = project / "manifests" / "outside.yaml"
    result = run_cli("import", str(survey_id), "--name", "outside", "--out", str(out), "--yes")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert ".surveyctl/state/local.json was copied to PostgreSQL" in result.stderr
    assert not out.exists()
    assert file_state(project).to_json() == before.to_json()


def test_import_does_not_start_a_second_state_in_an_empty_postgres_beside_the_file(
    project, sandbox, schema, manifests, api, run_cli
):
    use(project, sandbox, "file", schema)
    manifests.write(survey_manifest("tracker"))
    applied(run_cli)
    use(project, sandbox, "postgres", schema)  # configured, never migrated: it holds nothing
    survey_id = created_outside(api, "outside")
    out = project / "manifests" / "outside.yaml"
    result = run_cli("import", str(survey_id), "--name", "outside", "--out", str(out), "--yes")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "`surveyctl state migrate --from file --env local`" in result.stderr
    assert not out.exists()
    assert not pg_state(project, schema).resources


def test_import_all_unmanaged_refuses_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, api, run_cli
):
    use(project, sandbox, "file", schema)
    before = file_state(project)
    created_outside(api, "outside")
    result = run_cli("import", "--all-unmanaged", "--out-dir", "manifests/adopted", "--yes")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert ".surveyctl/state/local.json was copied to PostgreSQL" in result.stderr
    assert file_state(project).to_json() == before.to_json()
    assert not any(Path(project, "manifests", "adopted").glob("*.yaml"))


def test_state_rebuild_mv_and_rm_refuse_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, api, run_cli
):
    use(project, sandbox, "file", schema)
    before = file_state(project)
    created_outside(api, "outside")
    for command in (
        ("state", "rebuild", "--yes"),
        ("state", "mv", "tracker", "renamed", "--yes"),
        ("state", "rm", "tracker", "--yes"),
    ):
        result = run_cli(*command)
        assert result.exit_code == 1 and "Traceback" not in result.stderr, command
        assert ".surveyctl/state/local.json was copied to PostgreSQL" in result.stderr, command
    assert file_state(project).to_json() == before.to_json()


def test_import_of_a_program_refuses_the_file_a_migrate_copied_to_postgres(
    moved_to_postgres, project, sandbox, schema, manifests, run_cli
):
    use(project, sandbox, "file", schema)
    before = file_state(project)
    template = {k: v for k, v in survey_manifest("x")["spec"].items() if k != "survey_localization"}
    template["survey_title"] = survey_title("wave {wave}")
    manifests.write(
        {
            "kind": "SurveyProgram",
            "name": "waves",
            "spec": {"template": template, "markets": {"en_US": None}, "waves": ["w1"]},
        }
    )
    result = run_cli("import", "--program", "waves", "--manifests", "manifests", "--yes")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert ".surveyctl/state/local.json was copied to PostgreSQL" in result.stderr
    assert file_state(project).to_json() == before.to_json()


def test_the_refusal_of_a_copied_file_names_its_environment_and_the_mark_that_keeps_it(
    moved_to_postgres, project, sandbox, schema, run_cli
):
    use(project, sandbox, "file", schema)
    result = run_cli("plan")
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert "the state of environment 'local' in " in message
    assert f"or remove {mark(project)} if this copy is the one to keep" in message
