"""Reading manifest files: every YAML problem is one diagnostic with file and line."""

from __future__ import annotations

from surveyctl.manifests import load_manifests


def test_duplicate_key_is_an_error_at_the_second_key(check, line_of):
    text = "kind: Survey\nname: a\nname: b\n"
    _, errors, _ = check(text)
    assert len(errors) == 1
    assert "Duplicate key 'name' (first given on line 2)" in errors[0].summary
    assert errors[0].location.line == 3


def test_invalid_yaml_is_an_error_with_its_line(check):
    _, errors, _ = check("kind: Survey\nname: [a, b\nspec: {}\n")
    assert len(errors) == 1
    assert errors[0].summary.startswith("Invalid YAML")
    assert errors[0].location.file.endswith("m.yaml")
    assert errors[0].location.line >= 2


def test_empty_document_is_an_error(check, survey_yaml, line_of):
    text = survey_yaml() + "---\n---\n" + survey_yaml(name="other")
    state, errors, _ = check(text)
    assert [e.summary for e in errors] == ["Document 2 is empty."]
    assert set(state.surveys) == {"test-survey", "other"}


def test_document_that_is_not_a_mapping_is_an_error(check):
    _, errors, _ = check("- kind: Survey\n")
    assert errors[0].summary == "Document 1 must be a mapping, not a list."
    assert errors[0].location.line == 1


def test_unknown_kind_suggests_the_closest(check):
    _, errors, _ = check("kind: Survy\nname: x\n")
    assert "Unknown kind 'Survy' (did you mean 'Survey'?)" in errors[0].summary
    assert errors[0].location.line == 1


def test_several_documents_per_file_are_read(check, survey_yaml):
    state, errors, _ = check(survey_yaml(name="one") + "---\n" + survey_yaml(name="two"))
    assert errors == []
    assert list(state.surveys) == ["one", "two"]


def test_non_utf8_bytes_are_an_error_naming_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"kind: Survey\nname: caf\xe9\n")
    _, diagnostics = load_manifests([path])
    (error,) = diagnostics.items
    assert "not UTF-8" in error.summary
    assert error.location.line == 2


def test_names_are_unique_per_kind_across_files(write, survey_yaml):
    write("a.yaml", survey_yaml(name="same"))
    second = write("sub/b.yaml", survey_yaml(name="same"))
    _, diagnostics = load_manifests([second.parent.parent])
    (error,) = [d for d in diagnostics if d.severity == "error"]
    assert "Survey 'same' is defined twice; first in" in error.summary
    assert error.location.file == str(second)
    assert error.location.line == 2


def test_folders_are_read_recursively_skipping_config_ci_and_hidden(write, survey_yaml):
    write("surveys/deep/one.yml", survey_yaml(name="one"))
    write("surveys/two.yaml", survey_yaml(name="two"))
    write("surveyctl.yaml", "environments: {}\n")
    write("ci/workflow.yaml", "on: push\njobs: {}\n")
    write(".github/workflows/x.yaml", "on: push\n")
    write("notes.txt", "not yaml")
    folder = write("marker.yaml", survey_yaml(name="three")).parent
    state, diagnostics = load_manifests([folder])
    assert not diagnostics.has_errors, [str(d) for d in diagnostics]
    assert sorted(state.surveys) == ["one", "three", "two"]


def test_a_missing_path_is_an_error(tmp_path):
    _, diagnostics = load_manifests([tmp_path / "nowhere"])
    assert diagnostics.has_errors
    assert "No such file or folder" in diagnostics.items[0].summary


def test_an_empty_folder_is_an_error(tmp_path):
    _, diagnostics = load_manifests([tmp_path])
    assert "No manifest files" in diagnostics.items[0].summary


def test_deep_nesting_is_an_error_not_a_crash(check):
    _, errors, _ = check("kind: Survey\nspec: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nests deeper than" in errors[0].summary
    assert errors[0].location.line == 2


def test_merge_keys_may_be_overridden(check, survey_yaml):
    text = survey_yaml(
        """\
        quotas:
          - &base {buyer_quota_id: a, required_count: 50, criteria: []}
          - {<<: *base, buyer_quota_id: b}
        """
    )
    state, errors, _ = check(text)
    assert errors == []
    assert [q.buyer_quota_id for q in state.surveys["test-survey"].quotas] == ["a", "b"]


def test_aliases_expanding_to_huge_documents_are_an_error(check):
    lines = ["kind: Survey", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    _, errors, _ = check("\n".join(lines) + "\n")
    (error,) = errors
    assert error.summary == "The YAML expands to too many values (repeated aliases?)."
    assert error.location.line == 1


def test_a_document_that_contains_itself_is_an_error(check):
    _, errors, _ = check("kind: Survey\nspec: &loop\n  inner: *loop\n")
    (error,) = errors
    assert error.summary == "Invalid YAML: found unconstructable recursive node."
    assert error.location.line == 2


def test_an_unclosed_quote_is_reported_where_the_quote_opens(check):
    text = 'kind: Survey\nname: x\nspec:\n  survey_title: "Brand tracker\n  expected_ir: 40\n'
    _, errors, _ = check(text)
    assert len(errors) == 1
    assert errors[0].summary == (
        "Invalid YAML: a quoted value starts here and its closing quote is missing."
    )
    assert (errors[0].location.line, errors[0].location.column) == (4, 17)


def test_a_quote_left_open_before_another_quote_is_named_with_the_line_it_opens(check):
    # The value reads on to the next quote, lines below, where the parser stops.
    text = (
        'kind: Survey\nname: x\nspec:\n  survey_title: "Coffee habits\n  field_time: 10\n'
        '  live_url: "https://survey.example.com/s"\n'
    )
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.endswith(
        "; the quoted value opened on line 4 runs on to this line: close its quote on line 4."
    )
    assert error.location.line == 6


def test_a_tab_in_the_indentation_is_called_a_tab(check):
    _, errors, _ = check("kind: Survey\nname: x\nspec:\n\tsurvey_title: x\n")
    assert len(errors) == 1
    assert "a tab character: YAML indents with spaces only" in errors[0].summary
    assert errors[0].location.line == 4


def test_a_key_indented_deeper_than_the_one_above_is_said_in_words_at_its_line(check):
    # PyYAML says "mapping values are not allowed in this context", naming no cause.
    _, errors, _ = check("kind: Survey\nname: x\nspec:\n  field_time: 10\n   expected_ir: 40\n")
    assert [(e.summary, e.location.line) for e in errors] == [
        (
            "Invalid YAML: a 'key: value' where only a value can be: this line is indented "
            "deeper than the key above it (so YAML reads it as the rest of that key's value), "
            "or a value holds ': ' and needs quotes.",
            5,
        )
    ]


def test_an_undefined_alias_is_named_with_its_field_and_line(check):
    text = "kind: Survey\nname: x\nspec:\n  survey_title: *typo\n"
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary == (
        'spec.survey_title: undefined alias "*typo": no anchor &typo comes before it in this '
        "document."
    )
    assert (error.location.line, error.location.column) == (4, 17)


def test_an_undefined_alias_in_a_list_suggests_the_anchor_defined(check):
    text = "kind: Survey\nname: x\nspec:\n  base: &base {a: 1}\n"
    text += "  quotas: [{criteria: [1, *bsae]}]\n"
    _, errors, _ = check(text)
    (error,) = errors
    assert error.summary.startswith('spec.quotas[0].criteria[1]: undefined alias "*bsae"')
    assert "(did you mean '*base'?)" in error.summary
