"""surveyctl.yaml: hostile or broken files end in one sentence with the file and line."""

from __future__ import annotations

import time

import pytest

from surveyctl.config import load_config
from surveyctl.errors import ConfigError

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
