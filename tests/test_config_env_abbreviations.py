"""An environment called by a short name (`--env prod`) is answered with the one it shortens."""

from __future__ import annotations

import pytest

from surveyctl.config import load_config
from surveyctl.errors import ConfigError

CONFIG = (
    "environments:\n"
    "  production: {host: 'https://api.example.com', api_key_env: PROD_KEY}\n"
    "  staging: {host: 'https://staging.example.com', api_key_env: STAGING_KEY}\n"
)


@pytest.fixture
def config(tmp_path, monkeypatch):
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    (tmp_path / "surveyctl.yaml").write_text(CONFIG, encoding="utf-8")
    return load_config(cwd=tmp_path)


@pytest.mark.parametrize(
    ("given", "meant"), [("prod", "production"), ("prd", "production"), ("stg", "staging")]
)
def test_a_short_name_of_an_environment_suggests_the_one_it_shortens(config, given, meant):
    with pytest.raises(ConfigError, match=rf"'{given}' .*\(did you mean '{meant}'\?\)"):
        config.environment(given)


def test_a_letter_that_starts_two_environments_suggests_neither(config):
    with pytest.raises(ConfigError) as refused:
        config.environment("s")  # sandbox or staging
    assert "did you mean" not in str(refused.value)


def test_a_short_name_from_the_variable_suggests_the_one_it_shortens(config, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_ENV", "prod")
    with pytest.raises(ConfigError, match=r"\(from \$SURVEYCTL_ENV\).*did you mean 'production'"):
        config.environment()
