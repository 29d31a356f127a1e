"""Names next to codes in every plan output, from the environment's attribute catalogue."""

from __future__ import annotations

import json

from .conftest import EMPLOYMENT, survey_manifest


def _named(attribute, code: str) -> str:
    answer = next(a for a in attribute.answers if a.condition_code == code)
    return f"{answer.local_text or answer.eng_text} ({code})"


def _employment_survey(attribute, codes: list[str]) -> dict:
    return survey_manifest(
        "tracker",
        qualifications=[
            {"qualification_code": 211, "condition_codes": ["111", "112"]},
            {"qualification_code": EMPLOYMENT, "condition_codes": codes},
        ],
    )


def test_a_changed_qualification_shows_attribute_and_answer_names(run_cli, manifests, attribute):
    employment = attribute(EMPLOYMENT)
    first, second = (a.condition_code for a in employment.answers[:2])
    manifests.write(_employment_survey(attribute, [first, second]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(_employment_survey(attribute, [first]))
    result = run_cli("plan", "manifests")
    expected = (
        f"~ qualifications[{employment.desc}].answers: {_named(employment, first)}, "
        f"{_named(employment, second)} -> {_named(employment, first)}"
    )
    assert expected in result.stdout


def _aged(low: int, high: int) -> dict:
    age = {"qualification_code": 212, "range_sets": [{"from": low, "to": high, "units": 311}]}
    return survey_manifest(
        "tracker",
        qualifications=[{"qualification_code": 211, "condition_codes": ["111", "112"]}, age],
    )


def test_a_changed_age_range_shows_the_ranges_in_years(run_cli, manifests):
    manifests.write(_aged(18, 99))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(_aged(21, 45))
    result = run_cli("plan", "manifests")
    assert "    ~ qualifications[Age].range_sets: 18-99 years -> 21-45 years" in (
        result.stdout.splitlines()
    )


def test_a_create_shows_every_qualification_and_one_line_per_quota(run_cli, manifests, attribute):
    employment = attribute(EMPLOYMENT)
    codes = [a.condition_code for a in employment.answers]
    manifests.write(
        survey_manifest(
            "tracker",
            qualifications=[
                {"qualification_code": 211, "condition_codes": ["111", "112"]},
                {
                    "qualification_code": 212,
                    "range_sets": [{"from": 18, "to": 99, "units": 311}],
                },
                {"qualification_code": EMPLOYMENT, "condition_codes": codes},
            ],
        )
    )
    result = run_cli("plan", "manifests")
    lines = result.stdout.splitlines()
    assert "    + qualifications[Gender].answers: Male (111), Female (112)" in lines
    assert "    + qualifications[Age].range_sets: 18-99 years" in lines
    every_answer = ", ".join(_named(employment, code) for code in codes)
    assert f"    + qualifications[{employment.desc}].answers: {every_answer}" in lines
    assert "    + quotas[male]: 100 completes; Gender: Male (111)" in lines
    assert "    + quotas[female]: 100 completes; Gender: Female (112)" in lines
    assert "..." not in result.stdout


def test_offline_plan_shows_codes_alone(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    result = run_cli("plan", "manifests", "--offline")
    assert result.exit_code == 0, result.stderr
    assert "    + qualifications[211].condition_codes: 111, 112" in result.stdout
    assert "    + quotas[male]: 100 completes; 211: 111" in result.stdout
    assert "Male" not in result.stdout


def test_offline_plan_of_a_manifest_naming_attributes_is_refused_with_its_file(run_cli, manifests):
    manifests.write(
        survey_manifest(
            "tracker", qualifications=[{"attribute": "Gender", "answers": ["Male", "Female"]}]
        )
    )
    result = run_cli("plan", "manifests", "--offline")
    assert result.exit_code == 1
    assert "tracker.yaml:1:1: error: Survey 'tracker' names attributes" in result.stderr
    assert "Traceback" not in result.stderr


def test_offline_plan_of_valid_manifests_naming_attributes_does_not_send_to_validate(
    run_cli, manifests
):
    manifests.write(
        survey_manifest(
            "tracker", qualifications=[{"attribute": "Gender", "answers": ["Male", "Female"]}]
        )
    )
    assert run_cli("validate", "manifests", "--offline").exit_code == 0
    result = run_cli("plan", "manifests", "--offline")
    assert result.stderr.splitlines()[-1] == (
        "Error: 1 survey(s) name attributes, which --offline leaves unresolved; nothing was "
        "planned: plan without --offline"
    )


def test_json_plan_carries_the_names_table_and_each_change_in_words(run_cli, manifests, attribute):
    employment = attribute(EMPLOYMENT)
    first, second = (a.condition_code for a in employment.answers[:2])
    manifests.write(_employment_survey(attribute, [first, second]))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    manifests.write(_employment_survey(attribute, [first]))
    data = json.loads(run_cli("plan", "manifests", "--format", "json").stdout)
    names = data["labels"]["en_US"][str(EMPLOYMENT)]
    assert names["name"] == employment.desc
    assert set(names["answers"]) == {first, second}
    (change,) = data["resources"][0]["changes"]
    assert change["new"] == [first]
    assert change["display"] == {
        "path": f"qualifications[{employment.desc}].answers",
        "old": f"{_named(employment, first)}, {_named(employment, second)}",
        "new": _named(employment, first),
    }


def test_a_saved_plan_keeps_its_names_for_apply(run_cli, manifests, project):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("plan", "manifests", "--out", "change.plan").exit_code == 0
    saved = json.loads((project / "change.plan").read_text(encoding="utf-8"))
    assert saved["plan"]["labels"]["en_US"]["211"]["answers"] == {"111": "Male", "112": "Female"}
    applied = run_cli("apply", "change.plan")
    assert applied.exit_code == 0, applied.stderr
    assert "+ quotas[female]: 100 completes; Gender: Female (112)" in applied.stdout


def test_a_changed_quota_criterion_names_attribute_and_answers(run_cli, manifests):
    manifests.write(survey_manifest("tracker"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    edited = survey_manifest("tracker")
    edited["spec"]["quotas"][0]["criteria"][0]["condition_codes"] = ["111", "112"]
    manifests.write(edited)
    result = run_cli("plan", "manifests")
    assert "quotas will be updated (1 quota PUT)" in result.stdout
    assert (
        "    ~ quotas[male].criteria[Gender].answers: Male (111) -> Male (111), Female (112)"
        in result.stdout.splitlines()
    )
