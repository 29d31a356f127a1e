"""The one rule for resource names and addresses, shared by every command and the schema."""

from __future__ import annotations

import pytest

from surveyctl.resources import (
    NAME_PATTERN,
    SURVEY_NAME_PATTERN,
    Member,
    ResourceNameError,
    check_name,
    check_resource_name,
    member_of,
    split_address,
)
from surveyctl.schemafiles import load_schema


def _name_patterns(node, keys: tuple[str, ...] = ("name",)) -> list[str]:
    """Every pattern of a property named one of `keys` in the manifest schema."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and isinstance(value, dict):
                pattern = value.get("pattern") or (value.get("items") or {}).get("pattern")
                if pattern:
                    found.append(pattern)
            found.extend(_name_patterns(value, keys))
    elif isinstance(node, list):
        for item in node:
            found.extend(_name_patterns(item, keys))
    return found


def test_the_manifest_schema_uses_the_same_name_rule_as_every_command():
    patterns = _name_patterns(load_schema("manifest.schema.json"))
    assert patterns, "the schema names no pattern for manifest names"
    assert set(patterns) == {NAME_PATTERN}


def test_an_exclusion_groups_surveys_take_survey_and_program_member_names():
    patterns = _name_patterns(load_schema("manifest.schema.json"), ("surveys",))
    assert set(patterns) == {SURVEY_NAME_PATTERN}


@pytest.mark.parametrize("name", ["a", "brand-tracker-us", "old--tracker", "x" * 63, "2026"])
def test_names_the_schema_accepts_are_accepted(name):
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["Old Tracker", "-lead", "trail-", "x" * 64, "", "a_b", "a/b"])
def test_names_the_schema_refuses_are_refused_with_the_rule(name):
    with pytest.raises(ResourceNameError, match="lowercase letters, digits and dashes"):
        check_name(name)


def test_an_address_names_its_kind():
    assert split_address("ExclusionGroup/brand-trackers") == ("ExclusionGroup", "brand-trackers")


def test_an_unknown_kind_is_not_an_address():
    with pytest.raises(ResourceNameError, match="Survey/<name> or ExclusionGroup/<name>"):
        split_address("Quota/male")


@pytest.mark.parametrize("name", ["brand-tracker[en_GB,2026-11]", "t[de_DE,7]", "plain"])
def test_a_resource_may_be_named_as_a_program_member(name):
    assert check_resource_name(name) == name


@pytest.mark.parametrize(
    "name", ["Brand[en_GB,1]", "t[en_gb,1]", "t[en_GB]", "t[en_GB,-1]", "t[en_GB,1] ", "t[,1]"]
)
def test_a_member_name_follows_the_rule_of_its_parts(name):
    with pytest.raises(ResourceNameError, match=r"\[market,wave\]"):
        check_resource_name(name)


def test_a_member_name_is_not_a_manifest_name():
    with pytest.raises(ResourceNameError):
        check_name("brand-tracker[en_GB,2026-11]")


def test_a_member_name_names_its_program_market_and_wave():
    assert member_of("brand-tracker[en_GB,2026-11]") == Member("brand-tracker", "en_GB", "2026-11")
    assert member_of("brand-tracker") is None
