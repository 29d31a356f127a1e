"""surveyctl.yaml comes with the code under review: an environment's name and host are
checked when the file is read, and a bad one is one sentence at its line, never a request
that fails in a puzzling way, a traceback, or a file written outside the project."""

from __future__ import annotations

import pytest

from surveyctl.config import load_config
from surveyctl.errors import ConfigError


def config_error(tmp_path, text: str) -> ConfigError:
    path = tmp_path / "surveyctl.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    return raised.value


def environment(name: str = "staging", host: str = "https://api.example.com") -> str:
    return f'environments:\n  "{name}":\n    host: "{host}"\n    api_key_env: STAGING_KEY\n'


NAME_RULE = (
    "use letters, digits, '.', '_' and '-', 1 to 63 characters, starting with a letter or digit"
)


def test_an_environment_name_that_climbs_out_of_the_project_is_refused_at_its_line(tmp_path):
    # The name is the state file's (.surveyctl/state/<name>.json) and the catalogue cache's.
    error = config_error(tmp_path, environment(name="../../../elsewhere/prod"))
    assert error.message == (
        f"environment name '../../../elsewhere/prod' is not valid: {NAME_RULE}"
    )
    assert error.location.line == 2


def test_an_environment_name_with_a_terminal_escape_is_refused_without_printing_it(tmp_path):
    error = config_error(tmp_path, environment(name="prod\\e[31m"))
    assert "\x1b" not in error.message
    assert error.message.startswith("environment name 'prod\\x1b[31m' is not valid")


def test_an_ordinary_environment_name_is_taken(tmp_path):
    path = tmp_path / "surveyctl.yaml"
    path.write_text(environment(name="eu-prod_2.b"), encoding="utf-8")
    assert load_config(path).environment("eu-prod_2.b").host == "https://api.example.com"


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        ("http://[::1", "is not a valid URL (a bracket not closed, a port that is not a number?)"),
        ("http://127.0.0.1:99999", "is not a valid URL (a bracket not closed, a port that is"),
        ("http://", "must be an http(s) URL with a host name, such as https://api.example.com"),
        ("https://api.example .com", "must not contain spaces or control characters"),
        ("https://api.example.com/\\e[2J", "must not contain spaces or control characters"),
        ("https://api.example.com/?x=1", "must not carry a query or fragment (?..., #...)"),
        ("https://api.example.com#top", "must not carry a query or fragment (?..., #...)"),
        ("http://127.0.0.1:0", "has port 0, which no service listens on"),
        ("https://api..example.com", "has an empty label in its host name (two dots in a row"),
        ("https://.example.com", "has an empty label in its host name (two dots in a row"),
        (f"https://{'a' * 64}.com", "has a label longer than 63 characters in its host name"),
        (f"https://{'a' * 300}.com", "has a label longer than 63 characters in its host name"),
        ("https://api%2e%2eexample.com", "must not percent-encode its host name (%..)"),
        ("https://*.example.com", "must not start its host name with '*'"),
        ("https://\u2603.example.com", "has a host name that is not a valid internationalised"),
    ],
    ids=[
        "bracket",
        "port",
        "no-host",
        "space",
        "escape",
        "query",
        "fragment",
        "port-0",
        "empty-label",
        "dot-first",
        "label-64",
        "label-300",
        "percent",
        "wildcard",
        "idna",
    ],
)
def test_a_host_that_is_no_url_root_is_refused_at_its_line(tmp_path, host, problem):
    error = config_error(tmp_path, environment(host=host))
    assert error.message.startswith(f"environments.staging.host {problem}")
    assert error.location.line == 3


@pytest.mark.parametrize(
    "host",
    [
        "https://api.example.com",
        "http://[::1]:8080",
        "https://proxy.example.com/market/",
        "https://api.example.com.",
        f"https://{'a' * 63}.example.com",
        "https://b\u00fccher.example",
    ],
)
def test_a_host_with_a_port_or_a_path_prefix_is_taken(tmp_path, host):
    path = tmp_path / "surveyctl.yaml"
    path.write_text(environment(host=host), encoding="utf-8")
    assert load_config(path).environment("staging").host == host.rstrip("/")


def test_an_unclosed_bracket_in_a_host_is_one_sentence_not_a_traceback(run_cli, project):
    (project / "surveyctl.yaml").write_text(environment(host="http://[::1"), encoding="utf-8")
    result = run_cli("--env", "staging", "validate")
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "ValueError" not in result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: surveyctl.yaml:3:5: environments.staging.host is not a valid URL (a bracket "
        "not closed, a port that is not a number?)"
    )


@pytest.mark.parametrize("command", [["validate"], ["plan"], ["surveys", "list"]])
def test_a_host_with_an_empty_label_is_a_configuration_error_at_its_line(run_cli, project, command):
    # urllib3 refuses such a name only when the first request connects, with a traceback.
    (project / "surveyctl.yaml").write_text(
        environment(host="https://api..example.com"), encoding="utf-8"
    )
    result = run_cli("--env", "staging", *command)
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "LocationParseError" not in result.output
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: surveyctl.yaml:3:5: environments.staging.host has an empty label in its host "
        "name (two dots in a row, or a dot first)"
    )


def test_an_environment_name_ending_in_a_line_break_is_refused(tmp_path):
    # The name is printed on every command and names the state file: `prod\n.json`.
    error = config_error(tmp_path, environment(name="prod\\n"))
    assert error.message == f"environment name 'prod\\n' is not valid: {NAME_RULE}"
    assert error.location.line == 2


def test_an_api_key_env_ending_in_a_line_break_is_refused(tmp_path):
    error = config_error(
        tmp_path,
        'environments:\n  staging: {host: "https://api.example.com", api_key_env: "KEY\\n"}\n',
    )
    assert error.message.startswith("environments.staging.api_key_env must name the variable")
