"""The `state:` setting of an environment in surveyctl.yaml, and the backend it opens."""

from __future__ import annotations

import re

import pytest

from surveyctl.config import load_config
from surveyctl.errors import ConfigError
from surveyctl.state import FileStateStore, open_state
from surveyctl.state.file import FileSettings
from surveyctl.state.postgres import PostgresSettings
from surveyctl.state.postgres.store import PostgresStateStore


def config_with(tmp_path, state: str):
    (tmp_path / "surveyctl.yaml").write_text(
        "environments:\n"
        f"  production: {{host: 'https://api.example.com', api_key_env: KEY{state}}}\n",
        encoding="utf-8",
    )
    return load_config(tmp_path / "surveyctl.yaml")


def test_without_a_state_setting_the_environment_keeps_a_file(tmp_path):
    config = config_with(tmp_path, "")
    environment = config.environment("production")
    assert environment.state == FileSettings()
    store = open_state(config, environment)
    assert isinstance(store, FileStateStore)
    assert store.path == tmp_path / ".surveyctl" / "state" / "production.json"


def test_a_postgres_state_names_its_variable_and_schema(tmp_path, monkeypatch, postgres):
    config = config_with(
        tmp_path, ", state: {backend: postgres, dsn_env: TEAM_DSN, schema: team_state}"
    )
    environment = config.environment("production")
    assert environment.state == PostgresSettings("TEAM_DSN", "team_state")
    monkeypatch.setenv("TEAM_DSN", postgres.dsn())
    store = open_state(config, environment)
    assert isinstance(store, PostgresStateStore) and store.schema == "team_state"
    assert postgres.password not in store.location


def test_the_schema_defaults_to_surveyctl(tmp_path):
    config = config_with(tmp_path, ", state: {backend: postgres, dsn_env: TEAM_DSN}")
    assert config.environment("production").state.schema == "surveyctl"


def test_an_unset_dsn_variable_is_one_clear_error(tmp_path, monkeypatch):
    config = config_with(tmp_path, ", state: {backend: postgres, dsn_env: TEAM_DSN}")
    monkeypatch.delenv("TEAM_DSN", raising=False)
    with pytest.raises(
        ConfigError,
        match=r"PostgreSQL state of environment 'production' needs .*\$TEAM_DSN, which is not set",
    ):
        open_state(config, config.environment("production"))


def test_an_empty_dsn_variable_is_told_apart_from_an_unset_one(tmp_path, monkeypatch):
    config = config_with(tmp_path, ", state: {backend: postgres, dsn_env: TEAM_DSN}")
    monkeypatch.setenv("TEAM_DSN", "")
    with pytest.raises(ConfigError, match=r"\$TEAM_DSN, which is empty$"):
        open_state(config, config.environment("production"))


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (", state: {backend: mysql}", r"state\.backend must be one of file, postgres"),
        (", state: {backend: postgres}", r"state\.dsn_env is missing: name the variable"),
        (", state: {backend: postgres, dsn_env: X, schema: 'Bad-Name'}", r"state\.schema must be"),
        (', state: {backend: postgres, dsn_env: X, schema: "team\\n"}', r"state\.schema must be"),
        (', state: {backend: postgres, dsn_env: "X\\n"}', r"state\.dsn_env must name the variable"),
        (", state: {backend: file, dsn_env: X}", "dsn_env applies to backend postgres only"),
        (", state: {backend: postgres, dsn: 'host=x'}", "unknown setting 'dsn'"),
        (", state: postgres", "must be a mapping"),
    ],
)
def test_a_wrong_state_setting_names_the_file_and_field(tmp_path, state, message):
    with pytest.raises(ConfigError, match=message) as failed:
        config_with(tmp_path, state)
    assert re.search(r"surveyctl\.yaml:2:\d+: environments\.production\.state", str(failed.value))


@pytest.mark.parametrize("schema", ["pg_temp", "pg_catalog", "information_schema"])
def test_a_schema_postgresql_keeps_for_itself_is_refused_before_connecting(tmp_path, schema):
    with pytest.raises(ConfigError) as failed:
        config_with(
            tmp_path, f", state: {{backend: postgres, dsn_env: UNSET_DSN, schema: {schema}}}"
        )
    message = str(failed.value)
    assert f"environments.production.state.schema names {schema}, which PostgreSQL keeps" in message
    assert "choose a schema of the project's own" in message


def test_the_public_schema_is_still_accepted(tmp_path):
    config = config_with(tmp_path, ", state: {backend: postgres, dsn_env: X, schema: public}")
    assert config.environment("production").state.schema == "public"
