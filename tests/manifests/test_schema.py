"""The manifest schema: types, required fields and unknown fields, worded for people."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from surveyctl.schemafiles import load_schema

from .conftest import make_program


def test_the_schema_is_valid_json_schema_2020_12():
    schema = load_schema("manifest.schema.json")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_unknown_field_is_an_error_with_a_suggestion(check, survey_yaml, line_of):
    text = survey_yaml("survey_tittle: Oops\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "spec: unknown field 'survey_tittle' (did you mean 'survey_title'?)."
    assert error.location.line == line_of(text, "survey_tittle")


def test_a_misspelt_required_field_is_one_error_at_the_misspelling(check, survey_yaml, line_of):
    # The required field is missing only because it is misspelt: "missing required field"
    # beside the "did you mean" would be a second error, at another line, for the one slip.
    text = survey_yaml().replace("live_url:", "live_urll:")
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "spec: unknown field 'live_urll' (did you mean 'live_url'?).",
            line_of(text, "live_urll"),
        )
    ]


def test_a_required_field_missing_beside_an_unknown_field_unlike_it_is_still_named(
    check, survey_yaml
):
    text = survey_yaml().replace("live_url:", "exit_link:")
    _, errors, _ = check(text)
    assert [e.summary for e in errors] == [
        "spec: missing required field 'live_url'.",
        "spec: unknown field 'exit_link'.",
    ]


def test_a_market_field_written_beside_its_spec_is_told_to_go_under_it(check, line_of):
    text = make_program(markets="\n    en_GB:\n      offer_price: 3")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec.markets.en_GB: unknown field 'offer_price', which belongs under "
        "spec.markets.en_GB.spec."
    )
    assert error.location.line == line_of(text, "offer_price: 3")


def test_a_survey_field_written_in_a_programs_spec_is_told_to_go_under_its_template(check):
    text = make_program().replace("  markets:", "  offer_price: 3\n  markets:")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec: unknown field 'offer_price', which belongs under spec.template."
    )


def test_a_group_field_written_beside_its_spec_is_told_to_go_under_it(check):
    text = (
        "kind: ExclusionGroup\nname: g\nexclusion_period: 30\n"
        "spec: {buyer_surveygroup_ref: g-ref, name: G, exclusion_period: 30, surveys: []}\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "The manifest: unknown field 'exclusion_period', which belongs under spec."
    )


def test_unknown_field_in_a_quota_names_its_path(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        quotas:
          - buyer_quota_id: a
            required_count: 10
            critera: []
        """
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert "spec.quotas[0]: unknown field 'critera' (did you mean 'criteria'?)" in error.summary
    assert error.location.line == line_of(text, "critera")


def test_every_unknown_field_of_a_mapping_is_named_on_its_own_line(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        quotas:
          - buyer_quota_id: a
            id: a
            required_count: 10
            critera: []
        """
    )
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        ("spec.quotas[0]: unknown field 'id'.", line_of(text, "id: a", 2)),
        (
            "spec.quotas[0]: unknown field 'critera' (did you mean 'criteria'?).",
            line_of(text, "critera"),
        ),
    ]


def test_a_survey_id_in_a_spec_is_said_to_be_the_services_not_a_typo(check, survey_yaml, line_of):
    text = survey_yaml("ps_survey_id: 5\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec: 'ps_survey_id' is assigned by the service on create and cannot be set: surveyctl "
        "keeps it in its state (to manage an existing survey, `surveyctl import` it)."
    )
    assert error.location.line == line_of(text, "ps_survey_id")


def test_a_read_only_field_of_the_services_answers_is_said_to_be_read_only(check, survey_yaml):
    _, errors, _ = check(survey_yaml("mod_on: 1767225600000\n"))
    (error,) = errors
    assert error.summary == (
        "spec: 'mod_on' is read-only: the service sets it and returns it in its answers."
    )


def test_a_survey_status_in_a_spec_points_at_surveyctl_status(check, survey_yaml):
    _, errors, _ = check(survey_yaml("ps_survey_status: 22\n"))
    (error,) = errors
    assert "spec: 'ps_survey_status' is not set in a manifest: `surveyctl status`" in (
        error.summary
    )


def test_a_quota_id_the_service_assigns_is_said_to_be_the_services(check, survey_yaml):
    text = survey_yaml(
        """\
        quotas:
          - buyer_quota_id: a
            ps_quota_id: 7f3e0c1a-0000-4000-8000-000000000000
            required_count: 10
            criteria: [{qualification_code: 211, condition_codes: ["111"]}]
        """
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith(
        "spec.quotas[0]: 'ps_quota_id' is assigned by the service on create and cannot be set"
    )


def test_wrong_type_names_the_field_the_type_and_the_line(check, survey_yaml, line_of):
    text = survey_yaml().replace("completes_required: 100", "completes_required: lots")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "spec.completes_required must be a whole number, not 'lots'."
    assert error.location.line == line_of(text, "completes_required")


def test_missing_required_field_is_an_error(check, survey_yaml, line_of):
    text = "\n".join(line for line in survey_yaml().splitlines() if "live_url" not in line)
    _, errors, _ = check(text + "\n")
    (error,) = errors
    assert error.summary == "spec: missing required field 'live_url'."
    assert error.location.line == line_of(text, "spec:")


UNITS = ": 311 for years, 312 for months or 321 for US dollars."


def test_a_range_without_units_names_the_unit_codes(check, survey_yaml, line_of):
    text = survey_yaml("qualifications:\n  - {attribute: Age, range_sets: [{from: 18, to: 34}]}\n")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec.qualifications[0].range_sets[0]: missing required field 'units': 311 for years, "
        "312 for months or 321 for US dollars."
    )
    assert error.location.line == line_of(text, "from: 18")


def test_required_count_below_zero_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        quotas:
          - {buyer_quota_id: a, required_count: -5, criteria: []}
        """
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "spec.quotas[0].required_count must be >= 0, not -5."
    assert error.location.line == line_of(text, "required_count")


def test_manifest_name_must_be_lowercase_with_dashes(check, survey_yaml):
    _, errors, _ = check(survey_yaml(name="Brand_Tracker"))
    assert "name is 'Brand_Tracker', which is not valid" in errors[0].summary
    assert errors[0].location.line == 2


def test_a_name_too_long_is_shown_closed_with_its_length_and_the_limit(check, survey_yaml):
    _, errors, _ = check(survey_yaml(name="a" * 64))
    assert errors[0].summary == (
        f"name is '{'a' * 35}...' (64 characters), which is not valid: lowercase letters, "
        "digits and dashes, 1 to 63 characters, no dash at either end."
    )


def test_ignore_changes_naming_a_field_the_service_assigns_says_so(check, survey_yaml):
    _, errors, _ = check(survey_yaml() + "lifecycle:\n  ignore_changes: [ps_survey_id]\n")
    (error,) = errors
    assert error.summary == (
        "lifecycle.ignore_changes[0]: 'ps_survey_id' is assigned by the service on create and "
        "cannot be set: surveyctl keeps it in its state (to manage an existing survey, "
        "`surveyctl import` it); ignore_changes names fields a spec sets."
    )


def test_ignore_changes_must_name_spec_fields(check, survey_yaml, line_of):
    text = survey_yaml() + "lifecycle:\n  ignore_changes: [offer_prize]\n"
    _, errors, _ = check(text)
    (error,) = errors
    assert "'offer_prize', which is not allowed (did you mean 'offer_price'?)" in error.summary
    assert error.location.line == line_of(text, "offer_prize")


def test_infinite_number_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        qualifications:
          - {qualification_code: 212, range_sets: [{from: 18, to: .inf, units: 311}]}
        """
    )
    _, errors, _ = check(text)
    assert any("must be a finite number" in e.summary for e in errors)
    assert all(e.location.line == line_of(text, ".inf") for e in errors)


def test_a_number_too_large_for_a_float_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        qualifications:
          - {qualification_code: 212, range_sets: [{from: 1.0e+999, to: 99, units: 311}]}
        """
    )
    _, errors, _ = check(text)
    finite = [e for e in errors if "must be a finite number" in e.summary]
    assert [e.summary for e in finite] == [
        "spec.qualifications[0].range_sets[0].from must be a finite number, not inf."
    ]
    assert finite[0].location.line == line_of(text, "1.0e+999")


def test_a_nan_where_text_belongs_is_one_error_that_asks_for_text(check, survey_yaml, line_of):
    text = survey_yaml("buyer_message: .nan\n")
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        ("spec.buyer_message must be text, not nan.", line_of(text, ".nan"))
    ]


def test_a_null_is_not_taken_for_a_nan_checked_before_it(check, survey_yaml, line_of):
    # An item found valid is remembered by its JSON, which writes a NaN as null: a NaN passes
    # the item's schema (its finiteness is the document's error), a null does not.
    nan = survey_yaml(
        "qualifications:\n  - {qualification_code: 212, range_sets: [{from: .nan, to: 99, "
        "units: 311}]}\n",
        name="first",
    )
    null = survey_yaml(
        "qualifications:\n  - {qualification_code: 212, range_sets: [{from: null, to: 99, "
        "units: 311}]}\n",
        name="second",
    )
    text = nan + "---\n" + null
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "spec.qualifications[0].range_sets[0].from must be a finite number, not nan.",
            line_of(text, ".nan"),
        ),
        (
            "spec.qualifications[0].range_sets[0].from must be a number, not empty.",
            line_of(text, "from: null"),
        ),
    ]


def test_integer_condition_codes_are_sent_as_text(check, survey_yaml):
    text = survey_yaml("qualifications:\n  - {qualification_code: 211, condition_codes: [111]}\n")
    state, errors, _ = check(text)
    assert errors == []
    body = state.surveys["test-survey"].body()
    assert body["qualifications"] == [{"qualification_code": 211, "condition_codes": ["111"]}]
    json.dumps(body)  # the body is plain JSON


def test_every_schema_error_of_a_document_is_reported(check, survey_yaml):
    text = survey_yaml().replace("expected_ir: 50", "expected_ir: high")
    text = text.replace("field_time: 7", "field_time: [7]")
    _, errors, _ = check(text)
    assert {e.summary.split(" ")[0] for e in errors} == {"spec.expected_ir", "spec.field_time"}


def test_a_qualification_needs_a_code_or_an_attribute(check, survey_yaml, line_of):
    text = survey_yaml('qualifications:\n  - {condition_codes: ["111"]}\n')
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "spec.qualifications[0] needs 'qualification_code' or 'attribute'."
    assert error.location.line == line_of(text, "condition_codes")


def test_errors_inside_criteria_name_the_full_path(check, survey_yaml, line_of):
    text = survey_yaml(
        """\
        quotas:
          - buyer_quota_id: a
            required_count: 10
            criteria:
              - {qualification_code: 211, condition_codes: ["111"]}
              - {qualification_code: 212, range_sets: [{from: 18, to: 34}]}
          - buyer_quota_id: b
            required_count: 10
            criteria:
              - {qualification_code: 211, condition_codes: ["111"]}
              - {qualification_code: 212, range_sets: [{from: 18, to: 34}]}
        """
    )
    _, errors, _ = check(text)
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            f"spec.quotas[0].criteria[1].range_sets[0]: missing required field 'units'{UNITS}",
            line_of(text, "range_sets", occurrence=1),
        ),
        (
            f"spec.quotas[1].criteria[1].range_sets[0]: missing required field 'units'{UNITS}",
            line_of(text, "range_sets", occurrence=2),
        ),
    ]


def test_exclusion_group_without_exclusion_period_is_an_error(check, line_of):
    text = (
        "kind: ExclusionGroup\nname: trackers\nspec:\n"
        "  buyer_surveygroup_ref: trackers-2026\n  name: Trackers\n  surveys: []\n"
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == "spec: missing required field 'exclusion_period'."
    assert error.location.line == line_of(text, "spec:")


def test_a_subscriber_email_the_api_takes_is_valid_in_a_manifest(check, survey_yaml):
    # The API takes one @ with text on both sides (ops@localhost), so `import` of such a
    # survey writes a manifest that validates.
    _, errors, _ = check(survey_yaml("subscriber_emails: [ops@localhost, ann@example.com]\n"))
    assert errors == []


def test_a_subscriber_email_the_api_refuses_is_said_in_words_at_its_line(
    check, survey_yaml, line_of
):
    text = survey_yaml('subscriber_emails: ["ops example.com"]\n')
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec.subscriber_emails[0] is 'ops example.com', which is not valid: An e-mail "
        "address: text, one @, text (no spaces), as the API takes it."
    )
    assert error.location.line == line_of(text, "subscriber_emails")


def test_a_market_that_is_no_locale_is_named_as_a_key_at_its_own_line(check, line_of):
    text = make_program(markets="\n    en-GB: {}")
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        "spec.markets: the key 'en-GB' is not valid: a locale in language_COUNTRY form, e.g. en_GB."
    )
    assert error.location.line == line_of(text, "en-GB")


def test_no_pattern_of_the_manifest_schema_is_shown_to_a_user_as_a_regular_expression():
    def patterns_without_words(node, path):
        if isinstance(node, dict):
            if "pattern" in node and "description" not in node:
                yield "/".join(path)
            for key, value in node.items():
                yield from patterns_without_words(value, [*path, str(key)])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from patterns_without_words(value, [*path, str(index)])

    assert list(patterns_without_words(load_schema("manifest.schema.json"), [])) == []
