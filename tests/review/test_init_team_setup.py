"""What `surveyctl init` writes works as written: surveyctl.yaml and the CI workflows agree on
the environment, its key and its PostgreSQL state, every workflow passes actionlint, a missing
secret stops a workflow with one sentence, and the example manifest names its JSON Schema."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import yaml

from surveyctl.config import load_config

from .test_ci_examples import surveyctl_steps

REPOSITORY = Path(__file__).resolve().parents[2]
ACTIONLINT = Path(sys.executable).parent / "actionlint"  # from the test extra's wheel


@pytest.fixture
def fresh(run_cli, project) -> Path:
    result = run_cli("init", "fresh")
    assert result.exit_code == 0, result.stderr
    fresh = project / "fresh"
    fresh.joinpath("next.txt").write_text(result.stderr)
    return fresh


def _workflows(folder: Path) -> dict[str, dict]:
    return {
        path.name: yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted((folder / ".github" / "workflows").glob("*.yml"))
    }


def _secret_names(value: str) -> set[str]:
    return set(re.findall(r"secrets\.([A-Z_]+)", value))


def test_init_configures_production_with_its_state_in_postgresql(fresh):
    production = load_config(fresh / "surveyctl.yaml").environment("production")
    assert production.state.backend == "postgres"
    assert production.state.dsn_env == "SURVEYCTL_STATE_DSN"
    assert production.protected


def test_every_surveyctl_step_of_the_workflows_gets_the_variables_surveyctl_yaml_names(fresh):
    config = load_config(fresh / "surveyctl.yaml")
    checked = 0
    for name, workflow in _workflows(fresh).items():
        for step, args in surveyctl_steps(workflow):
            if args[0] == "show":  # reads only the saved plan: no environment, key or state
                continue
            environment = config.environment(args[args.index("--env") + 1])
            given = step.get("env") or {}
            assert environment.state.dsn_env in given, (name, args)
            assert _secret_names(str(given[environment.state.dsn_env])), (name, args)
            if args[2] in ("plan", "apply"):  # the commands that reach the marketplace
                assert environment.api_key_env in given, (name, args)
                assert _secret_names(str(given[environment.api_key_env])), (name, args)
            checked += 1
    assert checked >= 3


def test_the_next_hint_names_the_secrets_the_workflows_check(fresh):
    hint = fresh.joinpath("next.txt").read_text()
    for name, workflow in _workflows(fresh).items():
        check = workflow["jobs"][next(iter(workflow["jobs"]))]["steps"][0]
        required = _secret_names(str(check["env"])) - {"SURVEYCTL_STATE_DSN_READONLY"}
        assert required == {"SURVEYCTL_PRODUCTION_KEY", "SURVEYCTL_STATE_DSN"}, name
        for secret in required:
            assert secret in hint, (name, secret)


@pytest.mark.parametrize("missing", ["HAS_PRODUCTION_KEY", "HAS_STATE_DSN"])
def test_a_workflow_stops_with_one_sentence_when_a_secret_is_missing(fresh, missing):
    for name, workflow in _workflows(fresh).items():
        check = workflow["jobs"][next(iter(workflow["jobs"]))]["steps"][0]
        env = {
            "PATH": os.environ["PATH"],
            "SURVEYCTL_REPOSITORY": "owner/surveyctl",
            "SURVEYCTL_REF": "v1",
            "HAS_PRODUCTION_KEY": "true",
            "HAS_STATE_DSN": "true",
        }
        assert subprocess.run(["bash", "-e", "-c", check["run"]], env=env).returncode == 0
        env[missing] = "false"
        run = subprocess.run(
            ["bash", "-e", "-c", check["run"]], env=env, capture_output=True, text=True
        )
        secret = {"HAS_PRODUCTION_KEY": "PRODUCTION_KEY", "HAS_STATE_DSN": "STATE_DSN"}[missing]
        assert run.returncode == 1, name
        assert run.stdout == (
            f"::error::surveyctl cannot run: set the repository's secret SURVEYCTL_{secret} "
            "(see surveyctl.yaml)\n"
        ), name


def test_actionlint_passes_every_workflow_shipped_or_scaffolded(fresh):
    shipped = sorted((REPOSITORY / "examples" / "ci").glob("*.yml"))
    scaffolded = sorted((fresh / ".github" / "workflows").glob("*.yml"))
    assert len(shipped) == len(scaffolded) == 2
    run = subprocess.run(
        [str(ACTIONLINT), "-no-color", *map(str, shipped + scaffolded)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_example_manifest_names_the_json_schema_init_writes_and_is_formatted(fresh, run_cli):
    example = fresh / "surveys" / "example-tracker.yaml"
    hint = example.read_text().splitlines()[0]
    assert hint == "# yaml-language-server: $schema=../schemas/manifest.schema.json"
    schema = (example.parent / hint.split("$schema=")[1]).resolve()
    assert schema.read_text() == (REPOSITORY / "schemas" / "manifest.schema.json").read_text()
    checked = run_cli("fmt", "--check", str(example))
    assert checked.exit_code == 0, checked.stdout


def test_init_keeps_the_state_in_a_schema_named_after_the_project_folder(run_cli, project):
    assert run_cli("init", "Brand-Trackers").exit_code == 0
    config = load_config(project / "Brand-Trackers" / "surveyctl.yaml")
    assert config.environment("production").state.schema == "brand_trackers"


def test_the_next_hint_names_the_schema_the_database_user_needs_rights_on(run_cli, project):
    result = run_cli("init", "Brand-Trackers")
    assert "the state, which surveyctl keeps in schema brand_trackers)" in result.stderr


def test_the_next_hint_of_init_into_another_folder_says_to_cd_into_it_first(run_cli, project):
    result = run_cli("init", "brands/trackers")
    assert result.exit_code == 0, result.stderr
    assert "Next: `cd brands/trackers`, then `surveyctl validate` and `surveyctl plan`" in (
        result.stderr
    )


def test_the_next_hint_of_init_into_the_current_folder_has_no_cd(run_cli, project, monkeypatch):
    (project / "empty").mkdir()
    monkeypatch.chdir(project / "empty")
    result = run_cli("init")
    assert result.exit_code == 0, result.stderr
    assert "Next: `surveyctl validate` and `surveyctl plan`" in result.stderr


def test_the_next_hint_of_init_outside_a_repository_says_to_git_init_it(run_cli, project):
    result = run_cli("init", "trackers")
    assert result.stderr.rstrip().endswith(
        "trackers is in no git repository: run `git init` there, as surveyctl finds "
        "surveyctl.yaml from a sub-folder (surveys/) only inside one, and the workflows run "
        "only from one."
    )


def test_the_next_hint_of_init_inside_a_repository_says_nothing_of_git_init(run_cli, project):
    (project / ".git").mkdir()
    result = run_cli("init", "trackers")
    assert "git init" not in result.stderr


@pytest.mark.parametrize(
    ("folder", "schema"),
    [
        ("2026", "surveys_2026"),
        ("__", "surveys"),
        ("Études & co", "etudes_co"),
        ("Straße", "strasse"),
        ("tracker-" + "x" * 80, "tracker_" + "x" * 55),
    ],
)
def test_a_folder_name_that_is_no_postgresql_name_still_gives_the_state_a_schema(
    run_cli, project, folder, schema
):
    assert run_cli("init", folder).exit_code == 0
    config = load_config(project / folder / "surveyctl.yaml")  # a name the backend takes
    assert config.environment("production").state.schema == schema


@pytest.mark.parametrize(
    ("folder", "schema"),
    [
        ("pg_temp", "surveys_pg_temp"),
        ("pg-catalog", "surveys_pg_catalog"),
        ("information_schema", "surveys_information_schema"),
        ("Public", "surveys_public"),
        ("surveyctl", "surveys_surveyctl"),
    ],
)
def test_a_folder_named_like_a_schema_postgresql_keeps_or_projects_share_gets_one_of_its_own(
    run_cli, project, folder, schema
):
    result = run_cli("init", folder)
    assert result.exit_code == 0, result.stderr
    config = load_config(project / folder / "surveyctl.yaml")  # a name the backend takes
    assert config.environment("production").state.schema == schema
    assert f"which surveyctl keeps in schema {schema})" in result.stderr


def test_two_folders_named_in_letters_without_an_ascii_form_get_two_schemas(run_cli, project):
    schemas = []
    for folder in ("Ёлки", "Палки"):
        assert run_cli("init", folder).exit_code == 0
        config = load_config(project / folder / "surveyctl.yaml")
        schemas.append(config.environment("production").state.schema)
    assert schemas[0] != schemas[1]
    assert all(re.fullmatch(r"surveys_[0-9a-f]{8}", schema) for schema in schemas)


def test_the_schema_init_writes_for_pg_temp_holds_the_state(
    run_cli, project, postgres, monkeypatch
):
    # PostgreSQL's own pg_temp would drop what a command wrote when its session ends.
    from surveyctl.state import SurveyRecord, open_state

    assert run_cli("init", "pg_temp").exit_code == 0
    monkeypatch.chdir(project / "pg_temp")
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn())
    config = load_config(project / "pg_temp" / "surveyctl.yaml")
    store = open_state(config, config.environment("production"))
    store.record("Survey/kept", SurveyRecord(10001))
    store.close()
    listed = run_cli("--env", "production", "state", "list")
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.splitlines() == ["Survey/kept  ps_survey_id=10001 quotas=0"]


def test_two_projects_initialised_on_one_database_keep_two_states(
    run_cli, project, sandbox, postgres, monkeypatch, unique
):
    # Both scaffolds name their survey example-tracker: with one state, the second project's
    # plan would take the first project's survey for its own.
    projects = [project / f"team-{side}-{unique}" for side in ("a", "b")]
    for folder in projects:
        assert run_cli("init", folder.name).exit_code == 0
        config = folder / "surveyctl.yaml"
        config.write_text(config.read_text().replace("https://api.example.com", sandbox.url))
    monkeypatch.setenv("SURVEYCTL_PRODUCTION_KEY", "sandbox-buyer-1")
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn())

    monkeypatch.chdir(projects[0])
    applied = run_cli("--env", "production", "apply", "--auto-approve")
    monkeypatch.chdir(projects[1])
    planned = run_cli("--env", "production", "plan")

    assert applied.exit_code == 0, applied.stdout + applied.stderr
    assert "Resources: 1 added" in applied.stdout
    assert "No changes" not in planned.stdout
    assert "Survey/example-tracker: exists on the service as survey" in planned.stdout
    assert "but is not in state" in planned.stdout


def _production_of_the_sandbox(run_cli, project, sandbox, name: str) -> Path:
    """A project made by `init` whose production is the test's sandbox."""
    assert run_cli("init", name).exit_code == 0
    config = project / name / "surveyctl.yaml"
    config.write_text(config.read_text().replace("https://api.example.com", sandbox.url))
    return project / name


def _plan_step(folder: Path) -> list[str]:
    """The arguments of the `surveyctl plan` the pull-request workflow runs."""
    workflow = _workflows(folder)["plan-on-pull-request.yml"]
    return next(args for _, args in surveyctl_steps(workflow) if "plan" in args)


def test_a_read_only_role_plans_a_pull_request_once_the_state_tables_exist(
    run_cli, project, sandbox, postgres, monkeypatch, unique
):
    folder = _production_of_the_sandbox(run_cli, project, sandbox, f"team-{unique}")
    schema = load_config(folder / "surveyctl.yaml").environment("production").state.schema
    monkeypatch.chdir(folder)
    monkeypatch.setenv("SURVEYCTL_PRODUCTION_KEY", "sandbox-buyer-1")
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", postgres.dsn())
    assert run_cli("--env", "production", "state", "list").exit_code == 0  # makes the tables
    with psycopg.connect(postgres.dsn(), autocommit=True) as owner:
        owner.execute(f"GRANT USAGE ON SCHEMA {schema} TO reader")
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO reader")
    reader = postgres.dsn(user="reader", password=postgres.reader_password)
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", reader)

    planned = run_cli(*_plan_step(folder))

    assert planned.exit_code == 2, planned.stdout + planned.stderr
    assert "| `Survey/example-tracker` | create |" in planned.stdout
    saved = _plan_step(folder)[_plan_step(folder).index("--out") + 1]
    assert (folder / saved).is_file()


def test_a_read_only_role_cannot_plan_before_the_state_tables_exist(
    run_cli, project, sandbox, postgres, monkeypatch, unique
):
    folder = _production_of_the_sandbox(run_cli, project, sandbox, f"new-{unique}")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("SURVEYCTL_PRODUCTION_KEY", "sandbox-buyer-1")
    reader = postgres.dsn(user="reader", password=postgres.reader_password)
    monkeypatch.setenv("SURVEYCTL_STATE_DSN", reader)

    planned = run_cli(*_plan_step(folder))

    assert planned.exit_code == 1
    assert "failed" in planned.stdout.splitlines()[0]
    assert "the database user reader lacks the rights to create the state tables" in (
        planned.stdout
    )


def test_init_of_a_folder_inside_a_repository_warns_that_its_workflows_do_not_run(
    run_cli, tmp_path, monkeypatch
):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    inside = run_cli("init", "surveys-team")
    assert inside.exit_code == 0, inside.stderr
    assert (
        f"surveyctl: warning: surveys-team is inside the git repository at {tmp_path}, whose "
        "workflows GitHub reads from its own .github/workflows/ only"
    ) in " ".join(inside.stderr.split())
    subprocess.run(["git", "init", "-q", str(tmp_path / "own-repository")], check=True)
    at_root = run_cli("init", "own-repository")  # the root of a repository of its own
    assert at_root.exit_code == 0, at_root.stderr
    assert "warning" not in at_root.stderr


def test_init_into_a_loop_of_symbolic_links_is_one_sentence_writing_nothing(run_cli, project):
    (project / "one").symlink_to("two")
    (project / "two").symlink_to("one")
    result = run_cli("init", "one")
    assert result.exit_code == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: cannot write into one: it is a symbolic link that leads back to itself (a loop "
        "of links)"
    )
