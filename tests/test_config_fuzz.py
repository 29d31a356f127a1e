"""Every setting of surveyctl.yaml given a value of the wrong kind (a list, a mapping, a
number, null, NaN, an empty text...) is one ConfigError naming the file and the line, never a
traceback: the file is untrusted input, as manifests are."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from surveyctl.config import load_config
from surveyctl.errors import SurveyctlError

from .manifests.mutate import changed, paths_of

FULL = {
    "manifests": ["surveys/", "groups/"],
    "default_environment": "staging",
    "environments": {
        "staging": {"host": "https://staging.example.com", "api_key_env": "STAGING_KEY"},
        "production": {
            "host": "https://api.example.com",
            "api_key_env": "PRODUCTION_KEY",
            "protected": True,
            "identity": "external_project_id",
            "state": {"backend": "postgres", "dsn_env": "STATE_DSN", "schema": "surveyctl"},
            "guards": {"max_spend_increase": 5000, "max_destroy": 0, "max_changed_percent": 30},
        },
    },
}
ODD_VALUES = [None, True, 0, -1, 10**30, float("nan"), float("inf"), "", "x" * 300, [], ["x"],
              {}, {"a": 1}, [["x"]], "sandbox"]  # fmt: skip


CASES = [(path, value) for path in paths_of(FULL) for value in ODD_VALUES]


@pytest.mark.parametrize(
    ("path", "value"), CASES, ids=[f"{'.'.join(map(str, p)) or 'file'}={v!r:.12}" for p, v in CASES]
)
def test_a_setting_of_the_wrong_kind_is_one_error_with_file_and_line(tmp_path, path, value):
    config_file = tmp_path / "surveyctl.yaml"
    config_file.write_text(yaml.safe_dump(changed(FULL, path, value)), encoding="utf-8")
    try:
        config = load_config(config_file)
        for name in config.environments:
            config.environment(name)
    except SurveyctlError as exc:
        assert str(exc).startswith(f"{config_file}:"), str(exc)
        assert "\n" not in str(exc)


def test_the_full_configuration_of_the_fuzz_is_valid(tmp_path):
    config_file = tmp_path / "surveyctl.yaml"
    config_file.write_text(yaml.safe_dump(FULL), encoding="utf-8")
    config = load_config(config_file)
    assert config.environment("production").protected
    assert Path(config.root) == tmp_path
