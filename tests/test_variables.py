"""The environment variables surveyctl reads besides keys and connection strings."""

from __future__ import annotations

import pytest

from surveyctl import variables
from surveyctl.errors import ConfigError


@pytest.mark.parametrize("value", ["true", "1", "yes", " TRUE "])
def test_ci_said_any_usual_way_keeps_no_cache_folder_by_default(monkeypatch, value):
    monkeypatch.delenv(variables.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv(variables.CI_VARIABLE, value)
    assert variables.cache_folder() is None


@pytest.mark.parametrize("value", ["0", "86400", "2.5"])
def test_a_settle_time_from_0_to_a_day_is_taken(monkeypatch, value):
    monkeypatch.setenv(variables.SETTLE_VARIABLE, value)
    assert variables.create_settle_seconds() == float(value)


@pytest.mark.parametrize("value", ["-1", "86401", "nan", "inf", "soon"])
def test_a_settle_time_outside_0_to_a_day_is_refused(monkeypatch, value):
    monkeypatch.setenv(variables.SETTLE_VARIABLE, value)
    with pytest.raises(ConfigError, match="must be a number of seconds from 0 to 86400"):
        variables.create_settle_seconds()


def test_no_settle_time_set_is_a_minute(monkeypatch):
    monkeypatch.delenv(variables.SETTLE_VARIABLE, raising=False)
    assert variables.create_settle_seconds() == 60.0


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    for name in (variables.CACHE_VARIABLE, variables.CI_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert variables.cache_folder() == tmp_path / ".cache" / "surveyctl"


def test_a_cache_folder_named_from_home_is_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(variables.CACHE_VARIABLE, "~/surveyctl-cache")
    assert variables.cache_folder() == tmp_path / "surveyctl-cache"


@pytest.mark.parametrize(("value", "strict"), [("on", True), ("off", False), ("", False)])
def test_the_strict_sandbox_is_asked_for_with_on_and_off_too(monkeypatch, value, strict):
    monkeypatch.setenv(variables.SANDBOX_STRICT_VARIABLE, value)
    assert variables.sandbox_strict() is strict


def test_an_empty_plan_key_signs_nothing(monkeypatch):
    monkeypatch.setenv(variables.PLAN_KEY_VARIABLE, "")
    assert variables.plan_signing_key() is None


def test_an_actor_name_is_taken_without_surrounding_blanks(monkeypatch):
    monkeypatch.setenv(variables.ACTOR_VARIABLE, "  ci-bot  ")
    assert variables.actor_name() == "ci-bot"


def test_an_actor_name_with_a_line_break_is_refused(monkeypatch):
    monkeypatch.setenv(variables.ACTOR_VARIABLE, "ci\nbot")
    with pytest.raises(ConfigError, match="holds a line break"):
        variables.actor_name()


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
def test_a_cache_folder_of_off_keeps_no_cache(monkeypatch, value):
    monkeypatch.setenv(variables.CACHE_VARIABLE, value)
    assert variables.cache_folder() is None


def test_libpqs_variables_that_are_set_describe_a_connection(monkeypatch):
    monkeypatch.setenv("PGHOST", "db.internal")
    monkeypatch.setenv("PGPASSWORD", "s3cret")
    monkeypatch.setenv("PGUSER", "")
    for name in ("PGPORT", "PGDATABASE"):
        monkeypatch.delenv(name, raising=False)
    assert variables.libpq_defaults() == {"PGHOST": "db.internal", "PGPASSWORD": "s3cret"}
