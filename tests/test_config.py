"""surveyctl.yaml: hostile or broken files end in one sentence with the file and line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from surveyctl import __version__
from surveyctl.config import CONFIG_FILE, load_config
from surveyctl.errors import ConfigError

from .reconcile.conftest import Manifests, survey_manifest

# How a message about an unknown setting ends: it may be a newer surveyctl's.
NEWER = f"; if a newer surveyctl than this one ({__version__}) added it, upgrade surveyctl here"

GUARD_SECONDS = 30  # a hang guard only; the refusal itself takes milliseconds


def merge_bomb(levels: int = 30) -> str:
    """A configuration whose `environments` merges 2**levels copies of one mapping."""
    lines = ["x-m0: &m0 {a: 1, b: 2}"]
    lines += [f"x-m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, levels)]
    lines.append(f"environments: {{<<: [*m{levels - 1}, *m{levels - 1}]}}")
    return "\n".join(lines) + "\n"


def only_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    return line


def test_a_merge_key_bomb_in_surveyctl_yaml_is_refused_with_its_line(run_cli, project):
    (project / "surveyctl.yaml").write_text(merge_bomb(), encoding="utf-8")
    started = time.perf_counter()
    result = run_cli("validate")
    assert time.perf_counter() - started < GUARD_SECONDS
    line = only_error_line(result)
    assert line.startswith("Error: surveyctl.yaml:")
    assert "The merge keys (<<) expand this mapping to more than" in line


@pytest.mark.parametrize(
    "nested",
    [
        "environments:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(60)),
        "environments: " + "[" * 50_000 + "]" * 50_000 + "\n",
    ],
    ids=["block", "flow"],
)
def test_a_deeply_nested_surveyctl_yaml_is_one_sentence(run_cli, project, nested):
    (project / "surveyctl.yaml").write_text(nested, encoding="utf-8")
    line = only_error_line(run_cli("validate"))
    assert line.startswith("Error: surveyctl.yaml:")
    assert "The YAML nests deeper than 16 levels" in line


def test_invalid_yaml_in_surveyctl_yaml_names_its_line(tmp_path):
    path = tmp_path / "surveyctl.yaml"
    path.write_text("environments:\n  local: {host: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert raised.value.location.file == str(path)
    assert raised.value.location.line >= 2
    assert raised.value.message.startswith("Invalid YAML:")


def test_a_configuration_of_several_documents_is_refused_at_the_second(tmp_path):
    path = tmp_path / "surveyctl.yaml"
    path.write_text("manifests: [a/]\n---\nmanifests: [b/]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="one YAML document") as raised:
        load_config(path)
    assert raised.value.location.line == 3


def config_error(tmp_path, text: str) -> ConfigError:
    path = tmp_path / "surveyctl.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert raised.value.location is not None and raised.value.location.file == str(path)
    return raised.value


def test_a_misspelt_setting_names_its_line_and_the_setting_meant(run_cli, project):
    (project / "surveyctl.yaml").write_text(
        "manifests: [surveys/]\nenviroments:\n  local: {host: 'https://x.example', "
        "api_key_env: K}\n",
        encoding="utf-8",
    )
    line = only_error_line(run_cli("validate"))
    assert line == (
        "Error: surveyctl.yaml:2:1: unknown setting 'enviroments' (did you mean 'environments'?)"
        + NEWER
    )


def test_an_unknown_setting_lists_the_known_ones(tmp_path):
    error = config_error(tmp_path, "manifests: []\nsecrets: {}\n")
    assert error.message == (
        "unknown setting 'secrets'; known: manifests, environments, default_environment, "
        "required_version" + NEWER
    )
    assert error.location.line == 2


@pytest.mark.parametrize(
    "text",
    [
        "plan_defaults: {parallelism: 4}\n",
        "environments:\n  staging: {host: 'https://s.example', api_key_env: K, labels: {}}\n",
        "environments:\n  staging: {host: 'https://s.example', api_key_env: K,\n"
        "             guards: {max_new_surveys: 3}}\n",
        "environments:\n  staging: {host: 'https://s.example', api_key_env: K,\n"
        "             state: {backend: postgres, dsn_env: DSN, pool_size: 3}}\n",
    ],
    ids=["top level", "environment", "guard", "state"],
)
def test_a_setting_a_newer_surveyctl_may_have_added_is_refused_saying_to_upgrade(tmp_path, text):
    # Refused, not ignored: a setting this surveyctl skipped could be a guard or a protection
    # the team counts on, and an older CI would apply without it.
    assert config_error(tmp_path, text).message.endswith(NEWER)


def test_a_misspelt_environment_setting_names_its_line(tmp_path):
    error = config_error(
        tmp_path,
        "environments:\n  staging:\n    host: https://staging.example.com\n"
        "    api_key_env: STG_KEY\n    protectd: true\n",
    )
    assert error.message == (
        "environments.staging: unknown setting 'protectd' (did you mean 'protected'?)" + NEWER
    )
    assert (error.location.line, error.location.column) == (5, 5)


def test_a_misspelt_default_environment_suggests_the_defined_one(tmp_path):
    error = config_error(
        tmp_path,
        "environments:\n  production: {host: 'https://api.example.com', api_key_env: K}\n"
        "default_environment: prodution\n",
    )
    assert error.message == (
        "default_environment 'prodution' is not defined (did you mean 'production'?); "
        "defined: production, sandbox"
    )
    assert error.location.line == 3


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (
            "manifests: surveys/\n",
            "manifests must be a list of paths, such as [surveys/, groups/]",
            1,
        ),
        (
            "environments:\n  staging:\n    host: staging.example.com\n    api_key_env: K\n",
            "environments.staging.host must be an http(s) URL",
            3,
        ),
        (
            "environments:\n  staging: {host: 'https://s.example', api_key_env: ''}\n",
            "environments.staging.api_key_env must name the variable that holds the key",
            2,
        ),
        (
            "environments:\n  prod:\n    host: https://p.example\n    api_key_env: K\n"
            "    protected: 'no'\n",
            "environments.prod.protected must be true or false",
            5,
        ),
        ("- manifests\n", "the configuration must be a mapping of settings", 1),
    ],
    ids=["manifests", "host", "api_key_env", "protected", "not-a-mapping"],
)
def test_a_wrong_value_names_the_setting_and_its_line(tmp_path, text, message, line):
    error = config_error(tmp_path, text)
    assert error.message.startswith(message)
    assert error.location.line == line


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            "{host: 'https://s.example'}",
            "environments.staging has no api_key_env: name the environment variable that holds "
            "its API key, such as api_key_env: SURVEYCTL_PRODUCTION_KEY",
        ),
        (
            "{api_key_env: K}",
            "environments.staging has no host: give the marketplace's http(s) URL, such as "
            "host: https://api.example.com",
        ),
    ],
    ids=["api_key_env", "host"],
)
def test_a_missing_environment_setting_is_said_to_be_missing_at_the_environment(
    tmp_path, settings, message
):
    error = config_error(tmp_path, f"environments:\n  staging: {settings}\n")
    assert error.message == message
    assert error.location.line == 2


def test_a_host_with_a_user_and_password_is_refused_naming_the_setting_and_its_line(tmp_path):
    error = config_error(
        tmp_path,
        "environments:\n  staging:\n    host: 'https://user:hunter2pw@127.0.0.1:9'\n"
        "    api_key_env: K\n",
    )
    assert error.message == (
        "environments.staging.host must not carry a user or password "
        "(the API key is read from api_key_env)"
    )
    assert error.location.line == 3


def test_a_password_in_a_host_is_never_printed(run_cli, project, sandbox):
    with_password = sandbox.url.replace("://", "://user:hunter2pw@", 1)
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{with_password}', api_key_env: SURVEYCTL_LOCAL_KEY}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    result = run_cli("plan")
    assert "hunter2pw" not in result.stdout + result.stderr
    assert only_error_line(result).startswith("Error: surveyctl.yaml:2:")


def test_an_unknown_environment_on_the_command_line_suggests_a_configured_one(run_cli, project):
    line = only_error_line(run_cli("--env", "locl", "validate"))
    assert "unknown environment 'locl'" in line
    assert "(did you mean 'local'?); known: local, sandbox" in line


def test_an_unknown_environment_from_the_variable_names_the_variable(run_cli, project, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_ENV", "locl")
    line = only_error_line(run_cli("validate"))
    assert "unknown environment 'locl' (from $SURVEYCTL_ENV) in" in line


@pytest.mark.parametrize("entry", ["/", "../elsewhere/", "surveys/../../.."])
def test_a_manifests_entry_outside_the_project_is_refused_with_its_line(tmp_path, entry):
    # surveyctl.yaml comes with the code under review: `manifests: [/]` would have a plan
    # walk and read the whole machine.
    project = tmp_path / "project"
    project.mkdir()
    error = config_error(project, f"manifests:\n  - surveys/\n  - {entry!r}\n")
    assert error.message.startswith(f"manifests entry {entry!r} is outside {project}")
    assert error.location.line == 3


def test_a_device_given_as_the_configuration_is_named_for_what_it_is(run_cli, project):
    # It exists: "no such configuration file" would send the user looking for a typo.
    line = only_error_line(run_cli("--config", "/dev/null", "validate"))
    assert line == (
        "Error: /dev/null is a character device, not a regular file: only files are read"
    )


def test_a_fifo_given_as_the_configuration_is_named_for_what_it_is(run_cli, project):
    os.mkfifo(project / "config.fifo")
    line = only_error_line(run_cli("--config", "config.fifo", "validate"))
    assert line == (
        "Error: config.fifo is a FIFO (named pipe), not a regular file: only files are read"
    )


def test_a_configuration_given_that_does_not_exist_is_one_sentence(run_cli, project):
    line = only_error_line(run_cli("--config", "nowhere.yaml", "validate"))
    assert line == "Error: nowhere.yaml: no such configuration file"


def test_a_configuration_name_longer_than_the_system_allows_is_one_sentence(run_cli, project):
    name = "a" * 256 + ".yaml"
    line = only_error_line(run_cli("--config", name, "validate"))
    assert line == f"Error: {name}: cannot read the configuration file: File name too long"


def test_a_manifests_entry_with_a_nul_is_a_configuration_error_at_its_line(run_cli, project):
    # The system ends a path at a NUL: Python refuses such a path with a ValueError.
    (project / "surveyctl.yaml").write_text(
        'manifests:\n  - surveys/\n  - "surveys/\\0"\n', encoding="utf-8"
    )
    line = only_error_line(run_cli("validate"))
    assert line == (
        "Error: surveyctl.yaml:3:5: manifests entry 'surveys/\\x00' must not contain a NUL "
        "character: no path holds one"
    )


def test_a_manifests_entry_elsewhere_in_the_same_repository_is_read(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared").mkdir()
    project = tmp_path / "research"
    project.mkdir()
    (project / "surveyctl.yaml").write_text("manifests: [../shared/]\n", encoding="utf-8")
    assert load_config(project / "surveyctl.yaml").manifests == ["../shared/"]


# A secret written where the name of its variable belongs: the message names the setting and
# its line, never the value (every message about the variable would print the secret).
SECRETS_IN_PLACE_OF_NAMES = {
    "url dsn": (
        "state: {backend: postgres, dsn_env: 'postgresql://ops:Hunter2pw@db.example.com/ops'}",
        "Hunter2pw",
    ),
    "key=value dsn": (
        "state: {backend: postgres, dsn_env: 'host=db.example.com password=Hunter2pw'}",
        "Hunter2pw",
    ),
}


@pytest.mark.parametrize("setting", SECRETS_IN_PLACE_OF_NAMES, ids=list(SECRETS_IN_PLACE_OF_NAMES))
def test_a_connection_string_in_place_of_dsn_env_is_refused_without_printing_it(
    run_cli, project, sandbox, setting
):
    text, secret = SECRETS_IN_PLACE_OF_NAMES[setting]
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_LOCAL_KEY,\n"
        f"    {text}}}\ndefault_environment: staging\n",
        encoding="utf-8",
    )
    for result in (run_cli("plan"), run_cli("--debug", "state", "list")):
        assert secret not in result.stdout + result.stderr
    line = only_error_line(run_cli("plan"))
    assert line.startswith("Error: surveyctl.yaml:3:")
    assert "environments.staging.state.dsn_env must name the variable" in line


def test_an_api_key_in_place_of_api_key_env_is_refused_without_printing_it(
    run_cli, project, sandbox
):
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{sandbox.url}',\n"
        "    api_key_env: 'sk-live-4f9a8b7c6d5e'}\ndefault_environment: staging\n",
        encoding="utf-8",
    )
    Manifests(project).write(survey_manifest("keyed"))  # so that plan asks for the key
    for result in (run_cli("plan", "manifests"), run_cli("--debug", "plan", "manifests")):
        assert "4f9a8b7c6d5e" not in result.stdout + result.stderr
    line = only_error_line(run_cli("plan", "manifests"))
    assert line.startswith("Error: surveyctl.yaml:3:")
    assert "environments.staging.api_key_env must name the variable" in line


def test_a_key_of_letters_and_digits_in_place_of_api_key_env_is_not_printed_when_unset(
    run_cli, project, sandbox
):
    # A valid variable name, so it passes the check of the file; but no such variable is set.
    key = "a1B2c3D4e5F6g7H8i9J0k1L2"
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{sandbox.url}', api_key_env: {key}}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    Manifests(project).write(survey_manifest("keyed"))  # so that plan asks for the key
    for result in (run_cli("plan", "manifests"), run_cli("--debug", "plan", "manifests")):
        assert result.exit_code == 1
        assert key not in result.stdout + result.stderr
    assert "needs its API key in the variable its `api_key_env` names in surveyctl.yaml" in (
        run_cli("plan", "manifests").stderr
    )


def test_an_unset_variable_with_a_conventional_name_is_named(run_cli, project, sandbox):
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_NEVER_SET}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    Manifests(project).write(survey_manifest("keyed"))
    result = run_cli("plan", "manifests")
    assert "needs its API key in $SURVEYCTL_NEVER_SET, which is not set" in result.stderr


def test_an_empty_key_variable_is_said_to_be_empty_not_unset(
    run_cli, project, sandbox, monkeypatch
):
    (project / "surveyctl.yaml").write_text(
        f"environments:\n  staging: {{host: '{sandbox.url}', api_key_env: SURVEYCTL_EMPTY_KEY}}\n"
        "default_environment: staging\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("SURVEYCTL_EMPTY_KEY", "")
    Manifests(project).write(survey_manifest("keyed"))
    result = run_cli("plan", "manifests")
    assert result.exit_code == 1
    assert "needs its API key in $SURVEYCTL_EMPTY_KEY, which is empty" in result.stderr


def test_a_manifests_entry_that_names_nothing_is_refused_at_its_line(tmp_path):
    (tmp_path / "surveys").mkdir()
    (tmp_path / CONFIG_FILE).write_text("manifests:\n  - surveys/\n  - survey/\n  - groupz/\n")
    config = load_config(cwd=tmp_path)
    with pytest.raises(ConfigError) as refused:
        config.manifest_paths()
    assert str(refused.value) == (
        f"{tmp_path / CONFIG_FILE}:3:5: manifests lists 'survey/', 'groupz/', which are not "
        f"in {tmp_path}: make them, or take the entries out"
    )


def test_paths_given_on_the_command_line_are_not_checked_against_manifests(tmp_path):
    (tmp_path / CONFIG_FILE).write_text("manifests: [survey/]\n")
    config = load_config(cwd=tmp_path)
    assert config.manifest_paths([Path("elsewhere")]) == [Path("elsewhere")]


@pytest.mark.parametrize("name", ["sandbox", "Sandbox"])
def test_an_environment_named_as_the_embedded_sandbox_is_refused_at_its_line(tmp_path, name):
    path = tmp_path / "surveyctl.yaml"
    path.write_text(
        "manifests: [surveys/]\nenvironments:\n"
        f"  {name}: {{host: 'https://sandbox.example.com', api_key_env: KEY}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert raised.value.location.line == 3
    assert raised.value.message == (
        f"environment name {name!r} is the embedded sandbox's, which needs no entry; name this "
        "environment otherwise (such as 'marketplace-sandbox')"
    )


def test_an_undefined_alias_in_surveyctl_yaml_names_the_alias_and_setting(tmp_path):
    path = tmp_path / "surveyctl.yaml"
    path.write_text("manifests: [a/]\ndefault_environment: *stagng\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert raised.value.location.line == 2
    assert raised.value.message.startswith(
        'default_environment: undefined alias "*stagng": no anchor &stagng'
    )
