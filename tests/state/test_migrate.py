"""`surveyctl state migrate --from file|postgres`: the state, its lineage, serial and history
copied into the backend surveyctl.yaml names, with lineage checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.config import load_config
from surveyctl.state import FileStateStore, GroupRecord, SurveyRecord, open_state, state_file
from surveyctl.state.postgres import PostgresSettings


@pytest.fixture
def project(tmp_path: Path, monkeypatch, postgres) -> Path:
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn())
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def configure(project: Path, backend: str, schema: str) -> None:
    state = (
        f", state: {{backend: postgres, dsn_env: SURVEYCTL_STATE_DSN, schema: {schema}}}"
        if backend == "postgres"
        else ""
    )
    (project / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  staging: {{host: 'https://staging.invalid', api_key_env: STAGING_KEY{state}}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )


def file_store(project: Path) -> FileStateStore:
    return FileStateStore(state_file(project / ".surveyctl" / "state", "staging"), "staging")


def pg_store(project: Path, schema: str):
    config = load_config(project / "surveyctl.yaml")
    settings = PostgresSettings("SURVEYCTL_STATE_DSN", schema)
    return open_state(config, config.environment("staging"), settings)


def seed(store) -> None:
    store.record("Survey/tracker", SurveyRecord(4711, {"male": "q-1"}, {"survey_title": "T"}))
    store.record("ExclusionGroup/trackers", GroupRecord("ref-1", [4711], {"name": "G"}))
    store.journal_create("Survey/in-flight", {"survey_title": "F"})
    store.flush()


def file_seeded_for_postgres(project: Path, postgres) -> str:
    """A seeded file state, with surveyctl.yaml now naming a fresh PostgreSQL schema for it:
    the schema, still empty."""
    schema = postgres.fresh_schema()
    configure(project, "file", schema)
    seed(file_store(project))
    configure(project, "postgres", schema)
    return schema


def migrated_to_postgres(run_cli, project: Path, postgres) -> str:
    """The file state of `file_seeded_for_postgres` copied into its schema: the schema."""
    schema = file_seeded_for_postgres(project, postgres)
    copied = run_cli("state", "migrate", "--from", "file")
    assert copied.exit_code == 0, copied.stderr
    return schema


def test_a_file_state_moves_into_postgres_with_lineage_serial_and_history(
    run_cli, project, postgres
):
    schema = postgres.fresh_schema()
    configure(project, "file", schema)
    seed(file_store(project))
    before = file_store(project).path.read_text()
    configure(project, "postgres", schema)
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 0, result.stderr
    assert "serial 3, 2 resource(s), 1 unresolved create(s), 3 change(s) of history" in (
        result.stdout
    )
    assert postgres.password not in result.stdout + result.stderr
    moved, original = pg_store(project, schema).load(), file_store(project).load()
    assert moved.to_json() == original.to_json()
    history = json.loads(run_cli("state", "history", "--format", "json").stdout)
    assert [(e["serial"], e["address"]) for e in history] == [
        (1, "Survey/tracker"),
        (2, "ExclusionGroup/trackers"),
        (3, "Survey/in-flight"),
    ]
    assert file_store(project).path.read_text() == before  # the source is left as it was


def test_a_postgres_state_moves_back_into_a_file(run_cli, project, postgres):
    schema = postgres.fresh_schema()
    configure(project, "postgres", schema)
    seed(pg_store(project, schema))
    configure(project, "file", schema)
    result = run_cli(
        "state",
        "migrate",
        "--from",
        "postgres",
        "--schema",
        schema,
        "--dsn-env",
        "SURVEYCTL_STATE_DSN",
    )
    assert result.exit_code == 0, result.stderr
    on_disk = json.loads(file_store(project).path.read_text())
    assert on_disk == pg_store(project, schema).load().to_json()
    shown = json.loads(run_cli("state", "show", "tracker", "--serial", "1").stdout)
    assert shown["ps_survey_id"] == 4711


def test_an_older_copy_of_the_same_lineage_is_brought_up_to_date(run_cli, project, postgres):
    schema = migrated_to_postgres(run_cli, project, postgres)
    pg_store(project, schema).forget("Survey/in-flight")  # the team goes on in PostgreSQL
    configure(project, "file", schema)
    result = run_cli("state", "migrate", "--from", "postgres", "--schema", schema)
    assert result.exit_code == 0, result.stderr
    state = file_store(project).load()
    assert state.serial == 4 and state.journal == {}


def test_an_older_copy_in_postgres_is_brought_up_to_date_from_the_file(run_cli, project, postgres):
    schema = migrated_to_postgres(run_cli, project, postgres)
    configure(project, "file", schema)  # the team moves back to the file and goes on there
    assert run_cli("state", "migrate", "--from", "postgres", "--schema", schema).exit_code == 0
    file_store(project).forget("Survey/in-flight")
    configure(project, "postgres", schema)
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 0, result.stderr
    state = pg_store(project, schema).load()
    assert state.serial == 4 and state.journal == {}
    assert state.to_json() == file_store(project).load().to_json()
    history = json.loads(run_cli("state", "history", "--format", "json").stdout)
    assert [entry["serial"] for entry in history] == [1, 2, 3, 4]


def test_copying_onto_the_same_state_again_changes_nothing(run_cli, project, postgres):
    migrated_to_postgres(run_cli, project, postgres)
    again = run_cli("state", "migrate", "--from", "file")
    assert again.exit_code == 0 and "already holds this state" in again.stdout


def test_a_target_of_another_lineage_is_refused(run_cli, project, postgres):
    schema = file_seeded_for_postgres(project, postgres)
    pg_store(project, schema).record("Survey/other", SurveyRecord(1))
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1
    assert "already holds another state" in result.stderr and "Traceback" not in result.stderr
    assert sorted(pg_store(project, schema).load().resources) == ["Survey/other"]


def test_the_refusal_of_another_lineage_names_both_places_and_their_serials(
    run_cli, project, postgres
):
    schema = file_seeded_for_postgres(project, postgres)
    pg_store(project, schema).record("Survey/other", SurveyRecord(1))
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    source = file_store(project)
    assert f"(schema {schema}) already holds another state" in message
    assert "serial 1) than " in message
    assert f"{source.path} (lineage {source.load().lineage}, serial 3)" in message


def test_a_target_that_is_ahead_is_refused(run_cli, project, postgres):
    schema = migrated_to_postgres(run_cli, project, postgres)
    pg_store(project, schema).forget("Survey/in-flight")
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "is ahead of" in result.stderr
    assert pg_store(project, schema).load().serial == 4


def test_a_target_ahead_that_went_on_separately_is_refused_as_diverged_not_as_ahead(
    run_cli, project, postgres
):
    schema = migrated_to_postgres(run_cli, project, postgres)
    file_store(project).record("Survey/file-only", SurveyRecord(5))  # the old file goes on...
    team = pg_store(project, schema)  # ...and so does PostgreSQL, one write further
    team.forget("Survey/in-flight")
    team.record("Survey/team-only", SurveyRecord(6))
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert f"(schema {schema}) (serial 5) holds changes that" in message
    assert "staging.json (serial 4) does not have" in message
    assert "is ahead of" not in message and "copy it the other way" not in message
    assert "`surveyctl apply --adopt`" in message
    assert "Survey/team-only" in pg_store(project, schema).load().resources


def test_who_migrated_is_named_on_one_line_in_the_refusal_of_the_old_file(
    run_cli, project, postgres, monkeypatch
):
    schema = file_seeded_for_postgres(project, postgres)
    # A mark written before such a name was refused ($SURVEYCTL_ACTOR).
    monkeypatch.setattr("surveyctl.config.actor_name", lambda: "ann\nError: forged line")
    assert run_cli("state", "migrate", "--from", "file").exit_code == 0
    configure(project, "file", schema)
    result = run_cli("state", "rm", "tracker", "--yes")
    assert result.exit_code == 1 and "was copied to PostgreSQL" in result.stderr
    assert "ann\\u000aError: forged line" in " ".join(result.stderr.split())
    assert not any(line.startswith("Error: forged") for line in result.stderr.splitlines())


def test_migrating_from_the_backend_already_configured_is_refused(run_cli, project, postgres):
    configure(project, "file", postgres.fresh_schema())
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "already keeps its state in " in result.stderr
    assert ".surveyctl/state/staging.json" in result.stderr


def test_migrating_from_the_schema_already_configured_is_refused(run_cli, project, postgres):
    schema = postgres.fresh_schema()
    configure(project, "postgres", schema)
    seed(pg_store(project, schema))
    result = run_cli("state", "migrate", "--from", "postgres", "--schema", schema, "--yes")
    assert result.exit_code == 1
    assert "already keeps its state in PostgreSQL surveyctl@" in result.stderr
    assert pg_store(project, schema).load().serial == 3


def test_migrating_from_the_same_schema_under_another_variable_is_refused_at_once(
    run_cli, project, postgres, monkeypatch
):
    schema = postgres.fresh_schema()
    configure(project, "postgres", schema)
    seed(pg_store(project, schema))
    monkeypatch.setenv("OTHER_DSN", postgres.dsn())
    result = run_cli(
        "state", "migrate", "--from", "postgres", "--dsn-env", "OTHER_DSN", "--schema", schema,
        "--yes", "--lock-timeout", "30",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "already keeps its state in PostgreSQL surveyctl@" in result.stderr
    assert "locked" not in result.stderr
    assert postgres.password not in result.stderr
    assert pg_store(project, schema).load().serial == 3


def test_a_postgres_state_moves_into_a_schema_of_its_own(run_cli, project, postgres):
    # A project made before `init` named a schema: its state in one schema, copied into the
    # schema surveyctl.yaml now names, with lineage, serial and history.
    shared, own = postgres.fresh_schema(), postgres.fresh_schema()
    configure(project, "postgres", own)
    seed(pg_store(project, shared))
    result = run_cli("state", "migrate", "--from", "postgres", "--schema", shared, "--yes")
    assert result.exit_code == 0, result.stderr
    assert f"schema {shared}" in result.stdout and f"schema {own}" in result.stdout
    assert postgres.password not in result.stdout + result.stderr
    moved, original = pg_store(project, own).load(), pg_store(project, shared).load()
    assert moved.to_json() == original.to_json()
    assert moved.serial == 3
    history = json.loads(run_cli("state", "history", "--format", "json").stdout)
    assert [e["serial"] for e in history] == [1, 2, 3]


_NOT_KEY_VALUE = "--setting must be KEY=VALUE, such as --setting schema=ops"
_NOT_A_VARIABLE = (
    "state.dsn_env must name the variable that holds the PostgreSQL connection string "
    "(letters, digits and underscores, such as SURVEYCTL_STATE_DSN), never the string itself"
)


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        (("--setting", "postgresql://ops:Hunter2pw@db.example.com/ops"), _NOT_KEY_VALUE),
        (("--dsn-env", "postgresql://ops:Hunter2pw@db.example.com/ops"), _NOT_A_VARIABLE),
        (("--dsn-env", "host=db.example.com password=Hunter2pw"), _NOT_A_VARIABLE),
    ],
)
def test_a_connection_string_given_as_a_migrate_option_is_never_printed(
    run_cli, project, postgres, given, refusal
):
    configure(project, "file", postgres.fresh_schema())
    result = run_cli("--debug", "state", "migrate", "--from", "postgres", *given)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == f"Error: {refusal}"
    assert "Hunter2pw" not in result.stdout + result.stderr


def test_an_empty_source_is_refused(run_cli, project, postgres):
    configure(project, "postgres", postgres.fresh_schema())
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "there is no state to copy" in result.stderr


def test_a_target_at_the_same_serial_with_other_records_is_refused(run_cli, project, postgres):
    schema = migrated_to_postgres(run_cli, project, postgres)
    pg_store(project, schema).forget("Survey/in-flight")  # serial 4 in PostgreSQL...
    file_store(project).record("Survey/file-only", SurveyRecord(4712))  # ...and in the file
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "(serial 4) holds changes that" in result.stderr
    assert "(serial 4) does not have" in result.stderr
    assert sorted(pg_store(project, schema).load().resources) == [
        "ExclusionGroup/trackers",
        "Survey/tracker",
    ]


def test_a_target_older_than_the_history_of_the_source_is_refused(run_cli, project, postgres):
    schema = postgres.fresh_schema()
    configure(project, "file", schema)
    path = file_store(project).path
    path.parent.mkdir(parents=True)

    def written_without_history(serial: int, resources: dict) -> None:
        # As a surveyctl that kept no history wrote it: the JSON file alone.
        path.write_text(json.dumps({"format_version": 1, "lineage": "l-1", "serial": serial,
                                    "resources": resources, "journal": {}}))  # fmt: skip

    written_without_history(3, {"Survey/tracker": {"ps_survey_id": 4711}})
    configure(project, "postgres", schema)
    assert run_cli("state", "migrate", "--from", "file").exit_code == 0
    written_without_history(5, {"Survey/other": {"ps_survey_id": 4712}})
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "does not reach back to serial 3" in result.stderr
    assert list(pg_store(project, schema).load().resources) == ["Survey/tracker"]


def test_a_file_copied_elsewhere_is_marked_as_moved(run_cli, project, postgres):
    schema = file_seeded_for_postgres(project, postgres)
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 0, result.stderr
    assert "is marked as moved: plan and apply refuse it from now on" in result.stdout
    mark = json.loads((project / ".surveyctl" / "state" / "staging.moved.json").read_text())
    assert mark["serial"] == 3 and f"(schema {schema})" in mark["moved_to"]


def test_migrating_again_marks_a_file_left_unmarked(run_cli, project, postgres):
    migrated_to_postgres(run_cli, project, postgres)
    mark = project / ".surveyctl" / "state" / "staging.moved.json"
    mark.unlink()  # or copied by a surveyctl that left no mark
    again = run_cli("state", "migrate", "--from", "file")
    assert again.exit_code == 0 and "already holds this state" in again.stdout
    assert mark.exists()


def test_a_state_with_one_survey_under_two_names_is_copied_for_state_rm_to_repair(
    run_cli, project, postgres
):
    # `state rm`, which the problem names, works on the backend surveyctl.yaml names: refusing
    # the copy would leave it nothing to repair (and rm refuses an empty target beside a file).
    schema = postgres.fresh_schema()
    configure(project, "file", schema)
    store = file_store(project)
    seed(store)
    store.record("Survey/copy-of-tracker", SurveyRecord(4711))
    store.flush()
    configure(project, "postgres", schema)
    result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 0, result.stderr
    assert "both record ps_survey_id 4711" in result.stderr
    assert "Survey/copy-of-tracker" in pg_store(project, schema).load(verify=False).resources
    repaired = run_cli("state", "rm", "Survey/copy-of-tracker")
    assert repaired.exit_code == 0, repaired.stderr
    assert pg_store(project, schema).load().problems() == []


def _statements_of_a_migration(run_cli, project, postgres, resources: int) -> int:
    """The statements (and batches of statements) `state migrate --from file` sends PostgreSQL
    to copy a state of `resources` surveys, each recorded by a write of its own."""
    import psycopg

    schema = postgres.fresh_schema()
    configure(project, "file", schema)
    for path in (project / ".surveyctl" / "state").glob("*"):
        path.unlink()
    store = file_store(project)
    for index in range(resources):
        store.record(f"Survey/s{index}", SurveyRecord(5000 + index, {}, {"survey_title": "T"}))
    store.flush()
    configure(project, "postgres", schema)
    sent = []
    with pytest.MonkeyPatch.context() as spies:
        for cls, method in ((psycopg.Connection, "execute"), (psycopg.Cursor, "executemany")):
            original = getattr(cls, method)

            def counted(self, *args, _original=original, **kwargs):
                sent.append(1)
                return _original(self, *args, **kwargs)

            spies.setattr(cls, method, counted)
        result = run_cli("state", "migrate", "--from", "file")
    assert result.exit_code == 0, result.stderr
    assert f"{resources} resource(s)" in result.stdout
    return len(sent)


def test_a_migration_sends_as_many_statements_for_many_resources_as_for_few(
    run_cli, project, postgres
):
    few = _statements_of_a_migration(run_cli, project, postgres, 3)

    assert _statements_of_a_migration(run_cli, project, postgres, 30) == few
