"""Bad input of every kind ends in diagnostics with a file and line, never in a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveyctl.api import ApiClient
from surveyctl.catalog import Catalog
from surveyctl.cli.main import cli
from surveyctl.manifests import load_manifests

from .mutate import changed, paths_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(p for p in EXAMPLES.rglob("*.yaml") if p.name != "surveyctl.yaml")
FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def validate_file(path: Path, content: bytes, catalog: Catalog | None = None):
    path.write_bytes(content)
    state, diagnostics = load_manifests([path], catalog)
    for diagnostic in diagnostics:
        assert diagnostic.summary.endswith((".", "?", "!")), diagnostic
        assert diagnostic.location is not None and diagnostic.location.file == str(path)
        assert diagnostic.location.line >= 1
    for survey in state.surveys.values():
        if not diagnostics.has_errors:
            survey.body()
    return state, diagnostics


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=2), max_leaves=40),
)


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text(tmp_path, text):
    _, diagnostics = validate_file(tmp_path / "random.yaml", text.encode("utf-8"))
    assert diagnostics.has_errors


@FUZZ
@given(data=st.binary(max_size=200))
def test_random_bytes(tmp_path, data):
    _, diagnostics = validate_file(tmp_path / "bytes.yaml", data)
    assert diagnostics.has_errors


@FUZZ
@given(example=st.sampled_from(EXAMPLE_FILES), cut=st.floats(min_value=0, max_value=1))
def test_truncated_examples(tmp_path, example, cut):
    content = example.read_bytes()
    validate_file(tmp_path / "cut.yaml", content[: int(len(content) * cut)])


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), example=st.sampled_from(EXAMPLE_FILES))
def test_wrong_value_at_every_field(tmp_path, data, example):
    document = yaml.safe_load(example.read_text())
    path = data.draw(st.sampled_from(list(paths_of(document))))
    mutated = changed(document, path, data.draw(ODD_VALUES))
    validate_file(tmp_path / "mutated.yaml", yaml.safe_dump(mutated).encode())


@FUZZ
@given(depth=st.integers(min_value=1, max_value=3000), flow=st.booleans())
def test_deep_nesting(tmp_path, depth, flow):
    if flow:
        text = "kind: Survey\nspec: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "kind: Survey\nspec:\n" + "".join(" " * i + f"k{i}:\n" for i in range(depth))
    validate_file(tmp_path / "deep.yaml", text.encode())


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), example=st.sampled_from(EXAMPLE_FILES))
def test_mutations_checked_against_the_catalogue(tmp_path, sandbox, data, example):
    client = ApiClient(sandbox.url, "sandbox-buyer-1", retries=0)
    try:
        catalog = Catalog(lambda: client, "local", tmp_path / "cache")
        document = yaml.safe_load(example.read_text())
        path = data.draw(st.sampled_from(list(paths_of(document))))
        mutated = changed(document, path, data.draw(ODD_VALUES))
        validate_file(tmp_path / "mutated.yaml", yaml.safe_dump(mutated).encode(), catalog)
    finally:
        client.close()


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=120) | st.text(max_size=120).map(str.encode))
def test_cli_exits_1_without_a_traceback(tmp_path, data):
    path = tmp_path / "input.yaml"
    path.write_bytes(data)
    for args in (["validate", "--offline", str(path)], ["render", "--offline", str(path)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output


EDGE_NUMBERS = (float("nan"), float("inf"), float("-inf"), 10**30, -1, 0, 0.5)


def _number_paths(document):
    return [
        path
        for path in paths_of(document)
        if isinstance(_at(document, path), int | float)
        and not isinstance(_at(document, path), bool)
    ]


def _at(document, path):
    for part in path:
        document = document[part]
    return document


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_number_of_an_example_replaced_by_an_edge_value_is_diagnosed_not_a_crash(
    tmp_path, example
):
    # Each number (shares, counts, prices, codes, ranges) with NaN, infinities, a huge, a
    # negative, zero and a fraction, one at a time: a NaN passes every bound of a schema, so
    # each later step must meet it as a diagnostic, not as an exception.
    document = yaml.safe_load(example.read_text())
    paths = _number_paths(document)
    assert paths, "the example has numbers to replace"
    for path in paths:
        for value in EDGE_NUMBERS:
            mutated = changed(document, path, value)
            _, diagnostics = validate_file(tmp_path / "edge.yaml", yaml.safe_dump(mutated).encode())
            if value != value or value in (float("inf"), float("-inf")):
                assert diagnostics.has_errors, (path, value)
