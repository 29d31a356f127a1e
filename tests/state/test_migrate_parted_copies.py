"""Two copies of one state after `state migrate`: the source left behind refuses plan and apply,
and a copy that went on by itself is never overwritten by the other, whichever serial is
higher. Real applies against the sandbox, the state in the file and in a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.state import FileStateStore, open_state, state_file
from surveyctl.state.postgres import PostgresSettings

from ..reconcile.conftest import Manifests, survey_manifest
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
    # The team applies in PostgreSQL...
    for price in (2.6, 2.7, 2.8, 2.9):
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
