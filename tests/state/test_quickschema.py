"""The quick check of state records never passes what jsonschema refuses, passes every record
surveyctl writes, and leaves every refusal's message to jsonschema."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from surveyctl.quickschema import plainly_valid
from surveyctl.state import records
from surveyctl.state.records import GroupRecord, StateError, SurveyRecord

# The quick check's memos, emptied for each test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("quick_checks_made_afresh")


SCHEMAS = {
    "state": records._SCHEMA,
    "survey": records._SURVEY_SCHEMA,
    "group": records._GROUP_SCHEMA,
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.text(max_size=3)
ints = st.integers(-3, 3)
journal_entry = st.fixed_dictionaries({"address": names, "started_at": names, "fingerprint": names})
# Records as surveyctl writes them; `broken` then puts a value of any type in one place.
VALID = {
    "state": st.fixed_dictionaries(
        {
            "format_version": ints,
            "lineage": st.text(min_size=1, max_size=3),
            "serial": st.integers(0, 3),
            "resources": st.dictionaries(names, st.dictionaries(names, json_values), max_size=2),
        },
        optional={"journal": st.dictionaries(names, journal_entry, max_size=2)},
    ),
    "survey": st.fixed_dictionaries(
        {"ps_survey_id": ints},
        optional={
            "quota_ids": st.dictionaries(names, names, max_size=2),
            "last_applied": st.none() | st.dictionaries(names, json_values, max_size=2),
            "prevent_destroy": st.booleans(),
            "mod_on": st.none() | ints,
            "other": json_values,
        },
    ),
    "group": st.fixed_dictionaries(
        {"buyer_surveygroup_ref": names},
        optional={
            "ps_survey_ids": st.lists(ints, max_size=3),
            "last_applied": st.none() | st.dictionaries(names, json_values, max_size=2),
            "prevent_destroy": st.booleans(),
        },
    ),
}


# Values at the edges of the keywords: an empty text, a negative number, a bool for a number.
EDGES = ["", -1, 0, True, False, 1.0, 0.5, None, [], {}, [True]]


@st.composite
def broken(draw, value):
    """`value` with one place (a field, an item, an entry's field) holding any value, or one
    field removed, or left as it is."""
    places = [()]
    for key, item in value.items():
        places.append((key,))
        if isinstance(item, dict):
            places += [(key, inner) for inner in item]
            places += [
                (key, inner, leaf)
                for inner in item
                if isinstance(item[inner], dict)
                for leaf in item[inner]
            ]
        if isinstance(item, list):
            places += [(key, index) for index in range(len(item))]
    place = draw(st.sampled_from(places))
    if not place:
        return value
    holder = value
    for step in place[:-1]:
        holder = holder[step]
    if draw(st.booleans()) and isinstance(holder, dict):
        del holder[place[-1]]
    else:
        holder[place[-1]] = draw(st.sampled_from(EDGES) | json_values)
    return value


@st.composite
def candidates(draw):
    schema = draw(st.sampled_from(sorted(SCHEMAS)))
    value = draw(VALID[schema].flatmap(broken) | json_values)
    return schema, value


STATE = {"format_version": 1, "lineage": "x", "serial": 0, "resources": {}}


@settings(max_examples=1500, deadline=None)
@given(candidate=candidates())
@example(("state", {**STATE, "serial": -1}))
@example(("state", {**STATE, "lineage": ""}))
@example(("state", {**STATE, "journal": {"a": {"address": "a", "started_at": "t"}}}))
def test_the_quick_check_never_passes_what_jsonschema_refuses(candidate):
    schema, value = candidate
    if plainly_valid(value, SCHEMAS[schema]):
        assert jsonschema.Draft202012Validator(SCHEMAS[schema]).is_valid(value)


@settings(max_examples=300, deadline=None)
@given(
    candidate=st.sampled_from(sorted(SCHEMAS)).flatmap(
        lambda schema: st.tuples(st.just(schema), VALID[schema])
    )
)
def test_the_quick_check_passes_records_as_surveyctl_writes_them(candidate):
    schema, value = candidate
    assert plainly_valid(value, SCHEMAS[schema])


def test_every_record_surveyctl_writes_passes_the_quick_check():
    survey = SurveyRecord(7, {"q1": "a"}, {"survey_title": "t"}, True, mod_on=12)
    group = GroupRecord("ref", [1, 2], {"survey_group_name": "g"})
    bare = SurveyRecord(8)

    for record, schema in ((survey, "survey"), (group, "group"), (bare, "survey")):
        assert plainly_valid(record.to_json(), SCHEMAS[schema])


def test_a_keyword_the_quick_check_does_not_know_is_left_to_jsonschema():
    assert not plainly_valid("abc", {"type": "string", "format": "email"})
    assert not plainly_valid({"a": 1}, {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})
    assert not plainly_valid([1], {"type": "array", "prefixItems": [{"type": "integer"}]})


def test_a_valid_state_is_read_without_asking_jsonschema(monkeypatch):
    # jsonschema takes about 0.2 ms a record, and 40 ms to load, before a plan's first read.
    asked = []
    monkeypatch.setattr(jsonschema, "Draft202012Validator", lambda schema: asked.append(schema))
    state = {**STATE, "resources": {"Survey/a": SurveyRecord(7, {"q1": "a"}).to_json()}}

    records.State.from_json(state, "bench.json")

    assert asked == []


def test_an_integral_float_is_left_to_jsonschema_which_takes_it_for_an_integer():
    assert not plainly_valid({"ps_survey_id": 7.0}, records._SURVEY_SCHEMA)
    record = SurveyRecord.from_json({"ps_survey_id": 7.0}, "bench.json", "resources.Survey/a")
    assert record.ps_survey_id == 7


def test_a_record_of_the_wrong_shape_is_refused_with_jsonschemas_message():
    with pytest.raises(StateError) as refused:
        SurveyRecord.from_json({"ps_survey_id": True}, "bench.json", "resources.Survey/a")

    assert str(refused.value) == (
        "bench.json: not a valid surveyctl state file at resources.Survey/a.ps_survey_id: "
        "True is not of type 'integer'"
    )
