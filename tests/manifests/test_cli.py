"""`surveyctl validate` and `surveyctl render` driven as a user would, against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from surveyctl.catalog import Catalog

from .conftest import make_survey

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BAD = """\
kind: Survey
name: bad
spec:
  survey_title: Bad
  survey_category_code: 231
  survey_localization: en_US
  completes_required: many
  expected_ir: 50
  expected_loi: 10
  field_time: 7
  live_url: https://survey.example.com/s?tid=[%%transaction_id%%]
  qlc: {enable: true, multiple_quotas: {enable: true}}
"""


def test_examples_validate_clean_against_the_catalogue(run_cli):
    result = run_cli("validate", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    assert (
        "Valid: 18 surveys (12 of them from 1 program) and 9 exclusion groups in 8 files, "
        "checked against the attribute "
        "catalogue of environment 'local'." in result.stdout
    )
    assert "error" not in result.stdout


def test_invalid_manifest_exits_1_with_file_and_line(run_cli, project):
    (project / "bad.yaml").write_text(BAD)
    result = run_cli("validate", "bad.yaml")
    assert result.exit_code == 1
    assert "bad.yaml:7:3: error: spec.completes_required must be a whole number, not 'many'." in (
        result.stdout
    )
    assert "2 errors and 0 warnings in 1 file: the manifests are not valid." in result.stdout
    assert "Traceback" not in result.output


def test_json_output_lists_every_diagnostic(run_cli, project):
    (project / "bad.yaml").write_text(BAD.replace("many", "100"))
    result = run_cli("validate", "bad.yaml", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert report["error_count"] == 1 and report["warning_count"] == 0
    (diagnostic,) = report["diagnostics"]
    assert diagnostic == {
        "severity": "error",
        "summary": diagnostic["summary"],
        "file": "bad.yaml",
        "line": 12,
        "column": 9,
    }
    assert diagnostic["summary"].startswith("qlc.enable is true but the survey has no quotas")


def test_without_paths_the_configured_manifests_are_read(run_cli, project):
    config = project / "surveyctl.yaml"
    config.write_text("manifests: [surveys/]\n" + config.read_text())
    (project / "surveys").mkdir()
    (project / "surveys" / "bad.yaml").write_text(BAD)
    result = run_cli("validate")
    assert result.exit_code == 1
    assert "surveys/bad.yaml:7:3: error" in result.stdout.replace(str(project) + "/", "")


# 256 bytes and a suffix: longer than the name any common file system allows.
TOO_LONG = "a" * 256 + ".yaml"


@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_manifest_name_longer_than_the_system_allows_is_one_error_naming_it(run_cli, command):
    result = run_cli(command, "--offline", TOO_LONG)
    assert result.exit_code == 1
    assert f"error: Cannot read {TOO_LONG}: File name too long." in result.output
    assert "Traceback" not in result.output and "OSError" not in result.output


def test_a_configured_manifests_entry_longer_than_the_system_allows_is_one_error(run_cli, project):
    config = project / "surveyctl.yaml"
    config.write_text(f"manifests: [surveys/, {TOO_LONG}]\n" + config.read_text())
    (project / "surveys").mkdir()
    result = run_cli("validate", "--offline")
    assert result.exit_code == 1
    assert f"error: Cannot read {TOO_LONG}: File name too long." in result.stdout
    assert "Traceback" not in result.output and "OSError" not in result.output


def test_without_paths_or_configured_manifests_it_says_what_to_do(run_cli):
    result = run_cli("validate")
    assert result.exit_code == 1
    assert "no manifests given" in result.output


def test_offline_validation_opens_no_connection(run_cli, project, tmp_path):
    (project / "surveyctl.yaml").write_text(
        "environments:\n  dead: {host: 'http://127.0.0.1:9', api_key_env: SURVEYCTL_LOCAL_KEY}\n"
        "default_environment: dead\n"
    )
    result = run_cli("validate", "--offline", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    assert "not checked against any attribute catalogue (--offline)" in result.stdout


def test_render_of_the_interlocked_example_sums_to_its_total(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "media-habits-us")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert len(body["quotas"]) == 6
    assert sum(q["required_count"] for q in body["quotas"]) == 1000


def test_render_resolves_names_to_codes(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "brand-tracker-gb")
    body = json.loads(result.stdout)
    assert body["qualifications"][0] == {
        "qualification_code": 211,
        "condition_codes": ["111", "112"],
    }
    assert body["quotas"][0]["criteria"] == [
        {"qualification_code": 230, "condition_codes": ["117"]}
    ]


def test_rendered_bodies_are_accepted_by_the_marketplace(run_cli, api):
    result = run_cli("render", str(EXAMPLES))
    rendered = json.loads(result.stdout)
    assert {n for n in rendered["exclusion_groups"] if "[" not in n} == {"brand-trackers"}
    for name, body in rendered["surveys"].items():
        created = api.create_survey(body)
        assert created["survey_title"] == body["survey_title"], name
        assert len(created.get("quotas") or []) == len(body.get("quotas") or []), name


def test_render_of_an_exclusion_groups_name_prints_its_body(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "brand-trackers")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["buyer_surveygroup_ref"] == "brand-trackers-2026"
    assert body["surveys"] == ["brand-tracker-us", "brand-tracker-gb"]


def test_render_of_a_survey_and_a_group_prints_both_by_kind(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "brand-trackers", "--name",
                     "media-habits-us")  # fmt: skip
    assert result.exit_code == 0, result.output
    rendered = json.loads(result.stdout)
    assert list(rendered["surveys"]) == ["media-habits-us"]
    assert list(rendered["exclusion_groups"]) == ["brand-trackers"]


def test_render_offline_refuses_names_it_cannot_resolve(run_cli):
    result = run_cli("render", "--offline", str(EXAMPLES))
    assert result.exit_code == 1
    assert "Survey 'brand-tracker-gb' names attributes, which need the catalogue" in result.stderr
    assert result.stdout == ""


def test_render_offline_of_valid_manifests_does_not_call_them_invalid(run_cli):
    result = run_cli("render", "--offline", str(EXAMPLES))
    assert "not valid" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(
        "Nothing was rendered: the manifests are valid, but "
    )
    assert result.stderr.splitlines()[-1].endswith("render without --offline.")


def test_render_of_an_unknown_name_is_an_error(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "nope")
    assert result.exit_code == 1
    assert "no Survey or ExclusionGroup manifest or program member is named 'nope'" in (
        result.output
    )


def test_render_of_a_misspelt_name_suggests_the_closest_survey(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "media-habit")
    assert result.exit_code == 1
    assert result.stderr.endswith(
        "Error: no Survey or ExclusionGroup manifest or program member is named 'media-habit' "
        "(did you mean 'media-habits-us'?)\n"
    )


def test_render_names_every_name_that_matched_nothing(run_cli):
    result = run_cli("render", str(EXAMPLES), "--name", "nope", "--name", "media-habit")
    assert result.exit_code == 1
    assert result.stderr.endswith(
        "Error: no Survey or ExclusionGroup manifest or program member is named 'nope' or "
        "'media-habit' (did you mean 'media-habits-us'?)\n"
    )


def test_refresh_catalog_fetches_again(run_cli, project):
    run_cli("validate", str(EXAMPLES))
    cache = project / ".surveyctl" / "cache" / "catalog" / "local" / "en_US.json"
    first = json.loads(cache.read_text())["fetched_at"]
    run_cli("validate", str(EXAMPLES))
    assert json.loads(cache.read_text())["fetched_at"] == first
    run_cli("validate", "--refresh-catalog", str(EXAMPLES))
    assert json.loads(cache.read_text())["fetched_at"] > first


def test_validate_fetches_a_catalogue_cache_with_a_damaged_entry_again(run_cli, project):
    run_cli("validate", str(EXAMPLES))
    cache = project / ".surveyctl" / "cache" / "catalog" / "local" / "en_US.json"
    data = json.loads(cache.read_text())
    data["attributes"][0].pop("qualification_code")
    cache.write_text(json.dumps(data))
    result = run_cli("validate", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "qualification_code" in json.loads(cache.read_text())["attributes"][0]


def test_a_catalogue_cache_planted_in_the_project_does_not_change_the_codes_sent(run_cli, project):
    # The cache folder is in the project, where a pull request could commit a file giving
    # "Male" the code of Female; signed with a key other than the environment's, it is not read.
    survey = project / "gender.yaml"
    survey.write_text(make_survey("qualifications: [{attribute: Gender, answers: [Male]}]\n"))
    run_cli("validate", str(survey))
    cache = project / ".surveyctl" / "cache" / "catalog" / "local" / "en_US.json"
    data = json.loads(cache.read_text())
    gender = next(e for e in data["attributes"] if e["qualification_code"] == 211)
    for answer in gender["localizations"][0]["answers"]:
        swapped = {111: 112, 112: 111}
        answer["condition_code"] = swapped.get(answer["condition_code"], answer["condition_code"])
    data["signature"] = Catalog(lambda: None, "local", signing_key="guessed")._signature(data)
    cache.write_text(json.dumps(data))
    result = run_cli("render", str(survey))
    assert result.exit_code == 0, result.output
    (qualification,) = json.loads(result.stdout)["surveys"]["test-survey"]["qualifications"]
    assert qualification["condition_codes"] == ["111"]


MISSING_SIX = """\
kind: Survey
name: missing
spec:
  survey_title: Missing
  survey_category_code: 231
"""
FOUR_TYPOS = """\
kind: Survey
name: typos
spec:
  survey_title: Typos
  survey_category_code: 231
  survey_localization: en_US
  completes_required: 1000
  expected_ir: 40
  expected_loi: 12
  offer_price: 2.5
  field_time: 14
  live_urll: https://survey.example.com/s?tid=[%%transaction_id%%]
  qualifications:
    - {attribute: Gender, answers: [Mal, Femal]}
  quotas:
    - generate:
        id: "{gender}"
        interlock:
          gender:
            attribute: Gender
            cells:
              male: {answers: [Male], share: 0.48}
              female: {answers: [Femle], share: 0.42}
"""


def test_every_missing_required_field_is_reported_in_one_run(run_cli, project):
    (project / "missing.yaml").write_text(MISSING_SIX)
    result = run_cli("validate", "missing.yaml")
    assert result.exit_code == 1
    for field in ("survey_localization", "completes_required", "expected_ir", "expected_loi"):
        assert f"missing.yaml:3:1: error: spec: missing required field '{field}'." in result.stdout
    assert "6 errors" in result.stdout


def test_schema_shares_and_answer_typos_are_all_reported_in_one_run(run_cli, project):
    (project / "typos.yaml").write_text(FOUR_TYPOS)
    result = run_cli("validate", "typos.yaml")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert (
        "typos.yaml:12:3: error: spec: unknown field 'live_urll' (did you mean 'live_url'?)."
        in (lines)
    )
    assert not any("missing required field" in line for line in lines)
    # Each answer at its own place in the list, not at the start of the qualification.
    assert any("typos.yaml:14:37:" in line and "no answer 'Mal'" in line for line in lines)
    assert any("typos.yaml:14:42:" in line and "no answer 'Femal'" in line for line in lines)
    assert "typos.yaml:19:11: error: The shares of dimension 'gender' sum to 0.9, not 1." in lines
    assert any("typos.yaml:23:34:" in line and "no answer 'Femle'" in line for line in lines)


def test_a_schema_error_does_not_hide_a_rule_error_in_the_same_file(run_cli, project, line_of):
    text = make_survey("qlc: {enable: true, multiple_quotas: {enable: true}}\n").replace(
        "  expected_ir: 50\n", ""
    )
    (project / "both.yaml").write_text(text)
    result = run_cli("validate", "--offline", "both.yaml")
    assert result.exit_code == 1
    assert "both.yaml:3:1: error: spec: missing required field 'expected_ir'." in result.stdout
    qlc = line_of(text, "qlc:")
    assert f"both.yaml:{qlc}:9: error: qlc.enable is true but the survey has no quotas" in (
        result.stdout
    )
    assert "2 errors and 0 warnings in 1 file" in result.stdout
