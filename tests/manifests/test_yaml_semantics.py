"""What the loader reads is exactly what PyYAML's safe loader reads, with the line of each key.

The loader builds most documents straight from the parsed nodes (the fast path) and leaves
the rest (aliases, merge keys, duplicate or non-text keys, tags) to PyYAML's constructor; both
must give the values and the marks PyYAML gives.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveyctl.errors import Location
from surveyctl.yamlsafe import Limits, MarkedDict, MarkedList, load_documents

from .documents import documents, scalars

LIMITS = Limits("manifest file", max_bytes=1_000_000, max_values=100_000)
FILE = "doc.yaml"


def load(text: str) -> tuple[list, list[tuple[str, Location]]]:
    problems: list[tuple[str, Location]] = []
    documents = load_documents(text, FILE, LIMITS, lambda *p: problems.append(p))
    return [d.data for d in documents], problems


def assert_marks_match(value, node) -> None:
    """Every mapping key and list item carries the line and column PyYAML's node has."""
    if isinstance(value, MarkedDict):
        assert isinstance(node, yaml.MappingNode)
        assert value.location == Location(
            FILE, node.start_mark.line + 1, node.start_mark.column + 1
        )
        for key_node, value_node in node.value:
            mark = key_node.start_mark
            assert value.where(key_node.value) == Location(FILE, mark.line + 1, mark.column + 1)
            assert_marks_match(value[key_node.value], value_node)
    elif isinstance(value, MarkedList):
        assert isinstance(node, yaml.SequenceNode)
        for index, (item, child) in enumerate(zip(value, node.value, strict=True)):
            mark = child.start_mark
            assert value.where(index) == Location(FILE, mark.line + 1, mark.column + 1)
            assert_marks_match(item, child)


DOCUMENTS = documents(
    scalars(st.integers(min_value=-(10**20), max_value=10**20), st.floats(allow_nan=False))
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, flow=st.booleans())
def test_documents_load_as_pyyaml_loads_them_with_its_marks(document, flow):
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    (loaded,), problems = load(text)
    assert problems == []
    assert loaded == yaml.safe_load(text)
    assert_marks_match(loaded, yaml.compose(text))


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("yes", True),
        ("Off", False),
        ("017", 15),  # YAML 1.1 octal
        ("0o17", "0o17"),  # not an int in YAML 1.1
        ("1_000", 1000),
        ("1:30", 90),  # sexagesimal
        ("1e3", "1e3"),  # YAML 1.1 floats need a dot
        ("1.0e+3", 1000.0),
        ("-.5", "-.5"),
        ("~", None),
        ("0x1F", 31),
        ("'111'", "111"),
    ],
)
def test_plain_scalars_keep_their_yaml_1_1_meaning(plain, expected):
    (loaded,), _ = load(f"value: {plain}\n")
    assert loaded["value"] == expected
    assert type(loaded["value"]) is type(expected)


def test_a_date_is_read_as_a_date():
    (loaded,), _ = load("start: 2026-01-31\n")
    assert loaded == yaml.safe_load("start: 2026-01-31\n")


def test_aliases_share_one_value_as_in_pyyaml():
    (loaded,), problems = load("a: &x {k: [1, 2]}\nb: *x\n")
    assert problems == []
    assert loaded["a"] is loaded["b"]
    assert loaded.where("b") == Location(FILE, 2, 1)


@pytest.mark.parametrize(
    ("text", "summary", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", "Duplicate key 'a' (first given on line 1)", 3),
        ("a: 1\non: 2\n", "Keys must be text, found True", 2),
        ("a: !!set {x}\nb: !foo 1\n", "Invalid YAML: could not determine a constructor", 2),
        ("a: =\n", "Invalid YAML: could not determine a constructor", 1),
    ],
)
def test_what_pyyaml_refuses_is_refused_at_its_line(text, summary, line):
    _, problems = load(text)
    (problem,) = problems
    assert problem[0].startswith(summary)
    assert problem[1].line == line
