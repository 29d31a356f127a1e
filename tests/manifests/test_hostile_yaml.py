"""Hostile YAML in a manifest ends in one diagnostic with its line, before the work is done.

A few hundred bytes of nested merge keys would otherwise expand to a billion values; the
reader measures the expansion on the composed graph first. (How fast the refusal is, and how
little memory it takes, is measured by `benchmarks/validate_scale.py`; the time checks here
are only guards against a hang.)
"""

from __future__ import annotations

import os
import stat
import time

import pytest

from surveyctl import yamlsafe
from surveyctl.manifests import load, load_manifests
from surveyctl.yamlsafe import Limits, YamlProblem, read_text

# Generous: the refusal takes milliseconds; the unbounded expansion takes minutes.
GUARD_SECONDS = 30


def merge_bomb(levels: int = 30, kind: str = "Survey") -> str:
    """A manifest whose `spec` merges 2**levels copies of one mapping, in under 1 KB."""
    lines = [f"kind: {kind}", "name: bomb", "x-m0: &m0 {a: 1, b: 2}"]
    lines += [f"x-m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, levels)]
    lines.append(f"spec: {{<<: [*m{levels - 1}, *m{levels - 1}]}}")
    return "\n".join(lines) + "\n"


def test_a_merge_key_bomb_is_one_error_at_the_merge_that_explodes(check, line_of):
    text = merge_bomb()
    assert len(text) < 1000
    started = time.perf_counter()
    state, errors, diagnostics = check(text)
    assert time.perf_counter() - started < GUARD_SECONDS
    (error,) = errors
    assert error.summary.startswith("The merge keys (<<) expand this mapping to more than ")
    assert error.summary.endswith("values (merges of merges?).")
    assert error.location.file.endswith("m.yaml")
    assert line_of(text, "x-m1:") <= error.location.line <= line_of(text, "spec:")
    assert len(diagnostics) == 1
    assert state.surveys == {}


def test_merge_keys_of_ordinary_size_still_work(check, survey_yaml):
    text = survey_yaml(
        """\
        qualifications:
          - &gender {qualification_code: 211, condition_codes: ["111"]}
        quotas:
          - &q {buyer_quota_id: a, required_count: 50, criteria: [*gender]}
          - {<<: *q, buyer_quota_id: b}
          - {<<: [*q], buyer_quota_id: c, required_count: 10}
        """
    )
    state, errors, _ = check(text)
    assert errors == []
    quotas = state.surveys["test-survey"].quotas
    assert [(q.buyer_quota_id, q.required_count) for q in quotas] == [
        ("a", 50),
        ("b", 50),
        ("c", 10),
    ]


def test_many_merges_of_one_large_mapping_are_refused(check):
    keys = ", ".join(f"k{i}: {i}" for i in range(400))
    lines = ["kind: Survey", "name: wide", f"x-big: &big {{{keys}}}", "spec:"]
    lines += ["  - {<<: *big}" for _ in range(400)]
    _, errors, _ = check("\n".join(lines) + "\n")
    (error,) = errors
    assert error.summary.startswith("The merge keys (<<) expand this mapping to more than ")
    assert error.location.line > 4


def test_a_file_larger_than_the_limit_is_refused_before_it_is_parsed(write):
    path = write("huge.yaml", "kind: Survey\n" + "#" * load.LIMITS.max_bytes + "\n")
    _, diagnostics = load_manifests([path])
    (error,) = diagnostics.items
    assert error.summary == "The file is 8.0 MB, larger than the 8 MB a manifest file may be."
    assert (error.location.file, error.location.line) == (str(path), 1)


def test_a_file_of_exactly_the_limit_is_read_whole(tmp_path):
    text = "#" * load.LIMITS.max_bytes
    path = tmp_path / "full.yaml"
    path.write_text(text)
    assert read_text(path, load.LIMITS) == text


def _size_reported_as(monkeypatch, size: int) -> None:
    """The system reports every file as `size` bytes long (a file grown since it was looked
    at, or one of a file system that reports no size, as /proc does)."""
    real = os.fstat

    def fstat(descriptor):
        info = list(real(descriptor))
        info[stat.ST_SIZE] = size
        return os.stat_result(info)

    monkeypatch.setattr(yamlsafe.os, "fstat", fstat)


def test_a_file_longer_than_its_reported_size_is_read_whole(tmp_path, monkeypatch):
    text = "kind: Survey\nname: grown\n" + "# more\n" * 5000
    path = tmp_path / "grown.yaml"
    path.write_text(text)
    _size_reported_as(monkeypatch, 0)
    assert read_text(path, load.LIMITS) == text


def test_a_file_past_the_limit_is_refused_though_its_reported_size_is_small(tmp_path, monkeypatch):
    path = tmp_path / "huge.yaml"
    path.write_text("#" * (load.LIMITS.max_bytes + 1))
    _size_reported_as(monkeypatch, 10)
    with pytest.raises(YamlProblem, match="larger than the 8 MB a manifest file may be"):
        read_text(path, load.LIMITS)


def test_a_file_with_more_values_than_the_limit_is_refused_at_the_value_past_it(
    check, monkeypatch, line_of
):
    monkeypatch.setattr(load, "LIMITS", Limits("manifest file", 10_000, max_values=50))
    text = "kind: Survey\nspec:\n" + "".join(f"  k{i}: {i}\n" for i in range(40))
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The file holds more than 50 values; a manifest file may hold at most that many."
    )
    # Values: the document, kind, Survey, spec, its mapping, then k0, 0, k1, 1, ...: the
    # 51st is the value of k22.
    assert error.location.line == line_of(text, "k22:")


@pytest.mark.parametrize("command", [["validate", "--offline"], ["plan"]])
def test_the_cli_refuses_a_merge_key_bomb_with_one_sentence(run_cli, project, command):
    (project / "bomb.yaml").write_text(merge_bomb(), encoding="utf-8")
    started = time.perf_counter()
    result = run_cli(*command, "bomb.yaml")
    assert time.perf_counter() - started < GUARD_SECONDS
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if "error" in line.lower()]
    assert any(line.startswith("bomb.yaml:") and "merge keys (<<)" in line for line in errors), (
        result.output
    )
