"""The quick check of manifests (surveyctl.quickschema before jsonschema) changes no finding:
every example, and every example with one value replaced or removed, gets the same diagnostics,
word for word and line for line, as jsonschema alone gives; and valid manifests are checked
without loading jsonschema at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from surveyctl.manifests import schema
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import load_text
from surveyctl.quickschema import plainly_valid

from .mutate import REMOVED, changed

# The quick check's memos, emptied for each test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("quick_checks_made_afresh")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(p for p in EXAMPLES.rglob("*.yaml") if p.name != "surveyctl.yaml")
# What one place of a manifest is replaced by: each type, the edges of the bounds, an unknown
# field; a NaN, which meets no bound of the quick check and every bound of jsonschema's.
REPLACEMENTS = ["", "x", "en_US", -1, 0, 2.0, 1.5, True, None, [], {}, {"unknown": 1}, [{}]]
REPLACEMENTS.append(float("nan"))
# Mappings whose keys are names the manifest chooses (markets, cells, variables): one of their
# entries stands for all, as one item of a list does.
CHOSEN_KEYS = {"markets", "cells", "interlock", "variables"}


def findings(text: str, quick: bool, monkeypatch) -> list[tuple]:
    """The schema check's diagnostics of `text`, with the quick check or jsonschema alone."""
    schema._valid_items.clear()
    with monkeypatch.context() as patched:
        if not quick:
            patched.setattr(schema, "plainly_valid", lambda value, shape: False)
        diagnostics = Diagnostics()
        for document in load_text(text, "manifest.yaml", diagnostics):
            schema.check_document(document, diagnostics)
    return [(d.severity, d.summary, d.location) for d in diagnostics]


def places(value, prefix=(), shape=(), seen=None):
    """A path to each place of a document that its schema sees differently: every field,
    one item of each list and one entry of each mapping of chosen names."""
    seen = set() if seen is None else seen
    if isinstance(value, dict):
        chosen = bool(prefix) and prefix[-1] in CHOSEN_KEYS
        entries = [(key, "*" if chosen else key, item) for key, item in value.items()]
    elif isinstance(value, list):
        entries = [(index, "*", item) for index, item in enumerate(value)]
    else:
        return
    for part, shaped, item in entries:
        if (*shape, shaped) in seen:
            continue
        seen.add((*shape, shaped))
        yield (*prefix, part)
        yield from places(item, (*prefix, part), (*shape, shaped), seen)


# Fields the examples leave out, so that their keywords (an enum of ignore_changes, the
# patterns of times, dates and addresses, a range of waves) are compared too.
MORE = {
    "survey-extras": """
kind: Survey
name: extras
spec:
  survey_title: Extras
  survey_localization: en_US
  survey_category_code: 231
  completes_required: 100
  expected_ir: 40
  expected_loi: 10
  offer_price: 2.5
  field_time: 7
  live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
  schedule_pause:
    enable: true
    info: [{timezone: UTC, days: [1, 2], start_time: "22:00:00.000Z",
            duration: {days: 0, hours: 8, minutes: 0}}]
  feasibility_exclusions: {start: "20260101", end: "20260131"}
  subscriber_emails: [team@example.com]
  qualifications:
    - {qualification_code: 211, condition_codes: ["111"]}
lifecycle:
  prevent_destroy: true
  ignore_changes: [offer_price, buyer_message]
""",
    "program-range": """
kind: SurveyProgram
name: monthly
spec:
  variables: {brand: Acme}
  template:
    survey_title: "{brand} {wave}"
    survey_category_code: 231
    completes_required: 100
    expected_ir: 40
    expected_loi: 10
    offer_price: 2.5
    field_time: 7
    live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
  markets: {en_US: null, de_DE: {spec: {offer_price: 3}}}
  waves: {from: 2026-01, to: 2026-03}
""",
    "group": """
kind: ExclusionGroup
name: trackers
spec: {buyer_surveygroup_ref: acme-trackers, name: Trackers, exclusion_period: 30,
       surveys: [extras]}
lifecycle: {ignore_changes: [surveys]}
""",
}
CASES = [
    *[(p.name, p.read_text(encoding="utf-8")) for p in EXAMPLE_FILES],
    *MORE.items(),
]


@pytest.mark.parametrize(("name", "text"), CASES, ids=[name for name, _ in CASES])
def test_a_manifest_with_one_value_replaced_gets_the_findings_jsonschema_gives(
    name, text, monkeypatch
):
    document = yaml.safe_load(text)
    refused = 0
    for path in places(document):
        for new in [*REPLACEMENTS, REMOVED]:
            text = yaml.dump(changed(document, path, new), Dumper=yaml.CSafeDumper)
            alone = findings(text, quick=False, monkeypatch=monkeypatch)
            assert findings(text, quick=True, monkeypatch=monkeypatch) == alone, (path, new)
            refused += bool(alone)
    assert refused, "some of the changes are refused, so the comparison compares something"


@pytest.mark.parametrize(("name", "text"), CASES, ids=[name for name, _ in CASES])
def test_a_valid_manifest_has_no_findings_with_the_quick_check(name, text, monkeypatch):
    assert findings(text, quick=True, monkeypatch=monkeypatch) == []


# Small schemas of each keyword the quick check knows, alone and combined as the manifest
# schema combines them (an if of a type, an anyOf of required fields).
KEYWORD_SCHEMAS = [
    {"type": "integer", "minimum": 0, "maximum": 3},
    {"type": ["string", "integer"], "pattern": "^[a-z]+$", "minimum": 1},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 2},
    {"minLength": 1, "maxLength": 2},
    {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "boolean"}},
    {"minProperties": 1, "maxProperties": 1, "propertyNames": {"pattern": "^a"}},
    {"const": 1},
    {"enum": ["a", 1, True, None]},
    {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"if": {"type": "object", "required": ["a"]}, "then": {"properties": {"a": {"const": 1}}}},
    {"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": ["string", "number"]}},
    {"if": {"type": "array"}, "then": {"minItems": 2}, "else": {"required": ["b"]}},
    {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    {"if": {"type": ["integer", "null"]}, "then": {"minimum": 2}, "else": {"type": "number"}},
    {"if": {"type": "string"}, "else": {"type": "integer"}},
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, 1.0, 2.0, 1.5])
    | st.floats(allow_nan=True)
    | st.text(alphabet="ab1", max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=3000, deadline=None)
@given(shape=st.sampled_from(range(len(KEYWORD_SCHEMAS))), value=json_values)
# The edges of `enum` and `const`, tried every run: a bool is only ever its own self, never
# the other bool nor a number, and a number is never text.
@example(shape=7, value=False)
@example(shape=6, value=True)
@example(shape=7, value="1")
@example(shape=6, value=1.0)
def test_the_quick_check_passes_nothing_jsonschema_refuses(shape, value):
    schema_ = KEYWORD_SCHEMAS[shape]
    if plainly_valid(value, schema_):
        assert jsonschema.Draft202012Validator(schema_).is_valid(value)


def test_a_condition_the_quick_check_cannot_decide_is_left_to_jsonschema():
    # jsonschema's bounds let a NaN through, so it meets this `if` and fails its `then`.
    shape = {"if": {"minimum": 0}, "then": {"type": "string"}}
    assert not jsonschema.Draft202012Validator(shape).is_valid(float("nan"))
    assert not plainly_valid(float("nan"), shape)


def test_an_integral_float_under_a_condition_of_integer_types_is_left_to_jsonschema():
    # jsonschema takes 1.0 for an integer, so it meets this `if` and fails its `then`; the
    # quick check, which never takes a float for an integer, cannot tell, whatever the list.
    shape = KEYWORD_SCHEMAS[13]
    assert not jsonschema.Draft202012Validator(shape).is_valid(1.0)
    assert not plainly_valid(1.0, shape)


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (2, 0),
        (5, 1),
        ("ab", 1),
        (1.5, 2),
        ("ab", 3),
        ([True], 4),
        ({"ab": 1}, 5),
        (1.0, 6),
        (None, 7),
        ({"b": 1}, 8),
        ({"a": 1}, 9),
        ({"b": 1}, 9),
        (3, 10),
        ("x", 10),
        ([1, 2], 11),
        ({"b": 0}, 11),
        ({"a": 1, "b": "x"}, 12),
        (5, 11),
        (3, 13),
        (None, 13),
        (1.5, 13),
        ("x", 14),
        (5, 14),
    ],
)
def test_the_quick_check_passes_a_value_of_each_keyword_that_plainly_meets_it(value, shape):
    assert plainly_valid(value, KEYWORD_SCHEMAS[shape])


def test_valid_manifests_are_checked_without_loading_jsonschema():
    # Loading jsonschema takes about 40 ms that a plan spends before or beside its reads.
    script = (
        "import sys; from surveyctl.manifests import load_manifests; "
        f"state, found = load_manifests([{str(EXAMPLES)!r}]); "
        "assert not found.has_errors, [str(d) for d in found]; "
        "print(len(state.surveys), 'jsonschema' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    count, loaded = done.stdout.split()
    assert int(count) > 0 and loaded == "False"
